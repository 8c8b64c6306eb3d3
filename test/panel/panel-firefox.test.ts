// The admin panel in Firefox: Debian's firefox-esr driven by playwright-core over WebDriver BiDi
// (channel "moz-firefox", the browser as installed, nothing downloaded). The core flows by
// accessible names: sign-in, a table with typed values, filter, sort, a record created (with a file),
// a validation error, edited and deleted, an action run, sign-out. When firefox-esr is not installed
// the test is reported as skipped (CI installs only chromium; the Chromium tests are the full suite).
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { firefox } from 'playwright-core'
import { adminToken } from '../helper.js'
import { ARTIFACTS } from '../fixtures/panel/browser.js'
import { call, column, notes, row, seed, serve } from '../fixtures/panel/helpers.js'

function firefoxPath (): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v firefox-esr || command -v firefox'], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

const executablePath = firefoxPath()

t.test('Firefox: sign-in, table, filter, sort, create, validation, edit, delete, action, sign-out', { skip: executablePath === undefined ? 'firefox-esr is not installed' : false }, async (t) => {
  const browser = await firefox.launch({ channel: 'moz-firefox', executablePath, headless: true })
  t.teardown(() => browser.close())
  const served = await serve(t)
  await seed(served)
  const context = await browser.newContext({ viewport: { width: 1200, height: 760 } })
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const requests: string[] = []
  const errors: string[] = []
  page.on('request', (r) => { requests.push(r.url()) })
  page.on('pageerror', (e) => { errors.push(e.message) })
  await page.goto(served.panel)

  await page.getByLabel('Token or password').fill('wrong')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor()
  await page.getByLabel('Token or password').fill(adminToken)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  await page.getByText('3 records').waitFor()
  t.match(await row(page, 'alpha').textContent(), /2024-05-06 07:08:09 UTC/, 'typed values render')

  await page.getByLabel('Filter').fill('priority > 1')
  await page.getByLabel('Filter').press('Enter')
  await page.getByText('1 record', { exact: true }).waitFor()
  await page.getByLabel('Filter').fill('')
  await page.getByLabel('Filter').press('Enter')
  await page.getByText('3 records').waitFor()
  await page.getByRole('button', { name: 'priority', exact: true }).click()
  await page.locator('th[aria-sort="ascending"]').waitFor()
  t.same(await column(page, 'priority'), ['0', '1', '3'], 'filter and sort')

  await page.getByRole('button', { name: 'New record' }).click()
  const dialog = page.getByRole('dialog', { name: 'New record in notes' })
  await dialog.getByRole('button', { name: 'Save' }).click()
  await dialog.getByRole('alert').filter({ hasText: 'Validation Error' }).waitFor()
  t.equal(await dialog.getByLabel('title').getAttribute('aria-invalid'), 'true', 'a validation error at its field')
  await dialog.getByLabel('title').fill('from firefox')
  await dialog.getByLabel('done').check()
  await dialog.getByLabel('due').fill('2025-03-04')
  await dialog.getByLabel('meta').fill('{"browser": "firefox"}')
  await dialog.getByLabel('attachment').setInputFiles({ name: 'ff.txt', mimeType: 'text/plain', buffer: Buffer.from('sent by firefox') })
  await dialog.getByRole('button', { name: 'Save' }).click()
  await page.getByText('4 records').waitFor()
  const created = (await notes(served)).find((n) => n.title === 'from firefox')
  t.match(created, { done: true, due: '2025-03-04T00:00:00.000Z', meta: { browser: 'firefox' }, attachment: /^ff_.*\.txt$/ }, 'created with its types and file')

  await row(page, 'from firefox').getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('dialog').getByLabel('priority').fill('5')
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'Record saved.' }).waitFor()
  t.match((await notes(served)).find((n) => n.title === 'from firefox'), { priority: 5 }, 'edited')
  await row(page, 'from firefox').getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('dialog', { name: 'Delete record?' }).getByRole('button', { name: 'Delete' }).click()
  await page.getByText('3 records').waitFor()
  t.notOk((await notes(served)).some((n) => n.title === 'from firefox'), 'deleted after the confirmation')

  await page.getByRole('link', { name: 'Actions' }).click()
  const count = page.getByRole('article', { name: 'count_notes' })
  await count.getByRole('button', { name: 'Run' }).click()
  await count.getByRole('status').filter({ hasText: '"n": 3' }).waitFor()
  t.match(await count.getByRole('status').textContent(), /"n": 3/, 'an action runs and shows its result')

  await page.reload()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('Token or password').waitFor()
  t.equal((await call(served, '/health')).status, 200)
  t.same(requests.filter((u) => !u.startsWith(`${served.origin}/`) && !u.startsWith('blob:') && !u.startsWith('data:')), [], 'no request left the origin')
  t.same(errors, [], 'no uncaught exception')
  // Last: the driver's screenshot injects a style element, which the panel's CSP reports.
  await page.screenshot({ path: `${ARTIFACTS}/firefox-sign-in.png` })
})
