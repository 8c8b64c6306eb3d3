// CORS in a real browser (Debian's chromium, playwright-core; decision D97): a front end on another
// loopback port, listed in `cors.origins`, reads the API's answers with the user's cookie, writes
// with it (JSON, so after a preflight), and reads the error code of a refusal; a page on a port not
// listed can neither read nor, by a preflighted request, write.
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { launch } from '../fixtures/panel/browser.js'
import { buildApp } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

/** A plain HTTP server on 127.0.0.1 answering every path with an empty page; closed after the test. */
async function pageServer (t: Test): Promise<number> {
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>front end</title>') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return (server.address() as AddressInfo).port
}

const browser: Browser | undefined = await launch(t)
if (browser !== undefined) {
  t.test('a listed front end on another port reads and writes with the cookie; another port cannot', async (t) => {
    const frontPort = await pageServer(t)
    const evilPort = await pageServer(t)
    const config: DatabaseSettings = {
      jwtSecret: 'cors-browser-secret',
      appUrl: 'http://localhost',
      rateLimit: false,
      authCookie: { name: 'front_auth' },
      cors: { origins: [`http://localhost:${frontPort}`] },
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
          fields: [...baseFields, { name: 'owner', type: 'text', sqlType: 'text', notNull: true }, { name: 'body', type: 'text', sqlType: 'text' }],
          extensions: [{ name: 'rules', listRule: 'owner == auth.uid', viewRule: 'owner == auth.uid', createRule: 'owner == auth.uid', updateRule: null, deleteRule: null }]
        }
      ]
    }
    const app = await buildApp(t, config)
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.server.closeAllConnections())
    const api = `http://localhost:${(app.server.address() as AddressInfo).port}/api/v1`
    const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'front', email: 'front@example.com', password: 'front password', name: 'Front' } })
    const { token, record } = signUp.json() as { token: string, record: { id: string } }

    const context = await browser.newContext()
    t.teardown(() => context.close())
    await context.addCookies([{ name: 'front_auth', value: token, url: api, httpOnly: true, sameSite: 'Lax' }])
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    /** Runs the fetches from a page of `port`; what the page could read of each. */
    const fromPage = async (port: number) => {
      await page.goto(`http://localhost:${port}/`)
      return await page.evaluate(async ({ api, owner }) => {
        const attempt = async (url: string, init: RequestInit) => {
          try {
            const answer = await fetch(url, { credentials: 'include', ...init })
            return { status: answer.status, code: answer.headers.get('fastbase-error-code'), body: await answer.json() }
          } catch (error) {
            return { failed: String(error) }
          }
        }
        const json = { 'content-type': 'application/json' }
        return {
          write: await attempt(`${api}/table/notes/insert`, { method: 'POST', headers: json, body: JSON.stringify({ values: { owner, body: `from ${location.port}` }, returning: ['body'] }) }),
          read: await attempt(`${api}/table/notes/list`, {}),
          refused: await attempt(`${api}/table/notes/insert`, { method: 'POST', headers: json, body: JSON.stringify({ values: { owner: 'someone else', body: 'x' } }) })
        }
      }, { api, owner: record.id })
    }

    const front = await fromPage(frontPort)
    t.match(front.write, { status: 200, body: [{ body: `from ${frontPort}` }] }, 'the listed front end writes with the cookie (after a preflight)')
    t.match(front.read, { status: 200, body: { items: [{ body: `from ${frontPort}` }] } }, 'and reads the answer')
    t.match(front.refused, { status: 403, code: 'FB_ERR_FORBIDDEN' }, 'and reads a refusal\'s error code')

    const evil = await fromPage(evilPort)
    t.match(evil.write, { failed: /TypeError/ }, 'a page on another port: its preflighted write never leaves the browser')
    t.match(evil.read, { failed: /TypeError/ }, 'nor can it read an answer')
    const notes = await app.inject({ url: '/api/v1/table/notes/list', headers: { authorization: `Bearer ${token}` } })
    t.same(notes.json().items.map((n: { body: string }) => n.body), [`from ${frontPort}`], 'only the listed page wrote')
  })
}
