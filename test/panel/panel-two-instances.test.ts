// Two fastbase instances embedded in one host app, each with its panel, on one origin: a tab that
// opens both keeps their admin sessions apart (the session is stored under the panel's API prefix),
// so one panel never sends the other's token to its API. In Debian's chromium, SQLite only (the
// panel is a client of the HTTP API).
import t from 'tap'
import Fastify from 'fastify'
import fastbase, { options as serverOptions } from '../../app.js'
import { freshDir, sharedDatabase } from '../helper.js'
import { panelConfig } from '../fixtures/panel/config.js'
import { launch, listen, openPanel, signIn } from '../fixtures/panel/browser.js'

const browser = await launch(t)
const TOKENS = { a: 'panel-instance-a-service-token', b: 'panel-instance-b-service-token' }

t.test('two panels on one origin keep their sessions apart', async (t) => {
  if (browser === undefined) return t.plan(0, 'chromium is not installed')
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  for (const name of ['a', 'b'] as const) {
    await app.register(fastbase, { config: panelConfig(), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: TOKENS[name], prefix: `/${name}/api`, panelPrefix: `/${name}/panel`, decorator: `fastbase_${name}` })
  }
  const { origin } = await listen(t, app)
  const panel = await openPanel(t, browser!, `${origin}/a/panel/`)
  const { page } = panel
  // Which session each API was sent: the token of every authorized request, by instance.
  const sent: Record<'a' | 'b', string[]> = { a: [], b: [] }
  page.on('request', (request) => {
    const instance = /^\/(a|b)\/api\//.exec(new URL(request.url()).pathname)?.[1] as 'a' | 'b' | undefined
    const authorization = request.headers().authorization
    if (instance !== undefined && authorization !== undefined) sent[instance].push(authorization)
  })

  await signIn(page, TOKENS.a)
  const sessionA = await page.evaluate(() => Object.keys(sessionStorage))
  t.same(sessionA, ['fastbase-panel-session:/a/api'], 'the session is stored under panel A\'s API prefix')

  await page.goto(`${origin}/b/panel/`)
  await page.getByLabel('Token or password').waitFor()
  t.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0, 'panel B asks for its own sign-in')
  t.same(sent.b, [], 'and never sent panel A\'s token to API B')

  await signIn(page, TOKENS.b)
  await page.goto(`${origin}/a/panel/`)
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  t.match(await page.getByText('Signed in as').textContent(), /superadmin/, 'back on panel A: still signed in to A')
  t.same((await page.evaluate(() => Object.keys(sessionStorage))).sort(), ['fastbase-panel-session:/a/api', 'fastbase-panel-session:/b/api'])
  t.same(panel.errors, [], 'no page error')
})
