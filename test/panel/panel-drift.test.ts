// The panel of a server whose config is older than the one the database last applied (decision
// D98), in chromium, on both dialects: the Migrations view says "restart it", lists nothing pending,
// and offers no apply, so nothing the newer config made can be dropped from there.
import t from 'tap'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../helper.js'
import { launch, listen, openPanel, signIn } from '../fixtures/panel/browser.js'
import { clean } from '../fixtures/panel/helpers.js'
import type { DatabaseSettings, TableData } from '../../schemas/config.js'

const table = (name: string): TableData => ({ name, fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'title', type: 'text', sqlType: 'text' }] })
const configOf = (...tables: TableData[]): DatabaseSettings => ({ jwtSecret: 'panel-drift-secret', appUrl: 'http://127.0.0.1', rateLimit: false, tables })

const browser = await launch(t)
if (browser !== undefined) {
  forEachDialect(t, 'the panel of an older config says to restart it', async (t, dialect) => {
    const databaseUrl = sharedDatabase(t, dialect)
    const running = await buildApp(t, configOf(table('posts')), { dialect, databaseUrl })
    await buildApp(t, configOf(table('posts'), table('comments')), { dialect, databaseUrl })
    const served = await listen(t, running)
    const panel = await openPanel(t, browser, served.panel)
    const { page } = panel
    await signIn(page, adminToken)
    await page.getByRole('link', { name: 'Migrations' }).click()
    const alert = page.getByRole('alert').filter({ hasText: 'This server runs an older config: restart it.' })
    await alert.waitFor()
    t.match(await alert.textContent(), /nothing that config made is dropped/)
    await page.getByText('Nothing is planned while this server runs an older config.').waitFor()
    t.ok(await page.getByRole('button', { name: 'Apply pending' }).isDisabled(), 'no apply offered')
    t.notOk((await page.getByRole('main').textContent())?.includes('drop_table_comments'), 'no drop listed')
    await clean(t, panel, served.origin)
  })
}
