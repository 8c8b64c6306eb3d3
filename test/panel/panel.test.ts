// The admin panel in a real browser (Debian's chromium via playwright-core), against a fastbase
// started here with its own config (test/fixtures/panel/config.ts), by accessible names only: what
// the panel serves, the superadmin's whole tour (sign-in and sign-out, tables with typed values,
// filter, sort, downloads, records with the API's errors, actions, settings, migrations). Roles,
// migrations, expiry and keyboard use: test/panel/panel-roles.test.ts; load: test/panel/panel-load.test.ts.
// Every page asserts it never requested another origin and logged no error.
// The superadmin's tour runs on SQLite and PostgreSQL (when FASTBASE_TEST_PG_URL is set); the
// other tests on SQLite only: the panel is a client of the HTTP API, which the API tests cover on both.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import Fastify from 'fastify'
import fastbase from '../../app.js'
import { adminToken, forEachDialect, freshDir } from '../helper.js'
import { EDITOR_PASSWORD, VIEWER_PASSWORD, panelConfig } from '../fixtures/panel/config.js'
import { launch, openPanel, screenshot, signIn } from '../fixtures/panel/browser.js'
import { call, clean, column, notes, row, seed, serve, XSS_TITLE } from '../fixtures/panel/helpers.js'

const browser = await launch(t)

t.test('the panel is self-contained, served with a strict CSP, and never writes HTML from data', async (t) => {
  const served = await serve(t)
  const res = await fetch(served.panel)
  t.equal(res.status, 200)
  const csp = res.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, none inline')
  t.match(csp, /connect-src 'self'/)
  t.equal(res.headers.get('x-content-type-options'), 'nosniff')
  const html = await res.text()
  t.notMatch(html, /(src|href)="(https?:)?\/\//, 'no external asset in index.html')
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
  t.notMatch(html, /\sstyle=|<style/, 'no inline style')
  t.match(res.headers.get('content-type'), /text\/html/)
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)])
  const sources = files(join(import.meta.dirname, '..', '..', 'panel')).filter((f) => f.endsWith('.js'))
  t.ok(sources.length >= 8, 'the panel is a handful of ES modules')
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort()
  // And the built fastbase/client the panel's calls go through (served at client/): every module its entry reaches.
  const clientDir = join(import.meta.dirname, '..', '..', 'dist', 'lib', 'client')
  const reached = new Set<string>()
  const walk = (name: string): void => {
    if (reached.has(name)) return
    reached.add(name)
    for (const m of readFileSync(join(clientDir, name), 'utf8').matchAll(/from '\.\/([\w-]+\.js)'/g)) walk(m[1])
  }
  walk('index.js')
  const expected = [...sources.map((f) => f.split('/panel/')[1]), ...[...reached].map((f) => `client/${f}`)].sort()
  t.same(preloaded, expected, 'index.html preloads every module (one round trip, not one per import level)')
  for (const file of sources) {
    const text = readFileSync(file, 'utf8')
    t.notMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/, `${file.split('/panel/')[1]} builds DOM nodes, never HTML strings`)
    t.notMatch(text, /https?:\/\//, `${file.split('/panel/')[1]} names no other origin`)
  }
  const moduleRes = await fetch(`${served.origin}/panel/app.js`)
  t.match(moduleRes.headers.get('content-type'), /javascript/)
  t.match(moduleRes.headers.get('content-security-policy'), /default-src 'none'/)
})

t.test('with a custom API prefix the panel is told where the API is', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastbase, { config: panelConfig(), databaseUrl: `sqlite:${join(freshDir(t), 'db.sqlite')}`, dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/custom/v2' })
  const page = await app.inject({ method: 'GET', url: '/panel/' })
  t.match(page.body, /<meta name="fastbase-api" content="\/custom\/v2">/)
  t.equal((await app.inject({ method: 'GET', url: '/custom/v2/health' })).statusCode, 200, 'the API is there')
})

forEachDialect(t, 'superadmin: sign-in, tables, records, actions, migrations, settings, sign-out', async (t, dialect) => {
  if (browser === undefined) return t.plan(0, 'chromium is not installed')
  const served = await serve(t, dialect)
  await seed(served)
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel

  await t.test('a wrong password shows an error and stays signed out', async (t) => {
    await page.getByLabel('Token or password').waitFor()
    await screenshot(page, 'sign-in')
    await page.getByLabel('Token or password').fill('not-the-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    const alert = page.getByRole('alert').filter({ hasText: 'Sign-in failed' })
    await alert.waitFor()
    t.match(await alert.textContent(), /not the service token or an admin password/)
    t.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0, 'no Sign out: still signed out')
    t.equal(await page.getByRole('navigation').count(), 0, 'no navigation before sign-in')
  })

  await t.test('the service token signs in as superadmin; a reload stays signed in', async (t) => {
    await signIn(page, adminToken)
    t.match(await page.getByText('Signed in as').textContent(), /superadmin/)
    const nav = page.getByRole('navigation', { name: 'Panel' })
    for (const name of ['notes', 'users', 'Actions', 'Migrations', 'Settings']) t.equal(await nav.getByRole('link', { name, exact: true }).count(), 1, `navigation has ${name}`)
    await page.getByRole('heading', { name: 'notes', level: 2 }).waitFor()
    const stored = await page.evaluate(() => [sessionStorage.length, localStorage.length])
    t.same(stored, [1, 0], 'the token is in sessionStorage, nothing in localStorage')
    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.equal(await page.getByLabel('Token or password').count(), 0, 'no sign-in form after the reload')
  })

  await t.test('a table: a header per field, values by type, the total, a file download', async (t) => {
    await page.getByRole('link', { name: 'notes', exact: true }).click()
    await page.getByText('3 records').waitFor()
    for (const name of ['id', 'created', 'updated', 'title', 'done', 'priority', 'score', 'due', 'status', 'meta', 'attachment', 'internal']) {
      t.equal(await page.getByRole('columnheader', { name, exact: true }).count(), 1, `column ${name}`)
    }
    const alpha = row(page, 'alpha')
    const text = await alpha.textContent()
    t.match(text, /true/, 'bool as true')
    t.match(text, /2024-05-06 07:08:09 UTC/, 'date readable, in UTC')
    t.match(text, /\{"tags":\["x","y"\]\}/, 'json as JSON text')
    t.match(text, /2\.5/)
    t.match(text, /staff only/, 'an admin sees noSelect fields')
    t.match(await row(page, 'beta').textContent(), /null/, 'null shown as null')
    t.equal(await page.evaluate(() => (window as any).__xss), undefined, 'a title holding markup did not run')
    t.equal(await row(page, XSS_TITLE).count(), 1, 'it shows as text')

    const link = alpha.getByRole('link', { name: /^hello_.*\.txt$/ })
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    t.match(download.suggestedFilename(), /^hello_.*\.txt$/)
    t.equal(readFileSync((await download.path())!, 'utf8'), 'hello from the panel test', 'the download carries the token and the file')
    await screenshot(page, 'table')
  })

  await t.test('filter (Enter applies, errors shown) and sorting by a column header', async (t) => {
    const filter = page.getByLabel('Filter')
    await filter.fill('priority > 1')
    await filter.press('Enter')
    await page.getByText('1 record', { exact: true }).waitFor()
    t.same(await column(page, 'title'), ['alpha'])
    await filter.fill('title ==')
    await filter.press('Enter')
    const error = page.getByRole('alert').filter({ hasText: 'Invalid where' })
    await error.waitFor()
    t.match(await error.textContent(), /Invalid where: .*position/, 'the API error is shown')
    t.equal(await filter.getAttribute('aria-invalid'), 'true')
    await filter.fill('')
    await filter.press('Enter')
    await page.getByText('3 records').waitFor()

    await page.getByRole('columnheader', { name: 'priority' }).click()
    await page.locator('th[aria-sort="ascending"]').waitFor()
    t.same(await column(page, 'priority'), ['0', '1', '3'], 'ascending')
    await page.getByRole('button', { name: 'priority', exact: true }).click()
    await page.locator('th[aria-sort="descending"]').waitFor()
    t.same(await column(page, 'priority'), ['3', '1', '0'], 'descending')
    t.match(page.url(), /order=-priority/, 'the sort is in the URL, so a reload keeps it')
  })

  await t.test('New record: typed inputs; Save creates', async (t) => {
    await page.getByRole('button', { name: 'New record' }).click()
    const dialog = page.getByRole('dialog', { name: 'New record in notes' })
    await dialog.waitFor()
    t.equal(await dialog.getByLabel('done').getAttribute('type'), 'checkbox')
    t.equal(await dialog.getByLabel('priority').getAttribute('type'), 'number')
    t.equal(await dialog.getByLabel('score').getAttribute('type'), 'number')
    t.equal(await dialog.getByLabel('due').getAttribute('type'), 'date')
    t.equal(await dialog.getByLabel('meta').evaluate((e) => e.tagName), 'TEXTAREA')
    t.equal(await dialog.getByLabel('attachment').getAttribute('type'), 'file')
    t.equal(await dialog.getByLabel('status').evaluate((e) => e.tagName), 'SELECT')
    for (const name of ['id', 'created', 'updated']) t.equal(await dialog.getByLabel(name, { exact: true }).count(), 0, `${name} is not asked for (set by the server)`)
    await dialog.getByLabel('title').fill('gamma')
    await dialog.getByLabel('done').check()
    await dialog.getByLabel('priority').fill('7')
    await dialog.getByLabel('score').fill('0.25')
    await dialog.getByLabel('due').fill('2025-02-03')
    await dialog.getByLabel('status').selectOption('closed')
    await dialog.getByLabel('meta').fill('{"k": [1, 2]}')
    await dialog.getByLabel('attachment').setInputFiles({ name: 'gamma.txt', mimeType: 'text/plain', buffer: Buffer.from('gamma file') })
    await screenshot(page, 'record-form')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Record created.' }).waitFor()
    t.equal(await dialog.count(), 0, 'the form closed')
    await page.getByText('4 records').waitFor()
    const gamma = (await notes(served)).find((n) => n.title === 'gamma')
    t.match(gamma, { done: true, priority: 7, score: 0.25, due: '2025-02-03T00:00:00.000Z', status: 'closed', meta: { k: [1, 2] }, attachment: /^gamma_.*\.txt$/ }, 'stored with its types')
    const file = await fetch(`${served.api}/files/notes/${gamma.id}/${gamma.attachment}`, { headers: { authorization: `Bearer ${adminToken}` } })
    t.equal(await file.text(), 'gamma file', 'the file was uploaded')
  })

  await t.test('Save shows validation, constraint and trigger errors; nothing is created', async (t) => {
    await page.getByRole('button', { name: 'New record' }).click()
    const dialog = page.getByRole('dialog', { name: 'New record in notes' })
    await dialog.getByRole('button', { name: 'Save' }).click()
    const formError = dialog.getByRole('alert')
    await formError.filter({ hasText: 'Validation Error' }).waitFor()
    t.equal(await dialog.getByLabel('title').getAttribute('aria-invalid'), 'true', 'title marked invalid')
    t.match(await dialog.locator('.field-error:not([hidden])').first().textContent(), /title is required/, 'the message is at the field')
    t.match(await dialog.getByLabel('title').evaluate((e) => e.getAttribute('aria-describedby')!.split(' ').map((id) => document.getElementById(id)?.textContent).join(' ')), /title is required/, 'and is the field\'s description')

    await dialog.getByLabel('title').fill('delta')
    await dialog.getByLabel('priority').fill('-1')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await formError.filter({ hasText: 'Constraint violation' }).waitFor()
    t.equal(await dialog.getByLabel('priority').getAttribute('aria-invalid'), 'true', 'the check is reported at priority')
    t.equal(await dialog.getByLabel('title').getAttribute('aria-invalid'), null, 'title is fine now')

    await dialog.getByLabel('priority').fill('1')
    await dialog.getByLabel('title').fill('alpha')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByLabel('title').and(page.locator('[aria-invalid="true"]')).waitFor()
    t.match(await dialog.locator('.field-error:not([hidden])').first().textContent(), /unique|exists|already/i, 'a duplicate title is refused at the field')

    await dialog.getByLabel('title').fill('blocked by the trigger')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await formError.filter({ hasText: 'Titles starting with blocked are refused' }).waitFor()
    t.pass('the trigger\'s message is shown at the form')
    await screenshot(page, 'record-errors', { top: false })

    await dialog.getByLabel('title').fill('epsilon')
    await dialog.getByLabel('meta').fill('{not json')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByText(/Not valid JSON/).waitFor()
    t.equal(await dialog.getByLabel('meta').getAttribute('aria-invalid'), 'true')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await dialog.count(), 0)
    t.equal((await notes(served)).length, 4, 'nothing was created by the failed saves')
  })

  await t.test('Edit fills the form; Save updates what changed', async (t) => {
    const sent: string[] = []
    const listener = (r: import('playwright-core').Request) => { if (r.url().includes('/edit/')) sent.push(r.postData() ?? '') }
    page.on('request', listener)
    await row(page, 'beta').getByRole('button', { name: 'Edit' }).click()
    const dialog = page.getByRole('dialog', { name: /^Edit record .* in notes$/ })
    await dialog.waitFor()
    t.equal(await dialog.getByLabel('title').inputValue(), 'beta', 'filled with the record')
    t.equal(await dialog.getByLabel('priority').inputValue(), '1')
    await dialog.getByLabel('title').fill('beta two')
    await dialog.getByLabel('done').check()
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Record saved.' }).waitFor()
    await row(page, 'beta two').waitFor()
    page.off('request', listener)
    t.same(JSON.parse(sent[0]), { title: 'beta two', done: true }, 'only the changed fields are sent')
    t.match((await notes(served)).find((n) => n.title === 'beta two'), { done: true, priority: 1 })
  })

  await t.test('Edit: a new file replaces the current one; "Remove current file" clears it', async (t) => {
    await row(page, 'alpha').getByRole('button', { name: 'Edit' }).click()
    const dialog = page.getByRole('dialog', { name: /^Edit record .* in notes$/ })
    t.match(await dialog.getByText(/^Current file: /).textContent(), /hello_.*\.txt/, 'the current file is named')
    t.ok(await dialog.getByLabel('done').isChecked(), 'filled: bool')
    t.equal(await dialog.getByLabel('status').inputValue(), 'open', 'filled: select')
    t.equal(await dialog.getByLabel('due').inputValue(), '2024-05-06', 'filled: date (its day, UTC)')
    t.equal(await dialog.getByLabel('score').inputValue(), '2.5', 'filled: number')
    t.same(JSON.parse(await dialog.getByLabel('meta').inputValue()), { tags: ['x', 'y'] }, 'filled: json')
    await dialog.getByLabel('attachment').setInputFiles({ name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('second version') })
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Record saved.' }).waitFor()
    await row(page, 'alpha').getByRole('link', { name: /^second_/ }).waitFor()
    const replaced = (await notes(served)).find((n) => n.title === 'alpha')
    t.match(replaced.attachment, /^second_.*\.txt$/, 'replaced')
    await row(page, 'alpha').getByRole('button', { name: 'Edit' }).click()
    await dialog.getByLabel('Remove current file').check()
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.waitFor({ state: 'detached' })
    await row(page, 'alpha').getByRole('link').waitFor({ state: 'detached' })
    t.equal((await notes(served)).find((n) => n.title === 'alpha').attachment, null, 'cleared')
  })

  await t.test('Delete asks first; Cancel keeps the record, Delete removes it', async (t) => {
    await row(page, 'beta two').getByRole('button', { name: 'Delete' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete record?' })
    await confirm.waitFor()
    await screenshot(page, 'delete-confirm')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await confirm.count(), 0)
    t.ok((await notes(served)).some((n) => n.title === 'beta two'), 'Cancel deleted nothing')
    await row(page, 'beta two').getByRole('button', { name: 'Delete' }).click()
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('status').filter({ hasText: 'Record deleted.' }).waitFor()
    await page.getByText('3 records').waitFor()
    t.notOk((await notes(served)).some((n) => n.title === 'beta two'), 'deleted')
  })

  await t.test('an account table: passwords hidden, written hashed', async (t) => {
    await page.getByRole('link', { name: 'users', exact: true }).click()
    await page.getByText('0 records').waitFor()
    await page.getByRole('button', { name: 'New record' }).click()
    const dialog = page.getByRole('dialog', { name: 'New record in users' })
    t.equal(await dialog.getByLabel('password', { exact: true }).getAttribute('type'), 'password')
    t.equal(await dialog.getByLabel('email').getAttribute('type'), 'email')
    t.equal(await dialog.getByLabel('password_salt').count(), 0, 'the salt is the server\'s')
    await dialog.getByLabel('username').fill('ada')
    await dialog.getByLabel('email').fill('ada@example.com')
    await dialog.getByLabel('password', { exact: true }).fill('correct horse battery')
    t.equal(await dialog.getByLabel('passwordConfirm').getAttribute('type'), 'password', 'the confirm field of passwordConfirmSuffix is asked for')
    await dialog.getByLabel('passwordConfirm').fill('something else')
    await dialog.getByLabel('name', { exact: true }).fill('Ada')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByLabel('passwordConfirm').and(page.locator('[aria-invalid="true"]')).waitFor()
    t.match(await dialog.locator('.field-error:not([hidden])').first().textContent(), /password and passwordConfirm do not match/, 'a mismatch is shown at the confirm field')
    await dialog.getByLabel('passwordConfirm').fill('correct horse battery')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.getByText('1 record', { exact: true }).waitFor()
    t.notMatch(await row(page, 'ada@example.com').textContent(), /correct horse/, 'the password is not shown')
    const login = await fetch(`${served.api}/table/users/auth/login-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ identity: 'ada@example.com', password: 'correct horse battery' }) })
    t.equal(login.status, 200, 'the account signs in with the password set in the panel')
  })

  await t.test('Actions: a form per action, typed params, Run shows the result or the error', async (t) => {
    await page.getByRole('link', { name: 'Actions' }).click()
    await page.getByRole('heading', { name: 'Actions', level: 2 }).waitFor()
    const count = page.getByRole('article', { name: 'count_notes' })
    t.equal(await count.getByLabel('min').getAttribute('type'), 'number')
    t.match(await count.textContent(), /optional/, 'an optional param is marked')
    await count.getByRole('button', { name: 'Run' }).click()
    await count.getByRole('status').filter({ hasText: '"n": 3' }).waitFor()
    await count.getByLabel('min').fill('2')
    await count.getByRole('button', { name: 'Run' }).click()
    await count.getByRole('status').filter({ hasText: '"n": 2' }).waitFor()
    t.pass('results shown')

    const add = page.getByRole('article', { name: 'add_note' })
    t.equal(await add.getByLabel('urgent').evaluate((e) => e.tagName), 'SELECT', 'an optional boolean may be left unset')
    await add.getByRole('button', { name: 'Run' }).click()
    await add.getByRole('alert').filter({ hasText: 'Validation Error' }).waitFor()
    t.equal(await add.getByLabel('title').getAttribute('aria-invalid'), 'true', 'the missing param is marked at its input')
    await add.getByLabel('title').fill('from an action')
    await add.getByLabel('priority').fill('4')
    await add.getByRole('button', { name: 'Run' }).click()
    await add.getByRole('status').filter({ hasText: 'Result' }).waitFor()
    t.same(JSON.parse((await add.locator('pre').textContent())!), [[]], 'the result as the API answered it (an INSERT step without returning)')
    t.ok((await notes(served)).some((n) => n.title === 'from an action' && n.priority === 4), 'the action ran')

    const guarded = page.getByRole('article', { name: 'positive_only' })
    await guarded.getByLabel('n', { exact: true }).fill('-1')
    await guarded.getByRole('button', { name: 'Run' }).click()
    await guarded.getByRole('alert').filter({ hasText: 'Forbidden' }).waitFor()
    t.equal(await guarded.getByRole('alert').textContent(), 'Error 403: Forbidden', 'a guard refusing is shown as an error')
    await screenshot(page, 'actions', { top: false })
  })

  await t.test('Settings: the config with its secrets redacted', async (t) => {
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('heading', { name: 'General' }).waitFor()
    const text = await page.getByRole('main').textContent()
    t.match(text, /Panel Test/)
    t.match(text, /\*\*\*/, 'secrets show as ***')
    for (const secret of ['panel-test-jwt-secret', EDITOR_PASSWORD, VIEWER_PASSWORD]) t.notOk(text!.includes(secret), 'no secret value on the page')
    t.equal(await page.getByText(/^notes · \d+ fields$/).count(), 1, 'each table with its fields')
    await screenshot(page, 'settings')
  })

  await t.test('Migrations: the view loads the endpoint or explains why it cannot', async (t) => {
    await page.getByRole('link', { name: 'Migrations' }).click()
    await page.getByRole('heading', { name: 'Migrations', level: 2 }).waitFor()
    const res = await call(served, '/migrations')
    if (res.status === 404) {
      await page.getByRole('alert').filter({ hasText: 'no migrations endpoint' }).waitFor()
      t.ok(await page.getByRole('button', { name: 'Apply pending' }).isDisabled(), 'nothing to apply')
    } else {
      t.equal(res.status, 200)
      await page.getByRole('heading', { name: /^Applied/ }).waitFor()
      t.match(await page.getByRole('main').textContent(), new RegExp(res.json.migrations[0].name), 'the initial migration is listed')
    }
    await screenshot(page, 'migrations-up-to-date')
  })

  await t.test('Sign out returns to the form; a reload stays signed out', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Token or password').waitFor()
    t.equal(await page.evaluate(() => sessionStorage.length), 0, 'the token is gone')
    await page.reload()
    await page.getByLabel('Token or password').waitFor()
    t.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0)
  })

  await clean(t, panel, served.origin)
})
