// CORS (decision D97): off by default; `cors.origins` in the config, FASTBASE_CORS_ORIGINS, and the
// older names `allowedOrigins` / FASTBASE_ALLOWED_ORIGINS fill one list, which CORS answers (with
// credentials, the error-code header exposed) and the auth cookie's write check reads. Over real
// HTTP, since CORS is headers a browser reads; test/plugins/cors-browser.test.ts drives chromium.
import t from 'tap'
import Fastify from 'fastify'
import fastifyCors from '@fastify/cors'
import type { AddressInfo } from 'node:net'
import fastbase from '../../app.js'
import { buildApp, forEachDialect, freshDir, sharedDatabase } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import { startupChecks } from '../../lib/config/startup-checks.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const FRONT = 'http://localhost:5173'
const OTHER = 'http://localhost:5174'

const config = (extra: Partial<DatabaseSettings> = {}): DatabaseSettings => ({
  jwtSecret: 'cors-secret',
  appUrl: 'http://localhost:3000',
  rateLimit: false,
  authCookie: { name: 'cors_auth' },
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
      fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'auth.uid != null', updateRule: null, deleteRule: null }]
    }
  ],
  ...extra
})

/** A listening app's base URL (closed with the app). */
async function listen (app: Awaited<ReturnType<typeof buildApp>>): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const preflight = async (base: string, path: string, origin: string, headers = 'content-type, authorization'): Promise<Response> =>
  await fetch(`${base}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers } })

forEachDialect(t, 'off by default: no CORS header for any origin, no preflight', async (t, dialect) => {
  const base = await listen(await buildApp(t, config(), { dialect }))
  const get = await fetch(`${base}/api/v1/table/notes/list`, { headers: { origin: FRONT } })
  t.equal(get.status, 200)
  t.equal(get.headers.get('access-control-allow-origin'), null)
  t.equal(get.headers.get('access-control-allow-credentials'), null)
  const pre = await preflight(base, '/api/v1/table/notes/insert', FRONT)
  t.equal(pre.status, 404, 'no preflight route')
  t.equal(pre.headers.get('access-control-allow-origin'), null)
})

forEachDialect(t, 'cors.origins: preflight and answers for a listed origin, nothing for another', async (t, dialect) => {
  const base = await listen(await buildApp(t, config({ cors: { origins: [`${FRONT}/`] } }), { dialect }))
  const pre = await preflight(base, '/api/v1/table/notes/insert', FRONT)
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('access-control-allow-origin'), FRONT, 'the origin, serialized as the browser sends it')
  t.equal(pre.headers.get('access-control-allow-credentials'), 'true')
  t.match(pre.headers.get('access-control-allow-methods'), /\bPATCH\b.*\bDELETE\b/)
  t.equal(pre.headers.get('access-control-allow-headers'), 'content-type, authorization')
  t.equal(pre.headers.get('access-control-max-age'), '600')
  t.match(pre.headers.get('vary'), /Origin/)

  const ok = await fetch(`${base}/api/v1/table/notes/list`, { headers: { origin: FRONT } })
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('access-control-allow-origin'), FRONT)
  t.equal(ok.headers.get('access-control-allow-credentials'), 'true')
  // A page reads these or nothing: the error code, the request id, and the stored names of its upload.
  t.same(ok.headers.get('access-control-expose-headers')?.split(/,\s*/), ['Fastbase-Error-Code', 'x-request-id', 'x-uploaded-files', 'x-deleted-files'])
  t.match(ok.headers.get('vary'), /Origin/)

  const refused = await fetch(`${base}/api/v1/table/notes/insert`, { method: 'POST', headers: { origin: FRONT, 'content-type': 'application/json' }, body: JSON.stringify({ values: { body: 'x' } }) })
  t.equal(refused.status, 403, 'an error answer carries CORS too, so the page can read why')
  t.equal(refused.headers.get('access-control-allow-origin'), FRONT)
  t.ok(refused.headers.get('fastbase-error-code'), 'with the error code the page may read')
  const missing = await fetch(`${base}/api/v1/no-such-route`, { headers: { origin: FRONT } })
  t.equal(missing.status, 404)
  t.equal(missing.headers.get('access-control-allow-origin'), FRONT, 'the API\'s 404 too')

  for (const origin of [OTHER, 'null', 'http://localhost:5173.evil.example', 'HTTP://LOCALHOST:5173']) {
    const other = await fetch(`${base}/api/v1/table/notes/list`, { headers: { origin } })
    t.equal(other.status, 200, `${origin}: answered (CORS only keeps the browser from reading it)`)
    t.equal(other.headers.get('access-control-allow-origin'), null, `${origin}: no allow-origin`)
    t.equal(other.headers.get('access-control-allow-credentials'), null, `${origin}: no credentials`)
    t.equal(other.headers.get('access-control-expose-headers'), null, `${origin}: nothing exposed`)
    const otherPre = await preflight(base, '/api/v1/table/notes/insert', origin)
    t.equal(otherPre.status, 404, `${origin}: its preflight finds nothing`)
    t.equal(otherPre.headers.get('access-control-allow-origin'), null)
  }
  const realtime = await preflight(base, '/api/v1/realtime', FRONT, 'content-type')
  t.equal(realtime.status, 204, 'the realtime routes are under the same CORS')
  const panel = await fetch(`${base}/panel/`, { headers: { origin: FRONT } })
  t.equal(panel.headers.get('access-control-allow-origin'), null, 'the panel is not the API: no CORS')
})

forEachDialect(t, 'the environment and the older names fill the same list', async (t, dialect) => {
  const cases: Array<{ what: string, extra?: Partial<DatabaseSettings>, env?: Record<string, string> }> = [
    { what: 'FASTBASE_CORS_ORIGINS', env: { FASTBASE_CORS_ORIGINS: ` ${OTHER} , ${FRONT}` } },
    { what: 'FASTBASE_ALLOWED_ORIGINS (older name)', env: { FASTBASE_ALLOWED_ORIGINS: FRONT } },
    { what: 'allowedOrigins (older name)', extra: { allowedOrigins: [FRONT] } }
  ]
  for (const { what, extra, env } of cases) {
    const app = await buildApp(t, config(extra), { dialect, env })
    t.same(app.fastbase.options.origins.includes(FRONT), true, `${what}: listed`)
    const base = await listen(app)
    const answer = await fetch(`${base}/api/v1/table/notes/list`, { headers: { origin: FRONT } })
    t.equal(answer.headers.get('access-control-allow-origin'), FRONT, `${what}: CORS answers the origin`)
  }
})

forEachDialect(t, 'the cookie-write check reads the same list', async (t, dialect) => {
  const app = await buildApp(t, config({ cors: { origins: [FRONT] } }), { dialect })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'u1', email: 'u1@example.com', password: 'a long password', name: 'U' } })
  const { token } = signUp.json() as { token: string }
  const write = async (origin: string) => await app.inject({
    method: 'POST',
    url: '/api/v1/table/notes/insert',
    headers: { cookie: `cors_auth=${token}`, origin, 'sec-fetch-site': 'same-site' },
    payload: { values: { body: `from ${origin}` } }
  })
  const listed = await write(FRONT)
  t.equal(listed.statusCode, 200, 'a listed origin writes with the cookie')
  t.equal(listed.headers['access-control-allow-origin'], FRONT)
  const other = await write(OTHER)
  t.equal(other.statusCode, 403)
  t.equal(other.json().code, 403)
  t.equal(other.headers['fastbase-error-code'], 'FB_ERR_CROSS_ORIGIN')
  t.equal(other.headers['access-control-allow-origin'], undefined)
})

t.test('entries that are not origins stop the start, named by where they came from', async (t) => {
  const problems = async (extra: object, env: Record<string, string> = {}) => (await startupChecks({ ...config(), ...extra }, env, 'sqlite')).problems
  t.same(await problems({ cors: { origins: [FRONT, 'HTTPS://Y.Example.com:443'] } }), [])
  t.same(await problems({ cors: { origins: ['*', 'http://localhost:5173/app'] }, allowedOrigins: ['localhost:5173'] }), [
    'allowedOrigins[0]: must be an origin: scheme, host and optional port (http://localhost:5173)',
    'cors.origins[0]: must be an origin: scheme, host and optional port (http://localhost:5173)',
    'cors.origins[1]: must be an origin without a path, query or fragment (http://localhost:5173)'
  ])
  t.same(await problems({}, { FASTBASE_CORS_ORIGINS: `${FRONT},*` }), ['FASTBASE_CORS_ORIGINS: "*" must be an origin: scheme, host and optional port (http://localhost:5173)'])
  t.match(await problems({ cors: { origin: [FRONT] } }), [/cors/], 'a misspelt key is a problem, not silently no CORS')
})

t.test('as a plugin: CORS covers fastbase\'s routes only, beside a second instance and a host\'s own @fastify/cors', async (t) => {
  const host = Fastify()
  t.teardown(() => host.close())
  host.get('/hello', async () => ({ hello: 'host' }))
  await host.register(fastbase, { config: config({ cors: { origins: [FRONT] } }), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), env: {} })
  await host.register(fastbase, { config: config({ appName: 'second', cors: { origins: [OTHER] } }), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), env: {}, prefix: '/second/v1', panelPrefix: false, decorator: 'second' })
  await host.ready()
  const hello = await host.inject({ url: '/hello', headers: { origin: FRONT } })
  t.equal(hello.headers['access-control-allow-origin'], undefined, 'the host\'s route is left alone')
  t.equal((await host.inject({ url: '/api/v1/table/notes/list', headers: { origin: FRONT } })).headers['access-control-allow-origin'], FRONT)
  t.equal((await host.inject({ url: '/api/v1/table/notes/list', headers: { origin: OTHER } })).headers['access-control-allow-origin'], undefined)
  t.equal((await host.inject({ url: '/second/v1/table/notes/list', headers: { origin: OTHER } })).headers['access-control-allow-origin'], OTHER, 'each instance its own list')

  const withOwn = Fastify()
  t.teardown(() => withOwn.close())
  await withOwn.register(fastifyCors, { origin: OTHER })
  await withOwn.register(fastbase, { config: config({ cors: { origins: [FRONT] } }), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), env: {} })
  await withOwn.ready()
  const answer = await withOwn.inject({ url: '/api/v1/table/notes/list', headers: { origin: FRONT } })
  t.equal(answer.statusCode, 200, 'a host with its own @fastify/cors starts')
  t.equal(answer.headers['access-control-allow-origin'], OTHER, 'and its settings answer')
})
