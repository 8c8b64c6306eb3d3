// Same-site forged requests in a real browser (Debian's chromium, playwright-core): the victim is
// signed in to the app at localhost:<port> by its auth cookie (SameSite=Lax). A page on another port
// of the same host is the same site, so chromium sends the cookie with that page's form post and its
// no-cors upload; fastbase must refuse both and change nothing. The same form from an allowed origin
// (FASTBASE_ALLOWED_ORIGINS) and from a page the app serves itself goes through.
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { launch } from '../fixtures/panel/browser.js'
import { buildApp } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'browser-csrf-secret',
  // Not this server's origin: the app's own page is admitted by Sec-Fetch-Site: same-origin.
  appUrl: 'http://localhost',
  rateLimit: false,
  authCookie: { name: 'victim_auth' },
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 3600 },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    },
    {
      name: 'notes',
      autoSetUid: true,
      fields: [...baseFields, { name: 'owner', type: 'text', sqlType: 'text', notNull: true }, { name: 'body', type: 'text', sqlType: 'text' }, { name: 'attachment', type: 'file', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'owner == auth.uid', viewRule: 'owner == auth.uid', createRule: 'owner == auth.uid', updateRule: 'owner == auth.uid', deleteRule: 'owner == auth.uid' }]
    }
  ]
}

/** A page that posts a form to the app's update route (urlencoded, as forms are) on load. */
const formPage = (api: string, noteId: string, body: string): string => `<!doctype html><meta charset="utf-8"><title>form</title>
<form method="POST" action="${api}/table/notes/update">
<input name="where" value="id == '${noteId}'"><input name="setValues.body" value="${body}"><input name="returning" value="body">
</form><script>document.forms[0].submit()</script>`

/** A page that uploads a file with a no-cors fetch (multipart needs no preflight); `window.done` when sent. */
const uploadPage = (api: string, owner: string): string => `<!doctype html><meta charset="utf-8"><title>upload</title><script>
const form = new FormData()
form.append('@filePayload', new Blob(['forged']), 'forged.txt')
form.append('@jsonPayload', JSON.stringify({ values: { id: 'uploaded', owner: '${owner}', body: 'uploaded', attachment: '@filePayload.0' } }))
window.done = fetch('${api}/table/notes/insert', { method: 'POST', body: form, mode: 'no-cors', credentials: 'include' }).then(() => true, (e) => String(e))
</script>`

/** A plain HTTP server on 127.0.0.1 answering every path with `page()`; closed after the test. */
async function pageServer (t: Test, page: () => string): Promise<number> {
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end(page()) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return (server.address() as AddressInfo).port
}

const browser: Browser | undefined = await launch(t)
if (browser !== undefined) {
  t.test('a page on another port of the same host cannot write with the victim\'s cookie', async (t) => {
    let html = ''
    const evilPort = await pageServer(t, () => html)
    const friendPort = await pageServer(t, () => html)
    const app = await buildApp(t, config, { env: { FASTBASE_ALLOWED_ORIGINS: `http://localhost:${friendPort}` }, setup: (app) => app.get('/own-page', async (_req, reply) => reply.type('text/html').send(html)) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.server.closeAllConnections())
    const port = (app.server.address() as AddressInfo).port
    const api = `http://localhost:${port}/api/v1`
    const inject = async (method: 'GET' | 'POST', url: string, token: string, payload?: object) =>
      await app.inject({ method, url: `/api/v1${url}`, headers: { authorization: `Bearer ${token}` }, payload })

    const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'victim', email: 'victim@example.com', password: 'victim password', name: 'Victim' } })
    const { token, record } = signUp.json() as { token: string, record: { id: string } }
    t.equal((await inject('POST', '/table/notes/insert', token, { values: { id: 'n1', owner: record.id, body: 'original' } })).statusCode, 200)
    const note = async () => (await inject('GET', '/table/notes/view/n1', token)).json().body as string
    const uploaded = async () => (await inject('GET', '/table/notes/view/uploaded', token)).statusCode

    const context = await browser.newContext()
    t.teardown(() => context.close())
    // As the app would set it after an OAuth or one-tap sign-in (http appUrl: the configured name).
    await context.addCookies([{ name: 'victim_auth', value: token, url: `http://localhost:${port}`, httpOnly: true, secure: true, sameSite: 'Lax' }])
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    /** Opens `url`, whose form posts to the API; the status the browser got. */
    const submit = async (url: string, body: string): Promise<number> => {
      html = formPage(api, 'n1', body)
      const answer = page.waitForResponse((r) => r.url() === `${api}/table/notes/update`)
      await page.goto(url)
      return (await answer).status()
    }

    t.equal(await submit(`http://localhost:${evilPort}/`, 'forged'), 403, 'the same-site page\'s form: 403')
    // innerText: the text as rendered, without what the browser's own viewer adds hidden.
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is asserted
    t.match(await page.evaluate(() => JSON.parse(document.body.innerText)), { code: 403, message: /^Cross-origin request refused/ }, 'the browser shows why')
    t.equal(await note(), 'original', 'the note is unchanged')
    html = uploadPage(api, record.id)
    await page.goto(`http://localhost:${evilPort}/upload`)
    t.equal(await page.evaluate(() => (window as any).done), true, 'the no-cors upload was sent')
    t.equal(await uploaded(), 404, 'and stored nothing')

    t.equal(await submit(`http://localhost:${friendPort}/`, 'from a friend'), 200, 'an allowed origin\'s form: 200')
    t.equal(await note(), 'from a friend')
    t.equal(await submit(`http://localhost:${port}/own-page`, 'from the app'), 200, 'a page the app serves itself: 200')
    t.equal(await note(), 'from the app')
    html = uploadPage(api, record.id)
    await page.goto(`http://localhost:${port}/own-page`)
    t.equal(await page.evaluate(() => (window as any).done), true)
    t.equal(await uploaded(), 200, 'the app\'s own page uploads')
  })
}
