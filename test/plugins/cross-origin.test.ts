// Forged requests from pages of the same site (decision D51), over real HTTP on both dialects:
// the auth cookie authenticates a write (any method but GET/HEAD/OPTIONS) only when the browser says
// it comes from appUrl's origin, an `allowedOrigins` entry, a FASTBASE_ALLOWED_ORIGINS entry, or this
// server's own origin (`Sec-Fetch-Site: same-origin`). Every write path is tried with the victim's
// cookie from another port of the same host, from a sibling subdomain, with `Sec-Fetch-Site:
// same-site`, `Origin: null` and with neither header; each is a 403 FB_ERR_CROSS_ORIGIN and nothing
// changes. The same requests from allowed pages succeed, and bearer tokens are unaffected.
import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import { readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, forEachDialect } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { ConfigError } from '../../lib/errors.js'
import { SseClient } from '../fixtures/realtime/client.js'

const APP_ORIGIN = 'https://app.example.com'
const DEV_ORIGIN = 'http://localhost:5173'
const ENV_ORIGIN = 'https://admin.example.com:8443'
const COOKIE = '__Host-acme_auth'
const PASSWORD = 'correct horse'

const config = (extra: Partial<DatabaseSettings> = {}): DatabaseSettings => ({
  jwtSecret: 'cross-origin-secret',
  appUrl: `${APP_ORIGIN}/app`,
  rateLimit: false,
  authCookie: { name: 'acme_auth' },
  allowedOrigins: [`${DEV_ORIGIN}/`],
  realtime: { heartbeatSeconds: 0.5 },
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 3600, passwordConfirmSuffix: 'Confirm' },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    },
    {
      name: 'notes',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'body', type: 'text', sqlType: 'text' },
        { name: 'attachment', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'owner == auth.uid', viewRule: 'owner == auth.uid', createRule: 'owner == auth.uid', updateRule: 'owner == auth.uid', deleteRule: 'owner == auth.uid' }]
    }
  ],
  actions: [
    { name: 'rename', params: { id: 'string', body: 'string' }, steps: { type: 'UPDATE', table: 'notes', where: 'id == params.id', set: { body: 'params.body' } } }
  ],
  ...extra
})

interface Answer { status: number, code: string | null, body: any }

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.server.closeAllConnections())
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

/** One way of making the request: the headers a browser (or a program) would add. */
interface Sender { what: string, headers: Record<string, string> }

const REFUSED: Sender[] = [
  { what: 'a page on another port of the same host', headers: { origin: 'https://app.example.com:8080', 'sec-fetch-site': 'same-site' } },
  { what: 'a plain-http page on the same host', headers: { origin: 'http://app.example.com:8080' } },
  { what: 'a page on a sibling subdomain', headers: { origin: 'https://evil.example.com', 'sec-fetch-site': 'same-site' } },
  { what: 'Sec-Fetch-Site: same-site without Origin', headers: { 'sec-fetch-site': 'same-site' } },
  { what: 'Sec-Fetch-Site: cross-site without Origin', headers: { 'sec-fetch-site': 'cross-site' } },
  { what: 'Origin: null (a sandboxed frame)', headers: { origin: 'null', 'sec-fetch-site': 'cross-site' } },
  { what: 'an allowed origin with a path appended (not an origin)', headers: { origin: `${APP_ORIGIN}/app` } },
  { what: 'neither Origin nor Sec-Fetch-Site (curl with a cookie, an old browser)', headers: {} }
]

const ACCEPTED: Sender[] = [
  { what: "appUrl's origin", headers: { origin: APP_ORIGIN, 'sec-fetch-site': 'same-origin' } },
  { what: 'an allowedOrigins entry (another port)', headers: { origin: DEV_ORIGIN, 'sec-fetch-site': 'same-site' } },
  { what: 'a FASTBASE_ALLOWED_ORIGINS entry', headers: { origin: ENV_ORIGIN, 'sec-fetch-site': 'cross-site' } },
  { what: "this server's own origin (Sec-Fetch-Site: same-origin, not appUrl)", headers: { origin: 'http://api.internal:3000', 'sec-fetch-site': 'same-origin' } },
  { what: 'Sec-Fetch-Site: none (the user typed it)', headers: { 'sec-fetch-site': 'none' } }
]

forEachDialect(t, 'the auth cookie writes only from allowed origins', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect, env: { FASTBASE_ALLOWED_ORIGINS: ` ${ENV_ORIGIN} , ` } })
  const base = await listen(t, app)
  const call = async (path: string, init: { body?: unknown, form?: FormData, urlencoded?: string, cookie?: string, bearer?: string, headers?: Record<string, string>, method?: string }): Promise<Answer> => {
    const headers: Record<string, string> = { ...init.headers }
    if (init.cookie !== undefined) headers.cookie = init.cookie
    if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`
    let body: string | FormData | undefined
    if (init.form !== undefined) body = init.form
    else if (init.urlencoded !== undefined) { body = init.urlencoded; headers['content-type'] = 'application/x-www-form-urlencoded' } else if (init.body !== undefined) { body = JSON.stringify(init.body); headers['content-type'] = 'application/json' }
    const res = await fetch(`${base}/api/v1${path}`, { method: init.method ?? 'POST', headers, body })
    const text = await res.text()
    return { status: res.status, code: res.headers.get('fastbase-error-code'), body: text === '' ? undefined : JSON.parse(text) }
  }
  const signUp = async (username: string) => {
    const res = await call('/table/users/auth/sign-up', { body: { username, email: `${username}@example.com`, password: PASSWORD, passwordConfirm: PASSWORD, name: username } })
    t.equal(res.status, 200, `sign-up ${username}`)
    return { id: res.body.record.id as string, token: res.body.token as string }
  }
  const ann = await signUp('ann')
  const cookie = `${COOKIE}=${ann.token}`
  const note = await call('/table/notes/insert', { body: { values: { owner: ann.id, body: 'original' }, returning: 'id' }, bearer: ann.token })
  const noteId = note.body[0].id as string
  const read = async () => (await call(`/table/notes/list?order=id`, { method: 'GET', bearer: ann.token })).body.items.map((n: any) => [n.id, n.body, n.attachment])
  const before = await read()
  const filesDir = join(app.fastbase.options.dataDir, 'files')
  // Each stored object is a file plus its `.meta.json` sidecar (lib/files/storage/local.ts).
  const storedFiles = () => existsSync(filesDir) ? readdirSync(filesDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.meta.json')).length : 0

  const upload = () => {
    const form = new FormData()
    form.append('@filePayload', new Blob(['forged']), 'forged.txt')
    form.append('@jsonPayload', JSON.stringify({ values: { owner: ann.id, body: 'uploaded', attachment: '@filePayload.0' } }))
    return form
  }
  // Every write path a page could aim at the cookie, with what it would do.
  const writes: Array<{ what: string, send: (headers: Record<string, string>) => Promise<Answer> }> = [
    { what: 'insert', send: (headers) => call('/table/notes/insert', { body: { values: { owner: ann.id, body: 'forged' } }, cookie, headers }) },
    { what: 'insert (urlencoded form)', send: (headers) => call('/table/notes/insert', { urlencoded: `values.owner=${ann.id}&values.body=forged`, cookie, headers }) },
    { what: 'insert with or: REPLACE', send: (headers) => call('/table/notes/insert', { body: { values: { id: noteId, owner: ann.id, body: 'forged' }, or: 'REPLACE' }, cookie, headers }) },
    { what: 'update', send: (headers) => call('/table/notes/update', { body: { where: `id == '${noteId}'`, setValues: { body: 'forged' } }, cookie, headers }) },
    { what: 'edit', send: (headers) => call(`/table/notes/edit/${noteId}`, { body: { body: 'forged' }, cookie, headers }) },
    { what: 'edit?or=INSERT', send: (headers) => call('/table/notes/edit/newnote?or=INSERT', { body: { owner: ann.id, body: 'forged' }, cookie, headers }) },
    { what: 'delete', send: (headers) => call('/table/notes/delete', { body: { where: `id == '${noteId}'` }, cookie, headers }) },
    { what: 'multipart upload', send: (headers) => call('/table/notes/insert', { form: upload(), cookie, headers }) },
    { what: 'action', send: (headers) => call('/action/rename', { body: { id: noteId, body: 'forged' }, cookie, headers }) },
    { what: 'change-password', send: (headers) => call('/table/users/auth/change-password', { body: { password: 'forged password', passwordConfirm: 'forged password', passwordCurrent: PASSWORD }, cookie, headers }) },
    { what: 'request-verification', send: (headers) => call('/table/users/auth/request-verification', { body: {}, cookie, headers }) },
    { what: 'logout (ends the session)', send: (headers) => call('/table/users/auth/logout', { body: {}, cookie, headers }) },
    { what: 'cookie logout', send: (headers) => call('/auth/logout', { body: {}, cookie, headers }) },
    { what: 'DELETE of a route that does not exist', send: (headers) => call('/table/notes/list', { method: 'DELETE', cookie, headers }) }
  ]

  t.test('refused: 403 FB_ERR_CROSS_ORIGIN, nothing changes', async (t) => {
    for (const sender of REFUSED) {
      for (const write of writes) {
        const res = await write.send(sender.headers)
        t.equal(res.status, 403, `${write.what} from ${sender.what}: 403`)
        t.equal(res.code, 'FB_ERR_CROSS_ORIGIN', `${write.what} from ${sender.what}: FB_ERR_CROSS_ORIGIN`)
      }
    }
    const refused = await writes[0].send(REFUSED[0].headers)
    t.match(refused.body, { code: 403, message: /auth cookie.*Authorization: Bearer/ }, 'the message says what to do instead')
    t.same(await read(), before, 'no row inserted, changed or deleted')
    t.equal(storedFiles(), 0, 'no upload stored')
    t.equal((await call('/table/users/auth/login-password', { body: { identity: 'ann', password: PASSWORD } })).status, 200, 'the password is unchanged')
    t.equal((await call(`/table/users/view/${ann.id}`, { method: 'GET', bearer: ann.token })).status, 200, 'the session still stands')
    // An invalid token in the cookie is refused the same way (the origin is checked before the token).
    t.equal((await call('/table/notes/insert', { body: { values: {} }, cookie: `${COOKIE}=not-a-token`, headers: REFUSED[0].headers })).code, 'FB_ERR_CROSS_ORIGIN')
  })

  t.test('an admin token in the cookie: the admin routes are refused too', async (t) => {
    const adminCookie = `${COOKIE}=${adminToken}`
    const res = await call('/migrations', { body: { dryRun: true }, cookie: adminCookie, headers: REFUSED[0].headers })
    t.equal(res.code, 'FB_ERR_CROSS_ORIGIN')
    t.equal((await call('/setup-db', { body: {}, cookie: adminCookie, headers: {} })).code, 'FB_ERR_CROSS_ORIGIN')
    t.equal((await call('/migrations', { body: { dryRun: true }, cookie: adminCookie, headers: ACCEPTED[0].headers })).status, 200, 'from the app')
  })

  t.test('realtime: a stream opened with the cookie cannot be resubscribed from another origin', async (t) => {
    const stream = await SseClient.open(base, { cookie, query: 'subscribe=notes' })
    t.teardown(() => stream.close())
    t.equal(stream.status, 200, 'GET with the cookie (safe method): the stream opens')
    const body = { clientId: stream.clientId, subscriptions: [{ table: 'notes' }] }
    t.equal((await call('/realtime', { body, cookie, headers: REFUSED[0].headers })).code, 'FB_ERR_CROSS_ORIGIN')
    t.equal((await call('/realtime', { body, cookie, headers: ACCEPTED[0].headers })).status, 200)
  })

  t.test('reads with the cookie work from anywhere (GET is safe)', async (t) => {
    const res = await call('/table/notes/list', { method: 'GET', cookie, headers: REFUSED[0].headers })
    t.equal(res.status, 200)
    t.equal(res.body.items.length, before.length)
  })

  t.test('bearer tokens are unaffected by Origin', async (t) => {
    const res = await call(`/table/notes/edit/${noteId}`, { body: { body: 'by bearer' }, bearer: ann.token, headers: { origin: 'https://evil.example.net', 'sec-fetch-site': 'cross-site', cookie: `${COOKIE}=garbage` } })
    t.equal(res.status, 200, 'a bearer header wins over the cookie and is never origin-checked')
    const action = await call('/action/rename', { body: { id: noteId, body: 'by bearer action' }, bearer: ann.token, headers: { origin: 'null' } })
    t.equal(action.status, 200)
  })

  t.test('anonymous requests from other origins are not this check\'s business', async (t) => {
    const res = await call('/table/users/auth/sign-up', { body: { username: 'cid', email: 'cid@example.com', password: PASSWORD, passwordConfirm: PASSWORD, name: 'Cid' }, headers: REFUSED[0].headers })
    t.equal(res.status, 200, 'no cookie, nothing to forge: sign-up from another origin works')
  })

  t.test('accepted from allowed pages', async (t) => {
    for (const [i, sender] of ACCEPTED.entries()) {
      const edit = await call(`/table/notes/edit/${noteId}`, { body: { body: `edit ${i}` }, cookie, headers: sender.headers })
      t.equal(edit.status, 200, `edit from ${sender.what}`)
      const update = await call('/table/notes/update', { urlencoded: `where=id%20%3D%3D%20'${noteId}'&setValues.body=form%20${i}&returning=body`, cookie, headers: sender.headers })
      t.same([update.status, update.body], [200, [{ body: `form ${i}` }]], `urlencoded update from ${sender.what}`)
      const action = await call('/action/rename', { body: { id: noteId, body: `action ${i}` }, cookie, headers: sender.headers })
      t.equal(action.status, 200, `action from ${sender.what}`)
      const inserted = await call('/table/notes/insert', { form: upload(), cookie, headers: sender.headers })
      t.equal(inserted.status, 200, `multipart upload from ${sender.what}: ${JSON.stringify(inserted.body)}`)
      t.equal((await call('/table/notes/edit/upserted?or=INSERT', { body: { owner: ann.id, body: `upsert ${i}` }, cookie, headers: sender.headers })).status, 200, `edit?or=INSERT from ${sender.what}`)
      t.equal((await call('/table/notes/delete', { body: { where: "id == 'upserted'" }, cookie, headers: sender.headers })).status, 200, `delete from ${sender.what}`)
    }
    t.equal(storedFiles(), ACCEPTED.length, 'each accepted upload stored its file')
    const fresh = await call(`/table/notes/view/${noteId}`, { method: 'GET', bearer: ann.token })
    t.equal(fresh.body.body, `action ${ACCEPTED.length - 1}`, 'the last accepted action wrote the note')
    const changed = await call('/table/users/auth/change-password', { body: { password: 'new password 1', passwordConfirm: 'new password 1', passwordCurrent: PASSWORD }, cookie, headers: { origin: DEV_ORIGIN } })
    t.equal(changed.status, 200, 'change-password from an allowed origin')
    const out = await call('/table/users/auth/logout', { body: {}, cookie, headers: { origin: APP_ORIGIN } })
    t.equal(out.status, 200, 'logout from the app')
  })
})

t.test('a multipart upload is refused before its parts are read', async (t) => {
  const app = await buildApp(t, config())
  const base = new URL(await listen(t, app))
  const ann = await (await fetch(`${base.origin}/api/v1/table/users/auth/sign-up`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ann', email: 'ann@example.com', password: PASSWORD, passwordConfirm: PASSWORD, name: 'ann' })
  })).json() as { token: string }
  // The headers and the first bytes of a body that never ends: the answer must come anyway.
  const answer = await new Promise<{ status: number, code: unknown }>((resolve, reject) => {
    const req = httpRequest({
      host: base.hostname,
      port: base.port,
      method: 'POST',
      path: '/api/v1/table/notes/insert',
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(50 * 1024 * 1024), cookie: `${COOKIE}=${ann.token}`, origin: 'https://app.example.com:8080' }
    }, (res) => { resolve({ status: res.statusCode!, code: res.headers['fastbase-error-code'] }); res.resume(); req.destroy() })
    req.on('error', reject)
    req.write('--x\r\nContent-Disposition: form-data; name="@filePayload"; filename="a.txt"\r\n\r\n' + 'a'.repeat(64 * 1024))
    setTimeout(() => reject(new Error('no answer within 5 s: the body was being read')), 5000).unref()
  })
  t.same(answer, { status: 403, code: 'FB_ERR_CROSS_ORIGIN' })
})

t.test('start-up validation of the origins', async (t) => {
  const problems = async (extra: Partial<DatabaseSettings>, env: Record<string, string> = {}): Promise<string[]> => {
    try {
      await buildApp(t, config(extra), { env })
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
    return []
  }
  t.same(await problems({ allowedOrigins: ['http://localhost:5173', 'https://x.example.com/', 'HTTPS://Y.Example.com:443'] }), [], 'origins, a trailing slash, any case, a default port')
  t.same(await problems({ allowedOrigins: ['*', 'localhost:5173', 'http://localhost:5173/app', 'https://u:p@x.example.com', 'ftp://x.example.com', 'https://x.example.com?q'] }), [
    'allowedOrigins[0]: must be an origin: scheme, host and optional port (http://localhost:5173)',
    'allowedOrigins[1]: must be an origin: scheme, host and optional port (http://localhost:5173)',
    'allowedOrigins[2]: must be an origin without a path, query or fragment (http://localhost:5173)',
    'allowedOrigins[3]: must not carry a user name or password',
    'allowedOrigins[4]: must be an origin: scheme, host and optional port (http://localhost:5173)',
    'allowedOrigins[5]: must be an origin without a path, query or fragment (https://x.example.com)'
  ])
  t.same(await problems({ appUrl: 'app.example.com' }), ['appUrl: must be an absolute http(s) URL (email links, OAuth callbacks and the origin cookie-authenticated writes come from are built from it)'])
  t.same(await problems({}, { FASTBASE_ALLOWED_ORIGINS: 'http://localhost:5173,*' }), ['FASTBASE_ALLOWED_ORIGINS: "*" must be an origin: scheme, host and optional port (http://localhost:5173)'])
  t.same(await problems({ authCookie: { name: '__Host-x', domain: 'example.com', path: '/api', secure: false } }), [
    'authCookie.domain: a __Host- cookie cannot have a domain (browsers refuse it)',
    'authCookie.path: a __Host- cookie must have path / (browsers refuse it)',
    'authCookie.secure: a __Host- cookie must be secure (browsers refuse it)'
  ])
})

t.test('the auth cookie: __Host- under https, the configured name under http', async (t) => {
  const cookieOf = async (extra: Partial<DatabaseSettings>) => {
    const app = await buildApp(t, config(extra))
    const token = (await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'ann', email: 'ann@example.com', password: PASSWORD, passwordConfirm: PASSWORD, name: 'ann' } })).json().token as string
    const select = async (cookie: string) => (await app.inject({ method: 'GET', url: '/api/v1/table/users/select?select=username', headers: { cookie } })).json()
    const cleared = String((await app.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: {}, headers: { origin: APP_ORIGIN } })).headers['set-cookie'])
    return { app, token, select, cleared, name: app.fastbase.auth.cookie?.name }
  }
  const https = await cookieOf({})
  t.equal(https.name, '__Host-acme_auth')
  t.same(await https.select(`__Host-acme_auth=${https.token}`), [{ username: 'ann' }], 'read under the name it is set with')
  t.same(await https.select(`acme_auth=${https.token}`), [], 'the unprefixed name (a sibling subdomain can plant it) is not read')
  t.match(https.cleared, /^__Host-acme_auth=;/)
  t.match(https.cleared, /; Path=\//)
  t.match(https.cleared, /; Secure/, 'cleared with Secure, or the browser ignores the clearing')
  t.notMatch(https.cleared, /Domain=/i)
  t.same(https.app.fastbase.auth.cookie, { name: '__Host-acme_auth', attributes: { httpOnly: true, secure: true, sameSite: 'lax', path: '/', domain: undefined }, maxAge: undefined })

  const http = await cookieOf({ appUrl: 'http://localhost:3000' })
  t.equal(http.name, 'acme_auth', 'plain http: browsers refuse __Host- without Secure, so the name stays')
  t.same(await http.select(`acme_auth=${http.token}`), [{ username: 'ann' }])
  t.match(http.cleared, /^acme_auth=;/)

  const shared = await cookieOf({ authCookie: { name: 'acme_auth', domain: 'example.com' } })
  t.equal(shared.name, 'acme_auth', 'a configured domain keeps the name (with a start-up warning)')
  t.match(shared.app.fastbase.auth.cookie?.warning, /domain keeps the cookie's name without the __Host- prefix/)
  t.match(shared.cleared, /Domain=example.com/)

  const prefixed = await cookieOf({ authCookie: { name: '__Host-own' } })
  t.equal(prefixed.name, '__Host-own', 'a name already prefixed is not prefixed twice')
})
