// The panel's Backups page in a real browser (see test/panel/panel.test.ts): the superadmin backs up,
// sees the backup listed, downloads and deletes it; a viewer gets the page's note, no list and no
// button that works (the server refuses them anyway).
import t from 'tap'
import { adminToken } from '../helper.js'
import { VIEWER_PASSWORD } from '../fixtures/panel/config.js'
import { launch, openPanel, signIn } from '../fixtures/panel/browser.js'
import { seed, serve } from '../fixtures/panel/helpers.js'

const browser = await launch(t)

t.test('superadmin: back up, list, download, delete; viewer: refused', { skip: browser === undefined }, async (t) => {
  const served = await serve(t)
  await seed(served)
  const { page } = await openPanel(t, browser!, served.panel)
  await signIn(page, adminToken)
  await page.getByRole('link', { name: 'Backups' }).click()
  await page.getByRole('heading', { name: 'Backups', level: 2 }).waitFor()
  await page.getByText('No backup yet.').waitFor()
  t.match(await page.getByText('No schedule').textContent(), /backups are taken on demand\. Keeping the newest 7\./)

  await page.getByRole('button', { name: 'Back up now' }).click()
  await page.getByRole('status').getByText(/^Stored fastbase-/).waitFor()
  const rows = page.locator('table.backups tbody tr')
  await rows.first().waitFor()
  t.equal(await rows.count(), 1, 'the new backup is listed')
  const name = await rows.first().locator('td').nth(1).textContent()
  t.match(name, /^fastbase-\d{8}T\d{9}Z-[0-9a-f]{6}$/)
  t.match(await page.getByText('Last stored:').textContent(), /Last stored: \d{4}-\d\d-\d\d/)

  const [saved] = await Promise.all([page.waitForEvent('download'), rows.first().getByRole('button', { name: 'Download' }).click()])
  t.equal(saved.suggestedFilename(), `${name}.tar.gz`, 'downloaded under its name')

  await rows.first().getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
  await page.getByText('No backup yet.').waitFor()
  t.equal(await rows.count(), 0, 'deleted: no backup listed any more')

  const viewer = await openPanel(t, browser!, served.panel)
  await signIn(viewer.page, VIEWER_PASSWORD)
  await viewer.page.getByRole('link', { name: 'Backups' }).click()
  await viewer.page.getByText('Only the superadmin can see and make backups.').waitFor()
  t.ok(await viewer.page.getByRole('button', { name: 'Back up now' }).isDisabled(), 'a viewer cannot back up')
  t.equal(await viewer.page.locator('table.backups').count(), 0, 'and sees no list')
})
