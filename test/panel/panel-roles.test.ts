// The admin panel per role, in a real browser (see test/panel/panel.test.ts): a viewer reads, pages and
// writes nothing (and the API agrees), an editor writes records and runs actions but applies no
// migration, a destructive migration waits until the superadmin previews and applies it, and a
// table keyed by an integer primary key without a uid field is edited and deleted by its key; expiry
// (the token's end, a 401, a stale stored session) and keyboard-only use.
import t from 'tap'
import { adminToken, buildApp, sharedDatabase } from '../helper.js'
import { EDITOR_PASSWORD, VIEWER_PASSWORD, panelConfig } from '../fixtures/panel/config.js'
import { launch, listen, openPanel, screenshot, signIn } from '../fixtures/panel/browser.js'
import { call, clean, column, notes, row, seed, serve, writeControlsDisabled, type Served } from '../fixtures/panel/helpers.js'

const browser = await launch(t)

t.test('viewer: reads everything, pages through, writes nothing', { skip: browser === undefined }, async (t) => {
  const served = await serve(t)
  await seed(served)
  const filler = Array.from({ length: 57 }, (_, i) => ({ title: `filler ${String(i).padStart(2, '0')}`, priority: 10 + i }))
  await call(served, '/table/notes/insert', { values: filler })
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel
  await signIn(page, VIEWER_PASSWORD)
  t.match(await page.getByText('Signed in as').textContent(), /viewer \(read only\)/)

  await page.getByText('60 records').waitFor()
  t.equal(await page.locator('table.records tbody tr').count(), 50, 'one page of 50 rows in the DOM')
  t.match(await page.getByText(/^Page \d+ of \d+$/).textContent(), /Page 1 of 2/)
  t.ok(await page.getByRole('button', { name: 'Previous' }).isDisabled(), 'no previous page')
  await page.getByRole('button', { name: 'Next' }).click()
  await page.getByText('Page 2 of 2').waitFor()
  t.equal(await page.locator('table.records tbody tr').count(), 10, 'the last 10 rows')
  t.ok(await page.getByRole('button', { name: 'Next' }).isDisabled(), 'no next page')
  await page.getByRole('button', { name: 'Previous' }).click()
  await page.getByText('Page 1 of 2').waitFor()

  await page.getByLabel('Filter').fill("title ~ 'filler 0%'")
  await page.getByLabel('Filter').press('Enter')
  await page.getByText('10 records').waitFor()
  t.pass('a viewer filters')
  await page.getByRole('button', { name: 'title', exact: true }).click()
  await page.getByRole('button', { name: 'title', exact: true }).click()
  await page.locator('th[aria-sort="descending"]').waitFor()
  t.equal((await column(page, 'title'))[0], 'filler 09', 'and sorts')

  await writeControlsDisabled(t, page, 'table')
  t.equal(await page.getByRole('button', { name: 'Edit' }).count(), 10, 'each row shows Edit')
  for (const b of await page.getByRole('button', { name: 'Edit' }).all()) t.ok(await b.isDisabled(), 'disabled')
  await screenshot(page, 'viewer')

  await page.getByRole('link', { name: 'Actions' }).click()
  await page.getByRole('article', { name: 'count_notes' }).waitFor()
  await writeControlsDisabled(t, page, 'actions')
  await page.getByRole('link', { name: 'Migrations' }).click()
  await page.getByRole('heading', { name: 'Migrations', level: 2 }).waitFor()
  await page.getByRole('status').or(page.getByRole('alert')).or(page.getByRole('heading', { name: /^Applied/ })).first().waitFor()
  await writeControlsDisabled(t, page, 'migrations')
  await page.getByRole('link', { name: 'Settings' }).click()
  await page.getByRole('heading', { name: 'General' }).waitFor()
  t.pass('a viewer reads the settings')

  // The server agrees: a viewer's token writes nothing and runs no action.
  const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('fastbase-panel-session:/api/v1')!).token)
  t.equal((await call(served, '/table/notes/insert', { values: { title: 'viewer' } }, token)).status, 403, 'insert refused by the API')
  t.equal((await call(served, '/action/add_note', { title: 'viewer' }, token)).status, 403, 'actions refused by the API')
  t.notOk((await notes(served)).some((n) => n.title === 'viewer'))
  await clean(t, panel, served.origin)
})

t.test('editor: writes records and runs actions, applies no migration', { skip: browser === undefined }, async (t) => {
  const served = await serve(t)
  await seed(served)
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel
  await signIn(page, EDITOR_PASSWORD)
  t.match(await page.getByText('Signed in as').textContent(), /editor/)
  await page.getByText('3 records').waitFor()

  await page.getByRole('button', { name: 'New record' }).click()
  const dialog = page.getByRole('dialog', { name: 'New record in notes' })
  await dialog.getByLabel('title').fill('by the editor')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await page.getByText('4 records').waitFor()
  await row(page, 'by the editor').getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('dialog').getByLabel('priority').fill('9')
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'Record saved.' }).waitFor()
  t.match((await notes(served)).find((n) => n.title === 'by the editor'), { priority: 9 }, 'created and edited')
  await row(page, 'alpha').getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('dialog', { name: 'Delete record?' }).getByRole('button', { name: 'Delete' }).click()
  await page.getByText('3 records').waitFor()
  t.notOk((await notes(served)).some((n) => n.title === 'alpha'), 'deleted')

  await page.getByRole('link', { name: 'Actions' }).click()
  const add = page.getByRole('article', { name: 'add_note' })
  await add.getByLabel('title').fill('editor action')
  await add.getByRole('button', { name: 'Run' }).click()
  await add.getByRole('status').filter({ hasText: 'Result' }).waitFor()
  t.ok((await notes(served)).some((n) => n.title === 'editor action'), 'an editor runs actions')

  await page.getByRole('link', { name: 'Migrations' }).click()
  await page.getByRole('heading', { name: 'Migrations', level: 2 }).waitFor()
  await page.getByText('Only the superadmin can apply migrations.').waitFor()
  t.ok(await page.getByRole('button', { name: 'Apply pending' }).isDisabled(), 'Apply pending is the superadmin\'s')
  await clean(t, panel, served.origin)
})

t.test('migrations: a destructive change waits; the editor sees it, the superadmin previews and applies it', { skip: browser === undefined }, async (t) => {
  const databaseUrl = sharedDatabase(t, 'sqlite')
  const first = await buildApp(t, panelConfig(), { databaseUrl })
  await first.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { authorization: `Bearer ${adminToken}` }, payload: { values: { title: 'kept', score: 1.5 } } })
  await first.close()
  // The same project without notes.score: dropping a column never happens on start.
  const changed = panelConfig()
  changed.tables[0].fields = changed.tables[0].fields.filter((f) => f.name !== 'score')
  const app = await buildApp(t, changed, { databaseUrl })
  const served: Served = { app, ...await listen(t, app) }
  const status = await call(served, '/migrations')
  t.equal(status.status, 200, 'the server has the migrations endpoints')
  t.equal(status.json.pending.length, 1, 'one pending migration')
  t.equal(status.json.pending[0].destructive, true, 'destructive')

  const editor = await openPanel(t, browser!, `${served.panel}#/migrations`)
  await signIn(editor.page, EDITOR_PASSWORD)
  await editor.page.getByRole('heading', { name: 'Pending (1)' }).waitFor()
  t.match(await editor.page.getByRole('row').filter({ hasText: 'destructive' }).textContent(), /notes/, 'the pending change, its table and kind')
  t.ok(await editor.page.getByRole('button', { name: 'Apply pending' }).isDisabled(), 'the editor cannot apply')
  t.ok(await editor.page.getByRole('button', { name: 'Preview' }).isDisabled())
  await clean(t, editor, served.origin)

  const panel = await openPanel(t, browser!, `${served.panel}#/migrations`)
  const { page } = panel
  await signIn(page, adminToken)
  await page.getByRole('heading', { name: 'Pending (1)' }).waitFor()
  const pendingRow = page.getByRole('row').filter({ hasText: 'destructive' })
  await pendingRow.getByText('SQL').click()
  t.match(await pendingRow.locator('pre').textContent(), /notes/, 'its SQL can be read')
  await page.getByRole('button', { name: 'Preview' }).click()
  await page.getByRole('heading', { name: 'Preview (nothing applied)' }).waitFor()
  t.equal((await call(served, '/migrations')).json.pending.length, 1, 'a preview applies nothing')
  await screenshot(page, 'migrations')
  // "Apply" alone never loses data: the destructive change stays pending.
  await page.getByRole('button', { name: 'Apply pending' }).click()
  let confirm = page.getByRole('dialog', { name: 'Apply pending migrations?' })
  t.match(await confirm.textContent(), /0 safe, 1 destructive[\s\S]*column score is no longer in the config/, 'the confirmation names what is at stake')
  const box = confirm.getByRole('checkbox', { name: /Also apply the destructive migrations/ })
  t.notOk(await box.isChecked(), 'destructive changes are opt-in')
  await confirm.getByRole('button', { name: 'Apply', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Applied 0 migrations. 1 left pending' }).waitFor()
  t.equal((await call(served, '/migrations')).json.pending.length, 1, 'unticked: the destructive change is still pending')
  t.same(await served.app.fastbase.db('notes').select('score'), [{ score: 1.5 }], 'and the column still holds its values')
  // Ticked: applied.
  await page.getByRole('button', { name: 'Apply pending' }).click()
  confirm = page.getByRole('dialog', { name: 'Apply pending migrations?' })
  await confirm.getByRole('checkbox', { name: /Also apply the destructive migrations/ }).check()
  await confirm.getByRole('button', { name: 'Apply', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Applied 1 migration.' }).waitFor()
  await page.getByRole('heading', { name: 'Pending (0)' }).waitFor()
  const after = await call(served, '/migrations')
  t.equal(after.json.pending.length, 0, 'nothing pending')
  t.ok(after.json.migrations.length >= 2, 'the change is recorded')
  t.ok(await page.getByRole('button', { name: 'Apply pending' }).isDisabled(), 'nothing left to apply')
  const kept = await call(served, '/table/notes/list')
  t.match(kept.json.items, [{ title: 'kept' }], 'the other data stays')
  t.notOk('score' in kept.json.items[0], 'the column is gone')
  await clean(t, panel, served.origin)
})

t.test('a table keyed by an integer primary key, without a uid field: edit and delete by the key', { skip: browser === undefined }, async (t) => {
  const config = panelConfig()
  config.tables.push({
    name: 'counters',
    fields: [
      { name: 'n', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
      { name: 'label', type: 'text', sqlType: 'text', notNull: true }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  })
  const app = await buildApp(t, config)
  const served: Served = { app, ...await listen(t, app) }
  await call(served, '/table/counters/insert', { values: [{ label: "it's one" }, { label: 'two' }] })
  const panel = await openPanel(t, browser!, `${served.panel}#/table/counters`)
  const { page } = panel
  await signIn(page, EDITOR_PASSWORD)
  await page.getByText('2 records').waitFor()
  await page.getByRole('button', { name: 'New record' }).click()
  const dialog = page.getByRole('dialog', { name: 'New record in counters' })
  t.equal(await dialog.getByLabel('n', { exact: true }).count(), 0, 'the autoincrement key is the database\'s')
  await dialog.getByLabel('label').fill('three')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await page.getByText('3 records').waitFor()
  await row(page, "it's one").getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('dialog').getByLabel('label').fill("it's still one")
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
  await row(page, "it's still one").waitFor()
  await row(page, 'two').getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('dialog', { name: 'Delete record?' }).getByRole('button', { name: 'Delete' }).click()
  await page.getByText('2 records').waitFor()
  const { json } = await call(served, '/table/counters/list?order=n')
  t.same(json.items, [{ n: 1, label: "it's still one" }, { n: 3, label: 'three' }], 'edited, deleted and created by the key (a quote in a value included)')
  await clean(t, panel, served.origin)
})

t.test('expiry: the token\'s end, a 401 and a stale stored session all return to the form', { skip: browser === undefined }, async (t) => {
  const served = await serve(t)
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel
  await page.clock.install()
  await page.reload()
  await signIn(page, EDITOR_PASSWORD)
  await page.getByText('0 records').waitFor()
  await page.clock.fastForward('03:00:01')
  await page.getByRole('alert').filter({ hasText: 'Your session has expired' }).waitFor()
  t.equal(await page.getByLabel('Token or password').count(), 1, 'after expiresIn the form is back')
  t.equal(await page.evaluate(() => sessionStorage.length), 0, 'and the token forgotten')

  const page2 = (await openPanel(t, browser!, served.panel)).page
  await signIn(page2, EDITOR_PASSWORD)
  // A token the server no longer accepts (e.g. signed with a rotated key): the first 401 signs out.
  await page2.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('fastbase-panel-session:/api/v1')!)
    sessionStorage.setItem('fastbase-panel-session:/api/v1', JSON.stringify({ ...s, token: `${s.token.slice(0, -4)}AAAA` }))
  })
  await page2.reload()
  await page2.getByRole('alert').filter({ hasText: 'Your session has expired' }).waitFor()
  t.pass('a 401 from the API returns to the form')

  await signIn(page2, EDITOR_PASSWORD)
  await page2.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('fastbase-panel-session:/api/v1')!)
    sessionStorage.setItem('fastbase-panel-session:/api/v1', JSON.stringify({ ...s, expiresAt: Date.now() - 1000 }))
  })
  await page2.reload()
  await page2.getByLabel('Token or password').waitFor()
  t.equal(await page2.getByRole('button', { name: 'Sign out' }).count(), 0, 'a stored session past its expiry is not used')
})

t.test('keyboard only: sign in, create a record, Escape, move between tables, skip link', { skip: browser === undefined }, async (t) => {
  const served = await serve(t)
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel
  const focused = async () => await page.evaluate(() => document.activeElement?.textContent)
  await page.getByLabel('Token or password').waitFor()
  t.equal(await page.evaluate(() => document.activeElement?.id), 'signin-password', 'the password input has focus')
  await page.keyboard.type(adminToken)
  await page.keyboard.press('Enter')
  await page.getByText('0 records').waitFor()
  t.equal(await focused(), 'notes', 'after sign-in, focus is on the view\'s heading')
  await page.keyboard.press('Tab')
  t.equal(await focused(), 'New record')
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog', { name: 'New record in notes' })
  await dialog.waitFor()
  t.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).name), 'title', 'focus starts in the form')
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })
  t.equal(await focused(), 'New record', 'Escape closes it and focus returns')
  await page.keyboard.press('Enter')
  await dialog.waitFor()
  await page.keyboard.type('typed only')
  await page.keyboard.press('Enter')
  await page.getByText('1 record', { exact: true }).waitFor()
  t.ok((await notes(served)).some((n) => n.title === 'typed only'), 'Enter in the form saves')
  // Backwards from "New record": Two-factor sign-in, Settings, Backups, Migrations, Actions, users (the navigation).
  for (const name of ['Two-factor sign-in', 'Settings', 'Backups', 'Migrations', 'Actions', 'users']) {
    await page.keyboard.press('Shift+Tab')
    t.equal(await focused(), name)
  }
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'users', level: 2 }).waitFor()
  t.equal(await focused(), 'users', 'the users view, focus on its heading')
  await page.reload()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  await page.keyboard.press('Tab')
  t.equal(await focused(), 'Skip to content', 'the first stop is the skip link')
  await page.keyboard.press('Enter')
  t.equal(await page.evaluate(() => document.activeElement?.id), 'main', 'it moves focus to the content')
  await clean(t, panel, served.origin)
})
