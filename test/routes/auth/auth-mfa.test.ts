// The TOTP second factor (lib/auth/mfa-*.ts) on both dialects, with codes from the test's own RFC 6238
// generator (test/fixtures/totp.ts): enrol, confirm, a challenge instead of a session from every
// sign-in (password, one-tap, login-token, email code, password reset, a verification link), mfa/verify, recovery codes, disable, the
// assurance level rules read and writes need, and the attacker's paths: replay, another account's
// challenge, attempts, refresh tokens, the in-process API, two instances. Then the panel's admins.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { MFA_FACTORS, MFA_RECOVERY_CODES, MFA_CHALLENGES } from '../../../lib/auth/stores/store-tables.js'
import { totpNow } from '../../fixtures/totp.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const HS_ISSUER = 'https://hs.partner.test'
const HS_SECRET = 'partner-shared-secret-0123456789abcdef'
const ACME_ISSUER = 'https://id.acme.test'

/** A key set (one RS256 key) on loopback, for one-tap ID tokens. */
async function jwksServer (t: Test) {
  const keys = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...await exportJWK(keys.publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  const server = createServer((_q, r) => { r.setHeader('content-type', 'application/json'); r.end(JSON.stringify({ keys: [jwk] })) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs`, keys }
}

function configWith (jwksUrl: string, extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  return {
    jwtSecret: 'mfa-secret',
    appUrl: 'https://app.example.com',
    appName: 'Acme',
    rateLimit: false,
    authProviders: [{ issuer: HS_ISSUER, secret: HS_SECRET, clientId: 'fastbase-app' }, { name: 'acme', issuer: ACME_ISSUER, clientId: 'acme-web', jwksUrl }],
    tables: [
      {
        name: 'users',
        autoSetUid: true,
        fields: [...baseFields, ...authFields],
        extensions: [{ name: 'auth', jwtSecret: 'users-key', totp: { issuer: 'Acme Co' }, emailOtp: {} }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id' }]
      },
      {
        name: 'vault',
        autoSetUid: true,
        fields: [...baseFields, { name: 'owner', type: 'text', sqlType: 'text', notNull: true }, { name: 'body', type: 'text', sqlType: 'text' }],
        extensions: [{ name: 'rules', listRule: 'owner == auth.uid', viewRule: 'owner == auth.uid', createRule: 'owner == auth.uid', updateRule: 'owner == auth.uid', deleteRule: 'owner == auth.uid', mfaForWrites: true }]
      },
      {
        name: 'secrets',
        autoSetUid: true,
        fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
        extensions: [{ name: 'rules', listRule: 'auth.aal == 2', viewRule: 'auth.aal == 2', createRule: null, updateRule: null, deleteRule: null }]
      }
    ],
    ...extra
  }
}

function api (app: FastifyInstance) {
  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown, token?: string, headers: Record<string, string> = {}) => {
    const reply = await app.inject({ method, url: `/api/v1${url}`, payload: payload as object, headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } })
    return { status: reply.statusCode, body: reply.json(), code: reply.headers['fastbase-error-code'], cookies: reply.cookies }
  }
  return { post: (url: string, payload?: unknown, token?: string, headers?: Record<string, string>) => call('POST', url, payload ?? {}, token, headers), get: (url: string, token?: string) => call('GET', url, undefined, token) }
}

const password = 'correct horse'
const account = (name: string) => ({ username: name, email: `${name}@example.com`, password, name })

/** Signs `name` up and turns TOTP on; answers the secret, the recovery codes and the (raised) session. */
async function enrolled (t: Test, app: FastifyInstance, name: string) {
  const { post } = api(app)
  const signUp = await post('/table/users/auth/sign-up', account(name))
  t.equal(signUp.status, 200)
  const enroll = await post('/table/users/auth/mfa/totp/enroll', {}, signUp.body.token)
  t.equal(enroll.status, 200, JSON.stringify(enroll.body))
  const confirm = await post('/table/users/auth/mfa/totp/confirm', { code: totpNow(enroll.body.secret) }, signUp.body.token)
  t.equal(confirm.status, 200, JSON.stringify(confirm.body))
  return { id: signUp.body.record.id as string, secret: enroll.body.secret as string, recovery: confirm.body.recovery_codes as string[], session: signUp.body }
}

forEachDialect(t, 'TOTP second factor', async (t, dialect) => {
  const jwks = await jwksServer(t)
  const app = await buildApp(t, configWith(jwks.url), { dialect })
  const { post, get } = api(app)
  const { db } = app.fastbase
  const now = () => Math.floor(Date.now() / 1000)

  await t.test('enrol and confirm', async (t) => {
    const signUp = await post('/table/users/auth/sign-up', account('ada'))
    const other = await post('/table/users/auth/login-password', { identity: 'ada', password })
    t.match(signUp.body, { aal: 1 }, 'a one-factor session')
    t.equal((await post('/table/users/auth/mfa/totp/enroll', {})).status, 401, 'signed in only')
    t.equal((await post('/table/users/auth/mfa/totp/enroll', {}, adminToken)).status, 403, 'a user of this table only')
    const enroll = await post('/table/users/auth/mfa/totp/enroll', {}, signUp.body.token)
    t.match(enroll.body, { secret: /^[A-Z2-7]{32}$/, uri: /^otpauth:\/\/totp\/Acme%20Co:ada%40example\.com\?secret=[A-Z2-7]{32}&issuer=Acme\+Co/ })
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password })).body.aal, 1, 'not on until confirmed: sign-in is as before')
    const wrong = await post('/table/users/auth/mfa/totp/confirm', { code: totpNow(enroll.body.secret, 3) }, signUp.body.token)
    t.same([wrong.status, wrong.code], [400, 'FB_ERR_MFA_INVALID'], 'a code three steps off')
    const confirm = await post('/table/users/auth/mfa/totp/confirm', { code: totpNow(enroll.body.secret) }, signUp.body.token)
    t.equal(confirm.status, 200)
    t.equal(confirm.body.recovery_codes.length, 10)
    t.match(confirm.body.recovery_codes[0], /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/)
    const stored = await db(MFA_RECOVERY_CODES).select('hash')
    t.notOk(stored.some((r: { hash: string }) => confirm.body.recovery_codes.some((c: string) => r.hash.includes(c.replaceAll('-', '')))), 'recovery codes are stored hashed')
    t.equal((await post('/table/users/auth/mfa/totp/enroll', {}, signUp.body.token)).status, 400, 'on already: enrolling again is refused')
    t.equal((await get('/table/secrets/list', signUp.body.token)).status, 200, 'the confirming session is raised to aal 2')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: other.body.refresh_token })).status, 401, 'the user\'s other one-factor sessions ended')
    const refreshed = await post('/table/users/auth/refresh-token', { refresh_token: signUp.body.refresh_token })
    t.equal(refreshed.body.aal, 2, 'a refresh keeps the level')
  })

  const ada = { id: (await db('users').where({ username: 'ada' }).first()).id as string, secret: (await db(MFA_FACTORS).first()).secret as string }

  await t.test('a password sign-in answers a challenge; mfa/verify completes it', async (t) => {
    const login = await post('/table/users/auth/login-password', { identity: 'ada', password })
    t.equal(login.status, 200)
    t.match(login.body, { mfa_required: true, challenge: String, expires_in: 300, methods: ['totp', 'recovery_code'] })
    t.notOk('token' in login.body || 'refresh_token' in login.body, 'no token, no refresh token: nothing to refresh into a session')
    const before = await db(MFA_FACTORS).first('last_step')
    const code = totpNow(ada.secret, 1)
    t.not(Number(before.last_step), Math.floor(now() / 30) + 1)
    const done = await post('/table/users/auth/mfa/verify', { challenge: login.body.challenge, code })
    t.equal(done.status, 200, JSON.stringify(done.body))
    t.match(done.body, { token: String, refresh_token: String, aal: 2, record: { id: ada.id } })
    t.equal((await get('/table/secrets/list', done.body.token)).status, 200, 'rules read auth.aal == 2')
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: login.body.challenge, code })).code, 'FB_ERR_MFA_INVALID', 'a challenge works once')
    const again = await post('/table/users/auth/login-password', { identity: 'ada', password })
    const replay = await post('/table/users/auth/mfa/verify', { challenge: again.body.challenge, code })
    t.same([replay.status, replay.code], [400, 'FB_ERR_MFA_INVALID'], 'replay: the same code on a new challenge is refused')
    const older = await post('/table/users/auth/mfa/verify', { challenge: again.body.challenge, code: totpNow(ada.secret) })
    t.equal(older.status, 400, 'and so is an earlier step\'s code once a later one was used')
  })

  await t.test('attempts, another account\'s challenge', async (t) => {
    const bob = await enrolled(t, app, 'bob')
    const cat = await enrolled(t, app, 'cat')
    const bobLogin = await post('/table/users/auth/login-password', { identity: 'bob', password })
    const stolen = await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge, code: totpNow(cat.secret, 1) })
    t.same([stolen.status, stolen.code], [400, 'FB_ERR_MFA_INVALID'], 'cat\'s current code on bob\'s challenge (cat knows bob\'s password)')
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge, recoveryCode: cat.recovery[0] })).status, 400, 'cat\'s recovery code on it')
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge })).status, 400, 'neither code nor recovery code')
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge, code: '1', recoveryCode: '2' })).status, 400, 'both')
    // Two attempts spent above (the bodies refused before the challenge was read spend none); three
    // more wrong ones: the one that spends the last attempt already says the challenge is spent, so a
    // client starts over then, not after one more refusal.
    const wrong = []
    for (let i = 0; i < 3; i++) wrong.push(await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge, code: '000000' }))
    t.same(wrong.map((r) => [r.status, r.code, r.body.message]), [
      [400, 'FB_ERR_MFA_INVALID', 'Invalid code'],
      [400, 'FB_ERR_MFA_INVALID', 'Invalid code'],
      [400, 'FB_ERR_MFA_INVALID', 'Invalid or expired challenge']
    ], 'the fifth wrong code says the challenge is spent')
    const spent = await post('/table/users/auth/mfa/verify', { challenge: bobLogin.body.challenge, code: totpNow(bob.secret, 1) })
    t.same([spent.status, spent.body.message], [400, 'Invalid or expired challenge'], 'five attempts spent: even a right code is refused')
    const catLogin = await post('/table/users/auth/login-password', { identity: 'cat', password })
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: catLogin.body.challenge, code: totpNow(cat.secret, 1) })).status, 200, 'cat\'s own challenge takes her code (her attempt on bob\'s spent nothing of hers)')
    const expiring = await post('/table/users/auth/login-password', { identity: 'bob', password })
    await db(MFA_CHALLENGES).update({ expires_at: now() - 1 })
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: expiring.body.challenge, code: totpNow(bob.secret, 1) })).body.message, 'Invalid or expired challenge', 'an expired challenge')
  })

  await t.test('recovery codes work once each', async (t) => {
    const carl = await enrolled(t, app, 'carl')
    const first = await post('/table/users/auth/login-password', { identity: 'carl', password })
    const used = await post('/table/users/auth/mfa/verify', { challenge: first.body.challenge, recoveryCode: carl.recovery[0].toLowerCase() })
    t.equal(used.status, 200, 'a recovery code (case and dashes as typed)')
    t.equal(used.body.aal, 2)
    const second = await post('/table/users/auth/login-password', { identity: 'carl', password })
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: second.body.challenge, recoveryCode: carl.recovery[0] })).code, 'FB_ERR_MFA_INVALID', 'reused: refused')
    const adaLogin = await post('/table/users/auth/login-password', { identity: 'ada', password })
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: adaLogin.body.challenge, recoveryCode: carl.recovery[1] })).status, 400, 'another user\'s recovery code')
  })

  await t.test('every other sign-in answers the challenge too', async (t) => {
    const gus = await enrolled(t, app, 'gus')
    const hs = await new SignJWT({ sub: 'p-gus', email: 'gus@example.com', email_verified: true }).setProtectedHeader({ alg: 'HS256' }).setIssuer(HS_ISSUER).setAudience('fastbase-app').setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(HS_SECRET))
    const token = await post('/table/users/auth/login-token', {}, hs)
    t.match(token.body, { mfa_required: true }, 'login-token')
    t.notOk('token' in token.body || 'refresh_token' in token.body)
    const idToken = await new SignJWT({ sub: 'a-gus', email: 'gus@example.com', email_verified: true }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ACME_ISSUER).setAudience('acme-web').setIssuedAt().setExpirationTime('10m').sign(jwks.keys.privateKey)
    const oneTap = await post('/table/users/auth/acme-login', { token: idToken })
    t.match(oneTap.body, { mfa_required: true }, 'one-tap')
    t.notOk('token' in oneTap.body)
    const code = await app.fastbase.auth.emailCodes.issue('users', 'gus@example.com', 6, 600)
    t.match((await post('/table/users/auth/login-otp', { email: 'gus@example.com', code: code.code })).body, { mfa_required: true }, 'an email code')
    const done = await post('/table/users/auth/mfa/verify', { challenge: oneTap.body.challenge, code: totpNow(gus.secret, 1) })
    t.match(done.body, { aal: 2, record: { id: gus.id } }, 'mfa/verify completes a one-tap sign-in')
  })

  await t.test('a password reset and an email verification from the link answer a challenge, not a session', async (t) => {
    const ivy = await enrolled(t, app, 'ivy')
    const { oneTimeTokens } = app.fastbase.auth
    const resetToken = await oneTimeTokens.issue('reset_password', 'users', { userId: ivy.id, email: 'ivy@example.com' }, 600)
    const reset = await post('/table/users/auth/confirm-password-reset', { token: resetToken, password: 'new horse battery', passwordConfirm: 'new horse battery' })
    t.equal(reset.status, 200, JSON.stringify(reset.body))
    t.match(reset.body, { mfa_required: true, challenge: String }, 'the reset token proves the mailbox, not the second factor')
    t.notOk('token' in reset.body || 'refresh_token' in reset.body, 'no session from the reset alone')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: ivy.session.refresh_token })).status, 401, 'the sessions before the reset ended')
    t.equal((await post('/table/users/auth/mfa/verify', { challenge: reset.body.challenge, code: '000000' })).code, 'FB_ERR_MFA_INVALID', 'a wrong code')
    const done = await post('/table/users/auth/mfa/verify', { challenge: reset.body.challenge, code: totpNow(ivy.secret, 1) })
    t.match(done.body, { aal: 2, token: String, record: { id: ivy.id } }, 'the factor completes it')
    t.match((await post('/table/users/auth/login-password', { identity: 'ivy', password: 'new horse battery' })).body, { mfa_required: true }, 'the new password is set, and still needs the factor')

    const verifyToken = await oneTimeTokens.issue('verify_email', 'users', { userId: ivy.id, email: 'ivy@example.com' }, 600)
    const verified = await post('/table/users/auth/confirm-verification', { token: verifyToken })
    t.equal(verified.status, 200, JSON.stringify(verified.body))
    t.match(verified.body, { mfa_required: true, challenge: String }, 'a verification link opened without a session: a challenge')
    t.notOk('token' in verified.body || 'refresh_token' in verified.body)
    t.equal((await db('users').where({ id: ivy.id }).first()).email_verified ? 1 : 0, 1, 'the address is verified all the same')
    const again = await oneTimeTokens.issue('verify_email', 'users', { userId: ivy.id, email: 'ivy@example.com' }, 600)
    const owner = await post('/table/users/auth/confirm-verification', { token: again }, done.body.token)
    t.match(owner.body, { record: { id: ivy.id } }, 'the signed-in owner gets the record, as before')
    t.notOk('token' in owner.body || 'challenge' in owner.body)
  })

  await t.test('writes that need aal 2, rules reading auth.aal; the in-process API is never above 1', async (t) => {
    await app.fastbase.tables.secrets.insert({ values: { body: 'the secret' } }, { as: 'system' })
    const dee = await post('/table/users/auth/sign-up', account('dee'))
    const write = await post('/table/vault/insert', { values: { owner: dee.body.record.id, body: 'x' } }, dee.body.token)
    t.same([write.status, write.code], [403, 'FB_ERR_MFA_REQUIRED'], 'a one-factor session may not write the vault')
    t.equal((await get('/table/secrets/list', dee.body.token)).body.items.length, 0, 'nor read what needs auth.aal == 2')
    const hal = await enrolled(t, app, 'hal')
    const login = await post('/table/users/auth/login-password', { identity: 'hal', password })
    const full = await post('/table/users/auth/mfa/verify', { challenge: login.body.challenge, code: totpNow(hal.secret, 1) })
    t.equal((await post('/table/vault/insert', { values: { owner: hal.id, body: 'mine' } }, full.body.token)).status, 200, 'an aal 2 session writes')
    t.equal((await get('/table/secrets/list', full.body.token)).body.items.length, 1, 'and reads')
    const refreshed = await post('/table/users/auth/refresh-token', { refresh_token: full.body.refresh_token })
    t.equal(refreshed.body.aal, 2)
    t.equal((await get('/table/secrets/list', refreshed.body.token)).body.items.length, 1, 'a refreshed aal 2 session stays at 2')
    const caller = await app.fastbase.callerFor('users', hal.id)
    t.equal(caller?.aal, 1, 'callerFor: server code has proven no second factor')
    await t.rejects(app.fastbase.tables.vault.insert({ values: { owner: hal.id, body: 'via api' } }, { as: caller! }), { code: 'FB_ERR_MFA_REQUIRED' }, 'the in-process API as the user: refused')
    t.equal((await app.fastbase.tables.secrets.list({}, { as: caller! })).items.length, 0, 'and rules reading auth.aal == 2 see nothing')
    await app.fastbase.tables.vault.insert({ values: { owner: hal.id, body: 'system' } }, { as: 'system' })
    t.ok(await db('vault').where({ body: 'system' }).first(), 'the system writes, as ever')
  })

  await t.test('disable needs a current code or the password', async (t) => {
    const erin = await enrolled(t, app, 'erin')
    const login = await post('/table/users/auth/login-password', { identity: 'erin', password })
    const session = (await post('/table/users/auth/mfa/verify', { challenge: login.body.challenge, recoveryCode: erin.recovery[0] })).body
    t.equal((await post('/table/users/auth/mfa/totp/disable', { code: '000000' }, session.token)).code, 'FB_ERR_MFA_INVALID')
    t.equal((await post('/table/users/auth/mfa/totp/disable', { password: 'wrong password' }, session.token)).status, 400)
    t.equal((await post('/table/users/auth/mfa/totp/disable', {}, session.token)).status, 400, 'nothing given')
    t.equal((await post('/table/users/auth/mfa/totp/disable', { password }, session.token)).status, 200)
    t.match((await post('/table/users/auth/login-password', { identity: 'erin', password })).body, { aal: 1, token: String }, 'off: a session again')
    t.equal(await db(MFA_RECOVERY_CODES).where({ user_id: erin.id }).first(), undefined, 'the recovery codes went with it')
  })
})

forEachDialect(t, 'two instances: one code, one challenge, counted for both', async (t, dialect) => {
  const jwks = await jwksServer(t)
  const databaseUrl = sharedDatabase(t, dialect)
  const one = await buildApp(t, configWith(jwks.url), { dialect, databaseUrl })
  const two = await buildApp(t, configWith(jwks.url), { dialect, databaseUrl })
  const fay = await enrolled(t, one, 'fay')
  const a = await api(one).post('/table/users/auth/login-password', { identity: 'fay', password })
  const b = await api(two).post('/table/users/auth/login-password', { identity: 'fay', password })
  const code = totpNow(fay.secret, 1)
  t.equal((await api(one).post('/table/users/auth/mfa/verify', { challenge: a.body.challenge, code })).status, 200)
  t.equal((await api(two).post('/table/users/auth/mfa/verify', { challenge: b.body.challenge, code })).code, 'FB_ERR_MFA_INVALID', 'the code used on one instance is refused on the other')
  const c = await api(one).post('/table/users/auth/login-password', { identity: 'fay', password })
  const messages = []
  for (const app of [one, two, one, two, one]) messages.push((await api(app).post('/table/users/auth/mfa/verify', { challenge: c.body.challenge, code: '000000' })).body.message)
  t.same(messages, ['Invalid code', 'Invalid code', 'Invalid code', 'Invalid code', 'Invalid or expired challenge'], 'the last attempt, on either instance, says the challenge is spent')
  t.equal((await api(two).post('/table/users/auth/mfa/verify', { challenge: c.body.challenge, recoveryCode: fay.recovery[0] })).body.message, 'Invalid or expired challenge', 'five attempts over both instances spend the challenge')
})

forEachDialect(t, 'admins: TOTP for the roles, and admin.requireMfa', async (t, dialect) => {
  const jwks = await jwksServer(t)
  const app = await buildApp(t, configWith(jwks.url, { admin: { requireMfa: true, editorPassword: 'editor password 123' } }), { dialect })
  const { post, get } = api(app)
  t.equal((await get('/table/secrets/list', adminToken)).code, 'FB_ERR_MFA_REQUIRED', 'the raw service token, without a second factor: refused')
  const plain = await post('/admin/login', { password: adminToken })
  t.match(plain.body, { token: String, role: 'superadmin' }, 'not enrolled yet: a token')
  t.equal((await get('/table/secrets/list', plain.body.token)).code, 'FB_ERR_MFA_REQUIRED', 'which reaches only the MFA routes')
  const editor = await post('/admin/login', { password: 'editor password 123' })
  t.equal((await post('/admin/mfa/totp/enroll', {}, editor.body.token)).status, 403, 'only a superadmin manages the factors')
  const enroll = await post('/admin/mfa/totp/enroll', {}, plain.body.token)
  t.match(enroll.body, { secret: /^[A-Z2-7]{32}$/, uri: /^otpauth:\/\/totp\/Acme:superadmin%40app\.example\.com/ })
  const confirm = await post('/admin/mfa/totp/confirm', { code: totpNow(enroll.body.secret) }, plain.body.token)
  t.equal(confirm.body.recovery_codes.length, 10)
  const login = await post('/admin/login', { password: adminToken })
  t.match(login.body, { mfa_required: true, challenge: String })
  t.notOk('token' in login.body)
  t.equal((await post('/table/users/auth/mfa/verify', { challenge: login.body.challenge, code: totpNow(enroll.body.secret, 1) })).status, 400, 'an admin challenge on a table\'s route')
  const verified = await post('/admin/mfa/verify', { challenge: login.body.challenge, code: totpNow(enroll.body.secret, 1) })
  t.match(verified.body, { token: String, role: 'superadmin' })
  t.equal((await get('/table/secrets/list', verified.body.token)).status, 200, 'the token from the second factor works')
  t.equal((await post('/admin/mfa/totp/disable', { password: adminToken } as never, verified.body.token)).status, 400, 'disable: the service token is no factor')
  t.equal((await post('/admin/mfa/totp/disable', { recoveryCode: confirm.body.recovery_codes[0] }, adminToken)).status, 200, 'a recovery code of the role turns it off')
  t.match((await post('/admin/login', { password: adminToken })).body, { token: String }, 'off: a token again')
})
