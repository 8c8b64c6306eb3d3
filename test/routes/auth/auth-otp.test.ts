// Email sign-in codes and links (request-otp, login-otp; lib/auth/email/otp-flows.ts) on both dialects,
// through a real SMTP server: what is mailed, single use, attempts, expiry, replacement, sign-up by
// code only where allowed, record hooks with their source, no enumeration by answer or by waiting,
// and brute force spread over two instances on one database.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import type { ParsedMail } from 'mailparser'
import { mailbox } from '../../fixtures/mailbox.js'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { EMAIL_CODES } from '../../../lib/auth/stores/store-tables.js'
import { requestEmailCode } from '../../../lib/auth/email/otp-flows.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

type Row = Record<string, unknown>

function configWith (smtpUrl: string, extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  const rules = { name: 'rules' as const, listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id' }
  return {
    jwtSecret: 'otp-secret',
    appUrl: 'https://app.example.com',
    appName: 'Acme',
    rateLimit: { max: 1000, timeWindow: 60_000 },
    email: { from: 'Acme <noreply@example.com>', smtp: smtpUrl },
    tables: [
      { name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields], extensions: [{ name: 'auth', jwtSecret: 'users-key', emailOtp: { perAddress: 4 } }, rules] },
      {
        name: 'members',
        autoSetUid: true,
        fields: [...baseFields, ...authFields],
        extensions: [{ name: 'auth', jwtSecret: 'members-key', emailOtp: { signUp: true, codeLength: 8, maxAttempts: 3 }, emailTemplates: { otp: { variables: { action_link: '{{APP_URL}}/#/magic/{{TOKEN}}' } } } }, rules]
      }
    ],
    ...extra
  }
}

function api (app: FastifyInstance) {
  return async (url: string, payload: unknown, token?: string) => {
    const reply = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return { status: reply.statusCode, body: reply.json(), code: reply.headers['fastbase-error-code'], raw: reply }
  }
}

/** The code and link token of a sign-in email. */
function codeIn (mail: ParsedMail, linkPattern = /login-otp\/([A-Za-z0-9_-]+)/): { code: string, token: string } {
  const code = /sign-in code is ([0-9]{6,8})/.exec(mail.text ?? '')?.[1]
  const token = linkPattern.exec(mail.text ?? '')?.[1]
  if (code === undefined || token === undefined) throw new Error(`no code or link in: ${mail.text}`)
  return { code, token }
}

const ada = { username: 'ada', email: 'ada@example.com', password: 'correct horse', name: 'Ada' }

forEachDialect(t, 'email codes and links', async (t, dialect) => {
  const mail = await mailbox(t)
  const app = await buildApp(t, configWith(mail.url), { dialect })
  const post = api(app)
  const { db } = app.fastbase
  const sources: Array<{ event: string, source?: string, values: Row }> = []
  app.fastbase.hooks.on('users', 'beforeUpdate', (e) => { sources.push({ event: 'users.beforeUpdate', source: e.source, values: { ...e.values } }) })
  app.fastbase.hooks.on('members', 'beforeInsert', (e) => { sources.push({ event: 'members.beforeInsert', source: e.source, values: { ...e.values } }) })
  const signUp = await post('/table/users/auth/sign-up', ada)
  t.equal(signUp.status, 200)
  const adaId = signUp.body.record.id as string

  await t.test('a code and a link are mailed; the code signs in once', async (t) => {
    const asked = await post('/table/users/auth/request-otp', { email: ' Ada@Example.com ' })
    t.same([asked.status, asked.body], [200, { success: true }])
    const message = await mail.next()
    t.equal(message.to && !Array.isArray(message.to) ? message.to.text : '', 'ada@example.com')
    const { code, token } = codeIn(message)
    t.match(code, /^[0-9]{6}$/, 'six digits by default')
    t.match(message.subject, new RegExp(code), 'the subject shows the code')
    t.match(message.text, new RegExp(`https://app\\.example\\.com/login-otp/${token}`), 'the link: <appUrl>/login-otp/<token>')
    const row = await db(EMAIL_CODES).where({ table_name: 'users', email: 'ada@example.com' }).first()
    t.not(row.code_hash, code, 'the code is stored hashed')
    t.notOk(JSON.stringify(row).includes(code) || JSON.stringify(row).includes(token), 'neither the code nor the link token is stored')

    const signedIn = await post('/table/users/auth/login-otp', { email: 'ADA@example.com', code })
    t.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
    t.match(signedIn.body, { token: String, refresh_token: String, aal: 1, verified: true, record: { id: adaId, email_verified: true } }, 'a session like login-password\'s; the address is now verified')
    const again = await post('/table/users/auth/login-otp', { email: 'ada@example.com', code })
    t.same([again.status, again.code, again.body.message], [400, 'FB_ERR_OTP_INVALID', 'Invalid or expired code'], 'single use')
    const link = await post('/table/users/auth/login-otp', { token })
    t.equal(link.status, 400, 'the link of a used code is used too')
  })

  await t.test('the link signs in once', async (t) => {
    await post('/table/users/auth/request-otp', { email: 'ada@example.com' })
    const { token, code } = codeIn(await mail.next())
    const signedIn = await post('/table/users/auth/login-otp', { token })
    t.equal(signedIn.status, 200)
    t.equal(signedIn.body.record.id, adaId)
    t.equal((await post('/table/users/auth/login-otp', { token })).status, 400, 'a link works once')
    t.equal((await post('/table/users/auth/login-otp', { email: 'ada@example.com', code })).status, 400, 'and its code went with it')
    t.equal((await post('/table/members/auth/login-otp', { token })).status, 400)
  })

  await t.test('bodies that are neither form', async (t) => {
    for (const body of [{}, { email: 'ada@example.com' }, { code: '123456' }, { token: 'x', email: 'ada@example.com', code: '1' }]) {
      const res = await post('/table/users/auth/login-otp', body)
      t.equal(res.status, 400, JSON.stringify(body))
    }
    const long = await post('/table/users/auth/login-otp', { email: 'ada@example.com', code: '1'.repeat(10_000) })
    t.equal(long.status, 400, 'an overlong code is refused by the schema')
  })

  await t.test('attempts per code, expiry, replacement', async (t) => {
    await post('/table/users/auth/request-otp', { email: 'ada@example.com' })
    const first = codeIn(await mail.next())
    await post('/table/users/auth/request-otp', { email: 'ada@example.com' })
    const second = codeIn(await mail.next())
    t.equal((await post('/table/users/auth/login-otp', { email: 'ada@example.com', code: first.code })).status, 400, 'a newer code replaces the older')
    t.equal((await post('/table/users/auth/login-otp', { token: first.token })).status, 400, 'and its link')
    const wrong = second.code === '000000' ? '000001' : '000000'
    // One attempt went to the replaced code above; four more wrong ones use up the default five.
    for (let i = 0; i < 4; i++) t.equal((await post('/table/users/auth/login-otp', { email: 'ada@example.com', code: wrong })).code, 'FB_ERR_OTP_INVALID')
    const right = await post('/table/users/auth/login-otp', { email: 'ada@example.com', code: second.code })
    t.same([right.status, right.code], [400, 'FB_ERR_OTP_INVALID'], 'the right code after five wrong ones: refused')

    await db(EMAIL_CODES).del()
    await post('/table/members/auth/request-otp', { email: 'late@example.com' })
    const late = codeIn(await mail.next(), /magic\/([A-Za-z0-9_-]+)/)
    await db(EMAIL_CODES).where({ table_name: 'members' }).update({ expires_at: Math.floor(Date.now() / 1000) - 1 })
    t.equal((await post('/table/members/auth/login-otp', { email: 'late@example.com', code: late.code })).status, 400, 'an expired code')
    t.equal((await post('/table/members/auth/login-otp', { token: late.token })).status, 400, 'an expired link')
  })

  await t.test('no account, no sign-up: a code is kept but never mailed, and signs nobody in', async (t) => {
    const before = mail.count()
    await requestEmailCode(app.fastbase.auth, app.fastbase.auth.tables.get('users')! as never, 'nobody@example.com')
    t.ok(await db(EMAIL_CODES).where({ table_name: 'users', email: 'nobody@example.com' }).first(), 'the same work as for an account: a code row')
    t.equal(mail.count(), before, 'no email')
    // The code was never shown to anyone; one issued here stands for a lucky guess.
    const { code } = await app.fastbase.auth.emailCodes.issue('users', 'nobody@example.com', 6, 600)
    const res = await post('/table/users/auth/login-otp', { email: 'nobody@example.com', code })
    t.same([res.status, res.code], [400, 'FB_ERR_OTP_INVALID'])
    t.notOk(await db('users').where({ email: 'nobody@example.com' }).first(), 'no account was created')
  })

  await t.test('sign-up by code where allowed: a verified account, through the hooks', async (t) => {
    sources.length = 0
    await post('/table/members/auth/request-otp', { email: 'New@Example.com' })
    const message = await mail.next()
    const { code, token } = codeIn(message, /magic\/([A-Za-z0-9_-]+)/)
    t.match(code, /^[0-9]{8}$/, 'codeLength 8')
    t.match(message.text, new RegExp(`https://app\\.example\\.com/#/magic/${token}`), 'the link where the template moved it')
    const res = await post('/table/members/auth/login-otp', { email: 'new@example.com', code })
    t.equal(res.status, 200, JSON.stringify(res.body))
    t.match(res.body.record, { email: 'new@example.com', email_verified: true, username: 'new' })
    t.match(sources, [{ event: 'members.beforeInsert', source: 'auth:otp', values: { email: 'new@example.com', email_verified: true } }], 'the table\'s beforeInsert hook, with source auth:otp')
    t.notOk('password' in sources[0].values, 'the hook sees no password')
  })

  await t.test('an unverified account is taken over by the address\'s owner', async (t) => {
    const squatter = await post('/table/users/auth/sign-up', { username: 'grace', email: 'grace@example.com', password: 'squatter pass', name: 'Not Grace' })
    t.equal(squatter.status, 200)
    sources.length = 0
    await post('/table/users/auth/request-otp', { email: 'grace@example.com' })
    const { code } = codeIn(await mail.next())
    const owner = await post('/table/users/auth/login-otp', { email: 'grace@example.com', code })
    t.equal(owner.status, 200)
    t.equal(owner.body.record.id, squatter.body.record.id, 'the same account')
    t.equal(owner.body.record.email_verified, true)
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: squatter.body.refresh_token })).status, 401, 'the creator\'s session ended')
    t.equal((await post('/table/users/auth/login-password', { identity: 'grace@example.com', password: 'squatter pass' })).status, 400, 'the creator\'s password no longer works')
    t.match(sources, [{ event: 'users.beforeUpdate', source: 'auth:otp', values: { email_verified: true } }], 'the takeover met the beforeUpdate hook, source auth:otp')
  })

  await t.test('enumeration: the answer is the same, and it does not wait for the mail', async (t) => {
    t.equal((await post('/table/users/auth/sign-up', { username: 'lin', email: 'lin@example.com', password: 'lin password', name: 'Lin' })).status, 200)
    const known = await post('/table/users/auth/request-otp', { email: 'lin@example.com' })
    const unknown = await post('/table/users/auth/request-otp', { email: 'nobody-else@example.com' })
    const malformed = await post('/table/users/auth/request-otp', { email: 'not an address' })
    const strip = (r: typeof known) => ({ status: r.status, body: r.raw.body, headers: Object.keys(r.raw.headers).filter((h) => h !== 'date' && h !== 'x-request-id').sort() })
    t.same(strip(unknown), strip(known), 'an unknown address: the same status, body and headers')
    t.same(strip(malformed), strip(known), 'a malformed one too')
    const sent = await mail.next()
    t.equal(sent.to && !Array.isArray(sent.to) ? sent.to.text : '', 'lin@example.com', 'only the account\'s address got mail')
  })
})

forEachDialect(t, 'request-otp answers before the mail server does', async (t, dialect) => {
  // A mail server that holds every message until released: the answer cannot depend on the sending.
  const held: Array<() => void> = []
  const server = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, onData (stream, _s, cb) { stream.resume(); stream.on('end', () => held.push(() => cb())) } })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const release of held) release(); return new Promise<void>((resolve) => server.close(() => resolve())) })
  const app = await buildApp(t, configWith(`smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`), { dialect })
  const post = api(app)
  t.equal((await post('/table/users/auth/sign-up', ada)).status, 200)
  const asked = await post('/table/users/auth/request-otp', { email: 'ada@example.com' })
  t.same([asked.status, asked.body], [200, { success: true }])
  for (let i = 0; i < 200 && held.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(held.length, 1, 'the message reached the server after the answer, and is still held there')
})

forEachDialect(t, 'brute force over two instances on one database', async (t, dialect) => {
  const mail = await mailbox(t)
  const databaseUrl = sharedDatabase(t, dialect)
  const config = configWith(mail.url, { rateLimit: { max: 6, timeWindow: 60_000 } })
  const one = await buildApp(t, config, { dialect, databaseUrl })
  const two = await buildApp(t, config, { dialect, databaseUrl })
  t.equal((await api(one)('/table/members/auth/request-otp', { email: 'eve@example.com' })).status, 200)
  const { code } = codeIn(await mail.next(), /magic\/([A-Za-z0-9_-]+)/)
  const wrong = code === '00000000' ? '00000001' : '00000000'
  // members allow three attempts per code: two on one instance, one on the other.
  t.equal((await api(one)('/table/members/auth/login-otp', { email: 'eve@example.com', code: wrong })).status, 400)
  t.equal((await api(two)('/table/members/auth/login-otp', { email: 'eve@example.com', code: wrong })).status, 400)
  t.equal((await api(one)('/table/members/auth/login-otp', { email: 'eve@example.com', code: wrong })).status, 400)
  const right = await api(two)('/table/members/auth/login-otp', { email: 'eve@example.com', code })
  t.same([right.status, right.code], [400, 'FB_ERR_OTP_INVALID'], 'the attempts were counted for both instances')

  if (dialect === 'postgres') {
    // Codes per address: users allow four per 15 minutes, counted in the fleet's rate-limit store.
    const users = (app: FastifyInstance) => [app.fastbase.auth, app.fastbase.auth.tables.get('users')! as never] as const
    const countCodes = async () => (await one.fastbase.db(EMAIL_CODES).where({ table_name: 'users', email: 'target@example.com' }).count({ n: '*' }))[0].n
    for (const app of [one, two, one, two]) {
      await one.fastbase.db(EMAIL_CODES).where({ email: 'target@example.com' }).del()
      await requestEmailCode(...users(app), 'target@example.com')
      t.equal(Number(await countCodes()), 1, 'issued within the limit')
    }
    await one.fastbase.db(EMAIL_CODES).where({ email: 'target@example.com' }).del()
    await requestEmailCode(...users(two), 'Target@example.com')
    t.equal(Number(await countCodes()), 0, 'the fifth in the window, on either instance: none issued')
    // Per client: six requests a minute for the fleet.
    const statuses = []
    for (const app of [one, two, one, two, one]) statuses.push((await api(app)('/table/members/auth/request-otp', { email: 'x@example.com' })).status)
    t.same(statuses, [200, 200, 200, 200, 200], 'the first six (one above) pass')
    const limited = await api(two)('/table/members/auth/request-otp', { email: 'y@example.com' })
    t.same([limited.status, limited.code], [429, 'FB_ERR_RATE_LIMITED'], 'the seventh, on the other instance: 429')
  }
})
