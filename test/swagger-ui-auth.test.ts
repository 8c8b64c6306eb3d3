// Swagger UI's "Try it out" -> "Execute" with the document's default examples on the example
// project's account, admin, file and health routes, in Debian's chromium: sign-up and login as the
// example account, then "Authorize" with the token login answered for the routes that need a
// signed-in user (change-password, request-verification, logout), and the service token for the admin
// routes. The download takes the stored name of the seeded file (no static example can know it).
// Five routes cannot succeed with any static example: they take a token only an email, an earlier
// sign-in or another issuer hands out, or a secret; they are listed, and every other operation of
// the document is run here or by test/swagger-ui-<table>.test.ts.
import t from 'tap'
import { adminToken } from './helper.js'
import { launch } from './fixtures/panel/browser.js'
import { authorize, expect2xx, openUi, serveExample } from './fixtures/openapi/swagger-ui.js'

const TABLE_OPS = ['select', 'select_post', 'list', 'list_post', 'view', 'insert', 'update', 'edit', 'delete']
const TABLES = ['users', 'posts', 'comments', 'guestbook']
/** Each needs a one-time value nobody can put in a document. */
const NEEDS_A_LIVE_SECRET = {
  users_auth_refresh_token: 'a refresh token from an earlier sign-in',
  users_auth_confirm_password_reset: 'the token of a reset email',
  users_auth_confirm_verification: 'the token of a verification email',
  users_auth_login_token: 'a JWT from a trusted external issuer (the example trusts none)',
  admin_login: 'the service token or an admin password (a secret)'
}

t.test('account, admin, file and health routes succeed with their default examples', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const served = await serveExample(t)
  const { page, errors } = await openUi(t, browser, served.origin)
  const run = async (operationId: string, prepare?: Parameters<typeof expect2xx>[3]) => {
    ran.push(operationId)
    return await expect2xx(t, page, operationId, prepare)
  }
  const ran: string[] = []

  await run('health')
  const signUp = JSON.parse(await run('users_auth_sign_up'))
  t.equal(signUp.record?.email, 'grace@example.com', 'sign-up created the example account')
  const login = JSON.parse(await run('users_auth_login'))
  t.equal(login.record?.id, signUp.record?.id, 'login with the example credentials')

  await authorize(page, login.token)
  await run('users_auth_change_password')
  await run('users_auth_request_verification')
  await run('users_auth_request_password_reset')
  await run('auth_logout')
  await run('users_auth_logout')

  await authorize(page, adminToken)
  for (const op of ['admin_settings', 'admin_setup_db', 'admin_migrations', 'admin_migrations_apply']) await run(op)
  await run('files_download', async (block) => {
    await block.locator('tr[data-param-name="path"] input').fill(served.photo)
  })

  // Every operation of the document is run by one of the Swagger UI tests, or listed above. The
  // realtime routes (an event stream and its subscriptions) have tests of their own.
  const doc = await (await fetch(`${served.api}/doc`)).json()
  const all = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId as string))
    .filter((id) => !/^(get|post)_realtime$/.test(id)).sort()
  const covered = [...ran, ...Object.keys(NEEDS_A_LIVE_SECRET), ...TABLES.flatMap((table) => TABLE_OPS.map((op) => `${table}_${op}`))].sort()
  t.same(all, covered, 'no operation is left out')
  t.same(errors, [], 'no uncaught error in the page')
})
