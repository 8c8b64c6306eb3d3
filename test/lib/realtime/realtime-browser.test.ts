// Realtime as a browser subscribes: an EventSource in Debian's chromium (playwright-core), on the
// app's own origin, authenticated by the auth cookie. A signed-in page gets the user's own draft; an
// anonymous page and a page that puts the token in the URL (never read) get only public rows.
import t from 'tap'
import { launch } from '../../fixtures/panel/browser.js'
import { adminToken } from '../../helper.js'
import { api, config, listening, signUp } from '../../fixtures/realtime/client.js'

const PAGE = `<!doctype html><meta charset="utf-8"><title>realtime</title><script>
window.events = []
const es = new EventSource('/api/v1/realtime?subscribe=posts' + (location.hash ? '&token=' + location.hash.slice(1) : ''))
for (const name of ['connect', 'change', 'gap']) es.addEventListener(name, (e) => window.events.push([name, JSON.parse(e.data)]))
</script>`

const browser = await launch(t)
if (browser !== undefined) {
  t.test('EventSource with the auth cookie', async (t) => {
    const { app, base } = await listening(t, config(), {
      setup: (app) => { app.get('/rt-page', async (_req, reply) => reply.type('text/html').send(PAGE)) }
    })
    t.teardown(() => app.server.closeAllConnections())
    const ann = await signUp(base, 'ann')
    const open = async (cookie: boolean, hash = '') => {
      const context = await browser.newContext()
      t.teardown(() => context.close())
      if (cookie) await context.addCookies([{ name: 'rt_auth', value: ann.token, url: base }])
      const page = await context.newPage()
      await page.goto(`${base}/rt-page${hash}`)
      await page.waitForFunction(() => (window as any).events.some((e: any) => e[0] === 'connect'))
      return page
    }
    const signedIn = await open(true)
    const anonymous = await open(false)
    const tokenInUrl = await open(false, `#${ann.token}`)
    await api(base, '/table/posts/insert', { values: [{ id: 'draft', author_id: ann.id, title: 'draft' }, { id: 'public', author_id: ann.id, title: 'public', published: true }] }, ann.token)
    await api(base, '/table/posts/insert', { values: { id: 'last', title: 'last', published: true } }, adminToken)
    const changes = async (page: typeof signedIn) => {
      await page.waitForFunction(() => (window as any).events.some((e: any) => e[0] === 'change' && e[1].record.id === 'last'), undefined, { timeout: 10_000 })
      return await page.evaluate(() => (window as any).events.filter((e: any) => e[0] === 'change').map((e: any) => e[1].record.id))
    }
    t.same(await changes(signedIn), ['draft', 'public', 'last'], 'the cookie signs the EventSource in: ann gets her draft')
    t.same(await changes(anonymous), ['public', 'last'], 'an anonymous page: public rows only')
    t.same(await changes(tokenInUrl), ['public', 'last'], 'a token in the URL is not read: anonymous')
  })
}
