// Per-table auth on both dialects: accounts, tokens, sessions, email flows through a real SMTP server,
// cookies, rules that read the caller, admin sign-in, rate limits, and two instances sharing a database.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { simpleParser, type ParsedMail } from 'mailparser'
import { mailbox } from '../../fixtures/mailbox.js'
import { createHash } from 'node:crypto'
import { buildApp, forEachDialect, adminToken, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

function configWith (smtpUrl: string, extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  return {
    jwtSecret: 'global-secret',
    appUrl: 'https://app.example.com',
    appName: 'Acme',
    rateLimit: false,
    authCookie: { name: 'acme_auth', sameSite: 'Lax' },
    email: { from: 'Acme <noreply@example.com>', smtp: smtpUrl },
    tables: [
      {
        name: 'users',
        autoSetUid: true,
        fields: [...baseFields, ...authFields],
        extensions: [
          { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600, maxTokenRefresh: 3, passwordConfirmSuffix: 'Confirm' },
          { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
        ]
      },
      {
        name: 'notes',
        autoSetUid: true,
        fields: [
          ...baseFields,
          { name: 'owner', type: 'relation', sqlType: 'text', notNull: true },
          { name: 'body', type: 'text', sqlType: 'text' }
        ],
        extensions: [{
          name: 'rules',
          listRule: 'owner == auth.uid | auth.role == \'staff\'',
          viewRule: 'owner == auth.uid',
          createRule: 'owner == auth.uid & auth.name == \'Ada\'',
          updateRule: 'owner == auth.uid',
          deleteRule: 'owner == auth.uid'
        }]
      }
    ],
    ...extra
  }
}

const ada = { username: 'ada', email: 'Ada@Example.com', password: 'correct horse', passwordConfirm: 'correct horse', name: 'Ada' }

function api (app: FastifyInstance) {
  return {
    post: (url: string, payload: unknown, token?: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } }),
    get: (url: string, token?: string, headers: Record<string, string> = {}) =>
      app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } })
  }
}

const tokenIn = (mail: ParsedMail, segment: string): string => {
  const match = new RegExp(`${segment}/([A-Za-z0-9_-]+)`).exec(mail.text ?? '')
  if (match === null) throw new Error(`no ${segment} link in: ${mail.text}`)
  return match[1]
}

forEachDialect(t, 'auth', async (t, dialect) => {
  const mail = await mailbox(t)
  const app = await buildApp(t, configWith(mail.url), { dialect })
  const { post, get } = api(app)

  const signUp = await post('/table/users/auth/sign-up', ada)
  t.equal(signUp.statusCode, 200, 'sign-up')
  const session = signUp.json()
  t.match(session, { token: String, refresh_token: String, verified: false, record: { username: 'ada', email: 'ada@example.com', email_verified: false, name: 'Ada' } })
  t.notOk('password' in session.record || 'password_salt' in session.record, 'no noSelect field in the record')
  const adaId = session.record.id as string

  t.test('sign-up failures', async (t) => {
    const dup = await post('/table/users/auth/sign-up', { ...ada, username: 'ada2' })
    t.match(dup.json(), { code: 400, data: { email: { code: 'unique' } } }, 'duplicate email (normalised)')
    const dupName = await post('/table/users/auth/sign-up', { ...ada, email: 'other@example.com' })
    t.match(dupName.json(), { code: 400, data: { username: { code: 'unique' } } })
    const mismatch = await post('/table/users/auth/sign-up', { ...ada, username: 'bob', email: 'bob@example.com', passwordConfirm: 'nope nope' })
    t.match(mismatch.json(), { code: 400, message: 'Validation Error', data: { passwordConfirm: { _errors: [/match/] } } })
    const short = await post('/table/users/auth/sign-up', { ...ada, username: 'bob', email: 'bob@example.com', password: 'short', passwordConfirm: 'short' })
    t.match(short.json(), { code: 400, data: { password: { _errors: ['Password must be at least 8 characters long'] } } })
    const verifiedFlag = await post('/table/users/auth/sign-up', { ...ada, username: 'bob', email: 'bob@example.com', email_verified: true })
    t.same(verifiedFlag.json(), { code: 403, message: 'Cannot insert email_verified field', data: {} })
  })

  t.test('login', async (t) => {
    const byEmail = await post('/table/users/auth/login-password', { identity: 'ADA@example.com', password: 'correct horse' })
    t.equal(byEmail.statusCode, 200, 'email identity is case-insensitive')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).statusCode, 200, 'username identity')
    const wrong = await post('/table/users/auth/login-password', { identity: 'ada', password: 'wrong password' })
    const unknown = await post('/table/users/auth/login-password', { identity: 'nobody', password: 'wrong password' })
    t.same(wrong.json(), { code: 400, message: 'Invalid username or password', data: {} })
    t.same(unknown.json(), wrong.json(), 'the same answer for an unknown user: no enumeration')
  })

  t.test('tokens: claims, tampering, expiry', async (t) => {
    const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString())
    t.match(claims, { cid: 'users', id: adaId, user: 'ada', sub: 'ada@example.com', verified: false, sid: String, iss: '$db' })
    t.equal(claims.exp - claims.iat, 600, 'jwtTokenDuration')
    t.same((await get('/table/users/select?select=id', session.token)).json(), [{ id: adaId }], 'the token authenticates: listRule auth.uid == id')
    const [h, p, s] = session.token.split('.')
    const forged = Buffer.from(JSON.stringify({ ...claims, id: 'someone-else' })).toString('base64url')
    t.same((await get('/table/users/select', `${h}.${forged}.${s}`)).json(), { code: 401, message: 'Invalid or expired token', data: {} }, 'tampered payload')
    // Its first character: the last one's low bits are padding, and could be changed to no effect.
    t.equal((await get('/table/users/select', `${h}.${p}.${s[0] === 'x' ? 'y' : 'x'}${s.slice(1)}`)).statusCode, 401, 'tampered signature')
    const at = app.fastbase.auth.tables.get('users')!
    const now = Math.floor(Date.now() / 1000)
    const expired = at.key.sign({ ...claims, iat: now - 100, exp: now - 10 })
    t.equal((await get('/table/users/select', expired)).statusCode, 401, 'expired token')
    const wrongKey = app.fastbase.auth.adminKeys.get('superadmin')!.sign({ ...claims })
    t.equal((await get('/table/users/select', wrongKey)).statusCode, 401, 'signed with another key')
    const adminClaim = at.key.sign({ ...claims, admin: true })
    t.same((await get('/table/notes/select', adminClaim)).json(), [], 'an admin claim in a user token grants nothing')
  })

  t.test('refresh rotation and reuse detection', async (t) => {
    const login = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).json()
    const first = await post('/table/users/auth/refresh-token', { refresh_token: login.refresh_token }, login.token)
    t.equal(first.statusCode, 200, 'refresh')
    const rotated = first.json()
    t.not(rotated.refresh_token, login.refresh_token, 'a new refresh token')
    t.equal(JSON.parse(Buffer.from(rotated.token.split('.')[1], 'base64url').toString()).sid, JSON.parse(Buffer.from(login.token.split('.')[1], 'base64url').toString()).sid, 'same session')
    const replay = await post('/table/users/auth/refresh-token', { refresh_token: login.refresh_token })
    t.same(replay.json(), { code: 401, message: 'Invalid session', data: {} }, 'a rotated token is refused')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: rotated.refresh_token })).statusCode, 401, 'and its whole session is revoked')
    t.equal((await get('/table/users/select', rotated.token)).statusCode, 401, 'including the access token')
    t.equal((await get('/table/users/select', session.token)).statusCode, 200, 'other sessions are untouched')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: 'made-up' })).statusCode, 401)
  })

  t.test('maxTokenRefresh allows exactly N refreshes', async (t) => {
    let current = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).json()
    for (let i = 1; i <= 3; i++) {
      const res = await post('/table/users/auth/refresh-token', { refresh_token: current.refresh_token })
      t.equal(res.statusCode, 200, `refresh ${i}`)
      current = res.json()
    }
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: current.refresh_token })).statusCode, 401, 'refresh 4 is refused')
  })

  t.test('logout revokes the session and clears the cookie', async (t) => {
    const login = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).json()
    t.notOk((await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).headers['set-cookie'], 'JSON logins set no cookie')
    const viaCookie = await get('/table/users/select?select=id', undefined, { cookie: `__Host-acme_auth=${login.token}` })
    t.same(viaCookie.json(), [{ id: adaId }], 'the auth cookie authenticates like the header')
    const out = await post('/table/users/auth/logout', {}, login.token)
    t.same(out.json(), { success: true })
    t.match(String(out.headers['set-cookie']), /^__Host-acme_auth=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/)
    t.equal((await get('/table/users/select', login.token)).statusCode, 401, 'the access token is refused after logout')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: login.refresh_token })).statusCode, 401, 'so is the refresh token')
    t.equal((await post('/table/users/auth/logout', {})).statusCode, 401, 'logout needs a session')
    const dbLogout = await post('/auth/logout', {})
    t.same(dbLogout.json(), { success: true })
    t.match(String(dbLogout.headers['set-cookie']), /^__Host-acme_auth=;.*; Secure/)
  })

  t.test('rules read auth.uid, auth.role and auth.<field>', async (t) => {
    const note = await post('/table/notes/insert', { values: { owner: adaId, body: 'mine' }, returning: 'id' }, session.token)
    t.equal(note.statusCode, 200, 'createRule: owner == auth.uid & auth.name == \'Ada\'')
    t.equal((await post('/table/notes/insert', { values: { owner: 'someone', body: 'x' } }, session.token)).statusCode, 403)
    const bob = (await post('/table/users/auth/sign-up', { username: 'bob', email: 'bob@example.com', password: 'bob password', passwordConfirm: 'bob password', name: 'Bob' })).json()
    t.equal((await post('/table/notes/insert', { values: { owner: bob.record.id, body: 'x' } }, bob.token)).statusCode, 403, 'auth.name is Bob')
    t.same((await get('/table/notes/select?select=body', bob.token)).json(), [], 'bob sees nothing')
    await post('/table/users/update', { where: `id == '${bob.record.id}'`, setValues: { role: 'staff' } }, adminToken)
    t.same((await get('/table/notes/select?select=body', bob.token)).json(), [{ body: 'mine' }], 'auth.role is read fresh from the record')
  })

  t.test('change-password', async (t) => {
    const other = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).json()
    const mine = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).json()
    const wrong = await post('/table/users/auth/change-password', { password: 'new password!', passwordConfirm: 'new password!', passwordCurrent: 'nope nope' }, mine.token)
    t.same(wrong.json(), { code: 400, message: 'Invalid current password', data: {} })
    t.equal((await post('/table/users/auth/change-password', { password: 'new password!', passwordConfirm: 'new password!', passwordCurrent: 'correct horse' })).statusCode, 401, 'needs a session')
    const ok = await post('/table/users/auth/change-password', { password: 'new password!', passwordConfirm: 'new password!', passwordCurrent: 'correct horse' }, mine.token)
    t.same(ok.json(), { success: true })
    t.equal((await get('/table/users/select', other.token)).statusCode, 401, 'other sessions revoked')
    t.equal((await get('/table/users/select', mine.token)).statusCode, 200, 'the current one stays')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'correct horse' })).statusCode, 400, 'old password refused')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'new password!' })).statusCode, 200)
    const extra = await post('/table/users/auth/change-password', { password: 'new password!', passwordConfirm: 'new password!', passwordCurrent: 'new password!', role: 'admin' }, mine.token)
    t.equal(extra.statusCode, 200, 'unknown keys are ignored (decision D36)')
    const [row] = (await app.inject({ method: 'GET', url: '/api/v1/table/users/select?select=role', headers: { authorization: `Bearer ${mine.token}` } })).json()
    t.same(row, { role: null }, 'change-password writes the password only')
  })

  t.test('password reset through email', async (t) => {
    const before = mail.count()
    t.same((await post('/table/users/auth/request-password-reset', { email: 'nobody@example.com' })).json(), { success: true }, 'unknown email: same answer')
    const asked = await post('/table/users/auth/request-password-reset', { email: 'ADA@example.com' })
    t.same(asked.json(), { success: true })
    const message = await mail.next()
    t.equal(mail.count(), before + 1, 'exactly one email: none for the unknown address')
    t.equal(message.subject, 'Reset your Acme password')
    t.equal((message.to as { text: string }).text, 'ada@example.com')
    const token = tokenIn(message, 'https://app.example.com/reset-password')
    const live = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'new password!' })).json()
    const mismatch = await post('/table/users/auth/confirm-password-reset', { token, password: 'reset password', passwordConfirm: 'other' })
    t.equal(mismatch.statusCode, 400, 'a bad confirm field does not burn the token')
    const done = await post('/table/users/auth/confirm-password-reset', { token, password: 'reset password', passwordConfirm: 'reset password' })
    t.equal(done.statusCode, 200, done.body)
    t.match(done.json(), { token: String, refresh_token: String, record: { email_verified: true } }, 'a reset verifies the email')
    t.equal((await get('/table/users/select', live.token)).statusCode, 401, 'every earlier session is revoked')
    t.equal((await get('/table/users/select', done.json().token)).statusCode, 200, 'the new one works')
    t.same((await post('/table/users/auth/confirm-password-reset', { token, password: 'again again', passwordConfirm: 'again again' })).json(), { code: 400, message: 'Invalid token', data: {} }, 'single use')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'reset password' })).statusCode, 200)
    const stale = await app.fastbase.auth.oneTimeTokens.issue('reset_password', 'users', { userId: adaId, email: 'ada@example.com' }, -1)
    t.same((await post('/table/users/auth/confirm-password-reset', { token: stale, password: 'stale stale', passwordConfirm: 'stale stale' })).json(), { code: 400, message: 'Invalid token', data: {} }, 'an expired token is refused')
    const wrongKind = await app.fastbase.auth.oneTimeTokens.issue('verify_email', 'users', { userId: adaId, email: 'ada@example.com' }, 600)
    t.equal((await post('/table/users/auth/confirm-password-reset', { token: wrongKind, password: 'stale stale', passwordConfirm: 'stale stale' })).statusCode, 400, 'a verification token cannot reset a password')
  })

  t.test('email verification', async (t) => {
    const carol = (await post('/table/users/auth/sign-up', { username: 'carol', email: 'carol@example.com', password: 'carol password', passwordConfirm: 'carol password', name: 'Carol' })).json()
    t.equal((await post('/table/users/auth/request-verification', {})).statusCode, 401, 'needs a session')
    t.equal((await post('/table/users/auth/request-verification', {}, adminToken)).statusCode, 403, 'an admin has no email of this table to verify')
    t.same((await post('/table/users/auth/request-verification', {}, carol.token)).json(), { success: true })
    const message = await mail.next()
    t.equal(message.subject, 'Verify your Acme email')
    const throttled = await post('/table/users/auth/request-verification', {}, carol.token)
    t.equal(throttled.statusCode, 429, 'throttled per account')
    const token = tokenIn(message, 'https://app.example.com/verify-email')
    const confirmed = await post('/table/users/auth/confirm-verification', { token })
    t.match(confirmed.json(), { token: String, refresh_token: String, record: { email_verified: true }, verified: true })
    t.same((await post('/table/users/auth/confirm-verification', { token })).json(), { code: 400, message: 'Invalid token', data: {} }, 'single use')
    const claims = JSON.parse(Buffer.from(confirmed.json().token.split('.')[1], 'base64url').toString())
    t.equal(claims.verified, true)
    t.same((await post('/table/users/auth/request-verification', {}, confirmed.json().token)).json(), { code: 400, message: 'Already verified', data: {} })
  })

  t.test('passwords through the table API', async (t) => {
    const created = await post('/table/users/insert', { values: { username: 'dan', email: 'dan@example.com', password: 'dan password', passwordConfirm: 'dan password', name: 'Dan' }, returning: '*' }, adminToken)
    t.equal(created.statusCode, 200, created.body)
    t.match(created.json()[0].password, /^scrypt\$/, 'hashed, and admins see noSelect fields')
    const dan = (await post('/table/users/auth/login-password', { identity: 'dan', password: 'dan password' })).json()
    const noCurrent = await post(`/table/users/edit/${dan.record.id}`, { password: 'dan new pass', passwordConfirm: 'dan new pass' }, dan.token)
    t.match(noCurrent.json(), { code: 400, message: 'passwordCurrent is required', data: { _errors: [], passwordCurrent: { _errors: ['passwordCurrent is required'] } } })
    const withCurrent = await post(`/table/users/edit/${dan.record.id}`, { password: 'dan new pass', passwordConfirm: 'dan new pass', passwordCurrent: 'dan password' }, dan.token)
    t.equal(withCurrent.statusCode, 200, withCurrent.body)
    t.equal((await post('/table/users/auth/login-password', { identity: 'dan', password: 'dan new pass' })).statusCode, 200)
    const viaSet = await post('/table/users/update', { where: 'true', set: { password: '\'plain\'' } }, adminToken)
    t.match(viaSet.json(), { code: 400, data: { password: { _errors: [/setValues/] } } }, 'a password cannot be set by expression')
    const hidden = await get('/table/users/select?select=password', dan.token)
    t.match(hidden.json(), { code: 400, message: /Unknown column "password"/ }, 'users cannot read password hashes')
  })

  t.test('legacy teenybase sha256 hashes verify and are upgraded', async (t) => {
    const legacy = createHash('sha256').update('legacy password' + 'somesalt').digest('hex')
    await app.fastbase.db('users').insert({ id: 'legacyuser000000000000', username: 'old', email: 'old@example.com', password: legacy, password_salt: 'somesalt', name: 'Old', email_verified: app.fastbase.dialect.encode(app.fastbase.config.tables[0].fields.find((f) => f.name === 'email_verified')!, false), created: app.fastbase.db.fn.now(), updated: app.fastbase.db.fn.now() })
    t.equal((await post('/table/users/auth/login-password', { identity: 'old', password: 'wrong' })).statusCode, 400)
    t.equal((await post('/table/users/auth/login-password', { identity: 'old', password: 'legacy password' })).statusCode, 200)
    const row = await app.fastbase.db('users').where({ id: 'legacyuser000000000000' }).first()
    t.match(row.password, /^scrypt\$/, 'rehashed on login')
    t.equal((await post('/table/users/auth/login-password', { identity: 'old', password: 'legacy password' })).statusCode, 200, 'and still logs in')
  })

  t.test('admin sign-in', async (t) => {
    const bad = await post('/admin/login', { password: 'guess' })
    t.same(bad.json(), { code: 401, message: 'Invalid credentials', data: {} })
    const su = await post('/admin/login', { password: adminToken })
    t.match(su.json(), { role: 'superadmin', token: String })
    t.equal((await post('/table/users/update', { where: 'false', setValues: { name: 'x' } }, su.json().token)).statusCode, 200, 'the admin token is an admin')
  })

  t.test('OpenAPI lists the auth routes', async (t) => {
    const doc = (await get('/doc')).json()
    for (const route of ['sign-up', 'login-password', 'refresh-token', 'change-password', 'request-password-reset', 'confirm-password-reset', 'request-verification', 'confirm-verification', 'logout']) {
      t.ok(doc.paths[`/api/v1/table/users/auth/${route}`]?.post, route)
    }
    const body = doc.paths['/api/v1/table/users/auth/sign-up'].post.requestBody.content['application/json'].schema
    const signUp = typeof body.$ref === 'string' ? doc.components.schemas[body.$ref.split('/').pop()] : body
    t.ok(signUp.properties.passwordConfirm, 'sign-up body schema (a shared component)')
  })
})

forEachDialect(t, 'viewer and editor admins', async (t, dialect) => {
  const app = await buildApp(t, configWith('', { admin: { viewerPassword: 'viewer-pass', editorPassword: 'editor-pass' }, email: undefined }), { dialect })
  const { post, get } = api(app)
  const viewer = (await post('/admin/login', { password: 'viewer-pass' })).json()
  t.equal(viewer.role, 'viewer')
  t.equal((await get('/table/notes/select', viewer.token)).statusCode, 200, 'viewer reads')
  t.equal((await post('/table/notes/insert', { values: { owner: 'x' } }, viewer.token)).statusCode, 403, 'viewer cannot write')
  const editor = (await post('/admin/login', { password: 'editor-pass' })).json()
  t.equal((await post('/table/notes/insert', { values: { owner: 'x' } }, editor.token)).statusCode, 200, 'editor writes')
})

forEachDialect(t, 'rate limits', async (t, dialect) => {
  const app = await buildApp(t, configWith('', { rateLimit: { max: 2, timeWindow: 60_000 }, email: undefined }), { dialect })
  const { post } = api(app)
  const tries = []
  for (let i = 0; i < 3; i++) tries.push(await post('/table/users/auth/login-password', { identity: 'x', password: 'wrong password' }))
  t.same(tries.map((r) => r.statusCode), [400, 400, 429])
  t.match(tries[2].json(), { code: 429, message: /Too many requests/ })
})

forEachDialect(t, 'rate limits count an IPv6 client as its /64', async (t, dialect) => {
  const app = await buildApp(t, configWith('', { rateLimit: { max: 2, timeWindow: 60_000 }, email: undefined }), { dialect })
  const from = (remoteAddress: string) => app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { identity: 'x', password: 'wrong password' }, remoteAddress })
  const rotating = [await from('2001:db8:0:1::1'), await from('2001:db8:0:1::2'), await from('2001:db8:0:1:ffff::3')]
  t.same(rotating.map((r) => r.statusCode), [400, 400, 429], 'a fresh address of the same /64 per try is still one client')
  t.equal((await from('2001:db8:0:2::1')).statusCode, 400, 'the next /64 is another client')
  t.equal((await from('::ffff:192.0.2.7')).statusCode, 400, 'an IPv4 client is its own')
  t.equal((await from('192.0.2.7')).statusCode, 400, 'and the same client however spelled')
  t.equal((await from('::ffff:c000:207')).statusCode, 429, 'its third try is refused')
})

forEachDialect(t, 'two instances share sessions through the database', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const a = api(await buildApp(t, configWith('', { email: undefined }), { dialect, databaseUrl }))
  const b = api(await buildApp(t, configWith('', { email: undefined }), { dialect, databaseUrl }))
  const signed = (await a.post('/table/users/auth/sign-up', ada)).json()
  const refreshed = await b.post('/table/users/auth/refresh-token', { refresh_token: signed.refresh_token })
  t.equal(refreshed.statusCode, 200, 'log in on A, refresh on B')
  const token = refreshed.json().token
  t.equal((await a.get('/table/users/select', token)).statusCode, 200, 'B\'s token works on A')
  t.same((await b.post('/table/users/auth/logout', {}, token)).json(), { success: true }, 'log out on B')
  t.equal((await a.get('/table/users/select', token)).statusCode, 401, 'A refuses the token at once')
  const again = (await a.post('/table/users/auth/login-password', { identity: 'ada', password: ada.password })).json()
  const rotated = (await b.post('/table/users/auth/refresh-token', { refresh_token: again.refresh_token })).json()
  t.equal((await a.post('/table/users/auth/refresh-token', { refresh_token: again.refresh_token })).statusCode, 401, 'replaying the rotated token on A is refused')
  t.equal((await b.post('/table/users/auth/refresh-token', { refresh_token: rotated.refresh_token })).statusCode, 401, 'and revokes the session on B too')
})

forEachDialect(t, 'without SMTP, emails go to the outbox', async (t, dialect) => {
  const app = await buildApp(t, configWith('', { email: undefined }), { dialect })
  const { post } = api(app)
  const signed = (await post('/table/users/auth/sign-up', ada)).json()
  t.same((await post('/table/users/auth/request-verification', {}, signed.token)).json(), { success: true })
  const { readdir, readFile } = await import('node:fs/promises')
  const outbox = `${app.fastbase.options.dataDir}/outbox`
  const files = await readdir(outbox)
  t.equal(files.length, 1)
  const parsed = await simpleParser(await readFile(`${outbox}/${files[0]}`))
  t.match(parsed.text, /https:\/\/app\.example\.com\/verify-email\//)
})
