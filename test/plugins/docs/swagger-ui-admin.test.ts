// Swagger UI's "Try it out" -> "Execute" with the document's default examples on the example
// project's admin routes and the file download, in Debian's chromium, authorized with the service
// token. The download takes the seeded file's stored name (random: no static example can know it).
// Eight routes cannot succeed with any static example (NEEDS_A_LIVE_SECRET): they take a token only
// an email, an earlier sign-in or another issuer hands out, or a secret. This file also checks that
// every other operation of the document is run by one of the Swagger UI test files.
import t from 'tap'
import { adminToken } from '../../helper.js'
import { launch } from '../../fixtures/panel/browser.js'
import { ACCOUNT_OPS, ADMIN_OPS, BACKUP_OPS, NEEDS_A_LIVE_SECRET, TABLES, TABLE_OPS, authorize, expect2xx, openUi, serveExample } from '../../fixtures/openapi/swagger-ui.js'

t.test('admin routes and the download succeed with their default examples', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const served = await serveExample(t)
  const { page, errors } = await openUi(t, browser, served.origin)
  await authorize(page, adminToken)
  for (const op of ADMIN_OPS.filter((op) => op !== 'files_download')) await expect2xx(t, page, op)
  await expect2xx(t, page, 'files_download', async (block) => {
    await block.locator('tr[data-param-name="path"] input').fill(served.photo)
  })
  for (const op of BACKUP_OPS.slice(0, 3)) await expect2xx(t, page, op)
  const listed = await (await fetch(`${served.api}/backups`, { headers: { authorization: `Bearer ${adminToken}` } })).json() as { backups: Array<{ name: string }> }
  for (const op of BACKUP_OPS.slice(3)) {
    await expect2xx(t, page, op, async (block) => {
      await block.locator('tr[data-param-name="name"] input').fill(listed.backups[0].name)
    })
  }

  // The realtime routes (an event stream and its subscriptions) have tests of their own.
  const doc = await (await fetch(`${served.api}/doc`)).json()
  const all = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId as string))
    .filter((id) => !/^realtime_(stream|subscribe)$/.test(id)).sort()
  const covered = [...ACCOUNT_OPS, ...ADMIN_OPS, ...BACKUP_OPS, ...Object.keys(NEEDS_A_LIVE_SECRET), ...TABLES.flatMap((table) => TABLE_OPS.map((op) => `${table}_${op}`))].sort()
  t.same(all, covered, 'every operation of the document is run by a Swagger UI test, or needs a live secret')
  t.same(errors, [], 'no uncaught error in the page')
})
