// The auth libraries on their own: password hashing (scrypt and teenybase's legacy sha256),
// email normalisation, templates, action-link emails, the mailer in outbox and SMTP modes, token keys.
import t from 'tap'
import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import type { AddressInfo } from 'node:net'
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { hashPassword, verifyPassword, validatePassword } from '../../../lib/auth/passwords/passwords.js'
import { normalizeEmail, isValidEmail } from '../../../lib/auth/email-address.js'
import { createMailer, renderTemplate, actionEmail } from '../../../lib/auth/mailer.js'
import type { AuthExtension } from '../../../schemas/config.js'
import Fastify from 'fastify'
import fastifyJwt from '@fastify/jwt'
import { tokenKey } from '../../../lib/auth/tokens/token-keys.js'

t.test('passwords', async (t) => {
  t.test('hash and verify round trip', async (t) => {
    const stored = await hashPassword('correct horse')
    t.match(stored, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/)
    t.same(await verifyPassword('correct horse', stored), { ok: true, needsRehash: false })
    t.not(await hashPassword('correct horse'), stored, 'a fresh salt every time')
  })

  t.test('wrong password', async (t) => {
    const stored = await hashPassword('correct horse')
    t.same(await verifyPassword('correct horsf', stored), { ok: false, needsRehash: false })
    t.same(await verifyPassword('', stored), { ok: false, needsRehash: false })
  })

  t.test('NFC: composed and decomposed forms are the same password', async (t) => {
    const stored = await hashPassword('caf\u00e9-secret')
    t.equal((await verifyPassword('cafe\u0301-secret', stored)).ok, true)
  })

  t.test('tampered or malformed hashes fail', async (t) => {
    const stored = await hashPassword('correct horse')
    const parts = stored.split('$')
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
    const tampered = [
      [...parts.slice(0, 5), flip(parts[5]!)].join('$'),
      [...parts.slice(0, 4), flip(parts[4]!), parts[5]].join('$'),
      ['scrypt', '8192', ...parts.slice(2)].join('$'),
      stored.slice(0, -4), // scrypt output is prefix-stable: a truncated hash must not verify
      'scrypt$16384$8$1$short$short',
      'scrypt$16383$8$1$' + parts.slice(4).join('$'), // N not a power of two
      'scrypt$1048576$64$1$' + parts.slice(4).join('$'), // too much memory
      'bcrypt$whatever',
      ''
    ]
    for (const s of tampered) t.same(await verifyPassword('correct horse', s), { ok: false, needsRehash: false }, s)
  })

  t.test('parameters are read from the string', async (t) => {
    // A hash made with cheaper parameters than today's: still verifies, and asks to be rehashed.
    const { scryptSync, randomBytes } = await import('node:crypto')
    const salt = randomBytes(16)
    const key = scryptSync('old password', salt, 64, { N: 1024, r: 8, p: 1 })
    const weak = `scrypt$1024$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`
    t.same(await verifyPassword('old password', weak), { ok: true, needsRehash: true })
    t.same(await verifyPassword('new password', weak), { ok: false, needsRehash: false })
  })

  t.test('teenybase legacy sha256', async (t) => {
    const unsalted = 'ef797c8118f02dfb649607dd5d3f8c7623048c9c063d532cc95c5ed7a898a64f'
    t.same(await verifyPassword('12345678', unsalted), { ok: true, needsRehash: true })
    t.same(await verifyPassword('12345678', unsalted, null), { ok: true, needsRehash: true })
    t.same(await verifyPassword('12345678', unsalted.toUpperCase()), { ok: true, needsRehash: true })
    t.same(await verifyPassword('12345679', unsalted), { ok: false, needsRehash: false })
    t.same(await verifyPassword('12345678', unsalted, 'abc'), { ok: false, needsRehash: false }, 'salt matters')

    const { createHash } = await import('node:crypto')
    const salt = '0123456789abcdef0123'
    const salted = createHash('sha256').update('12345678' + salt).digest('hex')
    t.same(await verifyPassword('12345678', salted, salt), { ok: true, needsRehash: true })
    t.same(await verifyPassword('12345678', salted), { ok: false, needsRehash: false })
  })

  t.test('no stored hash is a failure that still takes time', async (t) => {
    const stored = await hashPassword('correct horse')
    t.same(await verifyPassword('correct horse', null), { ok: false, needsRehash: false })
    t.same(await verifyPassword('correct horse', undefined), { ok: false, needsRehash: false })
    // CPU time of the whole process (the hash runs on libuv's threads), not wall time: the same work
    // costs the same CPU however loaded the machine is, so this compares the work, not the schedule.
    const cpu = async (fn: () => Promise<unknown>) => {
      const start = process.cpuUsage()
      await fn()
      const used = process.cpuUsage(start)
      return (used.user + used.system) / 1000
    }
    const missing = await cpu(() => verifyPassword('correct horse', null))
    const real = await cpu(() => verifyPassword('correct horse', stored))
    // Loose bound: the point is that a missing account does the hashing work, not microseconds of it.
    t.ok(missing > real / 4, `missing ${missing.toFixed(1)}ms vs real ${real.toFixed(1)}ms of CPU`)
  })

  t.test('validatePassword', async (t) => {
    t.equal(validatePassword(12345678), 'password must be a string')
    t.equal(validatePassword(undefined), 'password is required')
    t.equal(validatePassword('', 'pw'), 'pw is required', 'named after the field, as teenybase does')
    t.equal(validatePassword('1234567'), 'Password must be at least 8 characters long')
    t.equal(validatePassword('12345678'), undefined)
    t.equal(validatePassword('x'.repeat(255)), undefined)
    t.equal(validatePassword('x'.repeat(256)), 'Password must be less than 255 characters long')
  })
})

t.test('email addresses', async (t) => {
  t.equal(normalizeEmail('  Ada.Lovelace+X@GMail.COM \n'), 'ada.lovelace+x@gmail.com', 'no provider-specific stripping')
  t.ok(isValidEmail('ada@example.com'))
  t.ok(isValidEmail('Ada.Lovelace+tag@Sub.Example.co'))
  for (const bad of ['', 'ada', 'ada@', '@example.com', 'ada@example', 'a b@example.com', '.ada@example.com',
    'ad..a@example.com', 'ada@exa_mple.com', 'ada@@example.com', ' ada@example.com', 'ada@münchen.de']) {
    t.notOk(isValidEmail(bad), JSON.stringify(bad))
  }
  t.ok(isValidEmail(`${'a'.repeat(64)}@${'b'.repeat(186)}.com`), '255 chars')
  t.notOk(isValidEmail(`${'a'.repeat(64)}@${'b'.repeat(187)}.com`), '256 chars')
})

t.test('renderTemplate', async (t) => {
  t.equal(renderTemplate('{{a | 2}}', { a: '' }), '2')
  t.equal(renderTemplate('{{ a | 2 }}', { a: 'x' }), 'x')
  t.equal(renderTemplate('asd {{}} ad', {}), 'asd  ad')
  t.equal(renderTemplate('asd {} ad', {}), 'asd {} ad')
  t.equal(renderTemplate('{{missing}}|{{missing | d | e}}', {}), '|d | e', 'default is everything after the first |')
  t.equal(renderTemplate('{{ constructor }}{{toString|x}}', {}), 'x', 'no prototype lookups')
  t.equal(renderTemplate('{{a}}', { a: '{{b}}', b: 'B' }), '{{b}}', 'one pass: values are not re-scanned')
  t.equal(renderTemplate('<b>{{a}}</b>', { a: '<i>&"\'' }, { escape: true }), '<b>&lt;i&gt;&amp;&quot;&#39;</b>')
  t.equal(renderTemplate('<b>{{a}}</b>', { a: '<i>' }), '<b><i></b>', 'no escaping unless asked')
  t.equal(renderTemplate('{{a | <br>}}', {}, { escape: true }), '<br>', 'defaults are template text')
})

t.test('actionEmail', async (t) => {
  const vars = { appName: 'Acme <Dev>', appUrl: 'https://app.example.com/', token: 'TokTokTokTokTokTokTok1', email: 'ada@example.com' }

  t.test('verification defaults', async (t) => {
    const m = actionEmail('verification', vars)
    const link = 'https://app.example.com/verify-email/TokTokTokTokTokTokTok1'
    t.equal(m.subject, 'Verify your Acme <Dev> email')
    t.match(m.text, link)
    t.match(m.text, 'Thank you for joining us at Acme <Dev>.')
    t.match(m.html, `<a href="${link}"`)
    t.match(m.html, `>${link}</a>`)
    t.match(m.html, 'Acme &lt;Dev&gt;')
    t.notMatch(m.html, 'Acme <Dev>', 'values are escaped in HTML')
    t.notMatch(m.html, '{{', 'nothing left unsubstituted')
    t.match(m.html, /^<!doctype html>/)
  })

  t.test('password reset defaults', async (t) => {
    const m = actionEmail('passwordReset', { ...vars, appUrl: 'http://localhost:5173' })
    t.equal(m.subject, 'Reset your Acme <Dev> password')
    t.match(m.text, 'http://localhost:5173/reset-password/TokTokTokTokTokTokTok1')
    t.match(m.html, 'Reset Password')
  })

  t.test('configured templates override', async (t) => {
    const m = actionEmail('verification', vars, {
      subject: '{{APP_NAME}}: confirm {{EMAIL}}',
      text: 'Go to {{ACTION_LINK}} ({{TOKEN}})',
      html: '<p><a href="{{action_link}}">{{ company | Us }}</a> {{APP_URL}}</p>'
    })
    t.equal(m.subject, 'Acme <Dev>: confirm ada@example.com')
    t.equal(m.text, 'Go to https://app.example.com/verify-email/TokTokTokTokTokTokTok1 (TokTokTokTokTokTokTok1)')
    t.equal(m.html, '<p><a href="https://app.example.com/verify-email/TokTokTokTokTokTokTok1">Us</a> https://app.example.com</p>')
  })

  t.test('a template\'s action_link (teenybase\'s) moves the link: a SPA on its own route', async (t) => {
    const m = actionEmail('verification', vars, { variables: { action_link: '{{APP_URL}}/#/auth/verify?token={{TOKEN}}&for={{EMAIL}}' } })
    const link = 'https://app.example.com/#/auth/verify?token=TokTokTokTokTokTokTok1&for=ada%40example.com'
    t.match(m.text, `Verify Email: ${link}`, 'the text names the configured route')
    t.match(m.html, `href="${link.replace(/&/g, '&amp;')}"`, 'and so does the button')
    t.notMatch(m.html, '/verify-email/', 'not the default route')
    const reset = actionEmail('passwordReset', { ...vars, variables: { action_link: 'https://elsewhere.example/{{TOKEN}}' } })
    t.match(reset.text, 'https://app.example.com/reset-password/TokTokTokTokTokTokTok1', 'email.variables cannot move it: teenybase\'s per-email default wins there, as in teenybase')
  })

  t.test('layoutHtml wraps the default body', async (t) => {
    const m = actionEmail('passwordReset', vars, { layoutHtml: '<html><body class="brand">{{EMAIL_CONTENT}}<footer>{{APP_NAME}}</footer></body></html>' })
    t.match(m.html, /^<html><body class="brand"><h1 /)
    t.match(m.html, 'https://app.example.com/reset-password/TokTokTokTokTokTokTok1')
    t.match(m.html, '<footer>Acme &lt;Dev&gt;</footer></body></html>')
    t.equal(m.subject, 'Reset your Acme <Dev> password', 'subject keeps its default')
  })

  t.test('layoutHtml as a stack of layouts (teenybase): each slot holds the next', async (t) => {
    const m = actionEmail('passwordReset', vars, { layoutHtml: ['<main>{{EMAIL_CONTENT}}</main>', '<section>{{EMAIL_CONTENT}}</section>'] })
    t.match(m.html, /^<main><section><h1 /)
    t.match(m.html, /<\/section><\/main>$/)
    t.equal(actionEmail('passwordReset', vars, { layoutHtml: [] }).html, actionEmail('passwordReset', vars).html, 'an empty stack is the default layout')
  })

  t.test('variables: config and template, fixed ones win', async (t) => {
    const m = actionEmail('verification', { ...vars, variables: { company_name: 'Acme Inc', action_text: 'ignored', APP_NAME: 'nope' } },
      { text: '{{company_name}} {{action_text}} {{message_title}} {{APP_NAME}} {{greeting}}', variables: { action_text: 'Confirm', greeting: 'Hi {{EMAIL}} from {{APP_NAME}}' } })
    t.equal(m.text, 'Acme Inc Confirm Email Verification Acme <Dev> Hi ada@example.com from Acme <Dev>')
  })

  t.test('accepts a template from the auth extension config', async (t) => {
    const templates: NonNullable<AuthExtension['emailTemplates']> = { verification: { subject: 'S {{APP_NAME}}', tags: ['x'] } }
    t.equal(actionEmail('verification', vars, templates.verification).subject, 'S Acme <Dev>')
  })
})

interface LogEntry { obj: Record<string, unknown>, msg: string }
const captureLog = () => {
  const entries: LogEntry[] = []
  return { entries, info: (obj: object, msg: string) => { entries.push({ obj: obj as Record<string, unknown>, msg }) } }
}

t.test('mailer: outbox mode', async (t) => {
  const dir = t.testdir()
  const outboxDir = `${dir}/data/outbox`
  const log = captureLog()
  const mailer = createMailer({ outboxDir, from: 'Acme <noreply@acme.test>', log })
  t.teardown(() => mailer.close())
  t.equal(mailer.mode, 'outbox')
  const email = actionEmail('verification', { appName: 'Acme', appUrl: 'http://localhost:3000', token: 'SecretTokenSecretToken', email: 'ada@example.com' })
  const sent = await mailer.send({ to: 'ada@example.com', ...email })

  t.ok(sent.file)
  const file = sent.file!
  t.match(basename(file), /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]+\.eml$/)
  t.equal((await stat(file)).mode & 0o777, 0o600, 'only the owner can read tokens')
  t.ok(sent.messageId)

  const raw = await readFile(file)
  t.notOk(raw.includes('\r\n'), 'unix newlines')
  const parsed = await simpleParser(raw)
  t.equal(parsed.subject, 'Verify your Acme email')
  t.equal(parsed.from?.text, '"Acme" <noreply@acme.test>')
  const to = Array.isArray(parsed.to) ? parsed.to[0] : parsed.to
  t.equal(to?.value[0]?.address, 'ada@example.com')
  t.match(parsed.text, 'http://localhost:3000/verify-email/SecretTokenSecretToken')
  t.match(String(parsed.html), 'href="http://localhost:3000/verify-email/SecretTokenSecretToken"')

  t.equal(log.entries.length, 1)
  t.same(log.entries[0], { msg: 'email written to outbox', obj: { to: 'ada@example.com', file } })
  t.notMatch(JSON.stringify(log.entries), 'SecretToken', 'the log never carries the token')

  // The sign-in code email's default subject is its code: the log must not carry it either.
  const otp = actionEmail('otp', { appName: 'Acme', appUrl: 'http://localhost:3000', token: 'LinkTokenLinkToken', email: 'ada@example.com', code: '482913' })
  t.match(otp.subject, '482913', 'the default subject carries the code')
  await mailer.send({ to: 'ada@example.com', ...otp })
  t.notMatch(JSON.stringify(log.entries), '482913', 'the log never carries a sign-in code')

  const second = await mailer.send({ to: 'bob@example.com', subject: 's', text: 't', html: '<p>h</p>' })
  t.not(second.file, file, 'one file per message')
})

t.test('mailer: SMTP mode against a local smtp-server', async (t) => {
  const received: Buffer[] = []
  const auths: string[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth (auth, _session, cb) {
      auths.push(`${auth.username}:${auth.password}`)
      cb(null, { user: auth.username })
    },
    onData (stream, _session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => { received.push(Buffer.concat(chunks)); cb() })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(resolve)))
  const { port } = server.server.address() as AddressInfo

  t.test('without credentials', async (t) => {
    const log = captureLog()
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, outboxDir: '/nonexistent', from: 'noreply@acme.test', log })
    t.teardown(() => mailer.close())
    t.equal(mailer.mode, 'smtp')
    const email = actionEmail('passwordReset', { appName: 'Acme', appUrl: 'https://acme.test', token: 'ResetTokenResetToken12', email: 'ada@example.com' })
    const sent = await mailer.send({ to: 'ada@example.com', ...email })
    t.ok(sent.messageId)
    t.equal(sent.file, undefined)
    t.equal(received.length, 1)
    const parsed = await simpleParser(received[0]!)
    t.equal(parsed.subject, 'Reset your Acme password')
    t.equal(parsed.messageId, sent.messageId)
    t.match(parsed.text, 'https://acme.test/reset-password/ResetTokenResetToken12')
    t.match(String(parsed.html), 'https://acme.test/reset-password/ResetTokenResetToken12')
    t.notMatch(JSON.stringify(log.entries), 'ResetToken')
  })

  t.test('with credentials in the URL', async (t) => {
    const mailer = createMailer({ smtpUrl: `smtp://mailer:s3cret@127.0.0.1:${port}`, outboxDir: '/nonexistent', from: 'noreply@acme.test', log: captureLog() })
    t.teardown(() => mailer.close())
    await mailer.send({ to: 'bob@example.com', subject: 'Hello', text: 'plain', html: '<p>html</p>' })
    t.same(auths, ['mailer:s3cret'])
    const parsed = await simpleParser(received[1]!)
    t.equal(parsed.subject, 'Hello')
    t.equal(parsed.text?.trim(), 'plain')
  })

  t.test('an unreachable server rejects', async (t) => {
    const mailer = createMailer({ smtpUrl: 'smtp://127.0.0.1:1', outboxDir: '/nonexistent', from: 'noreply@acme.test', log: captureLog() })
    t.teardown(() => mailer.close())
    await t.rejects(mailer.send({ to: 'bob@example.com', subject: 's', text: 't', html: 'h' }))
  })
})

t.test('admin sign-in says when no service token is configured', async (t) => {
  const { adminSignIn } = await import('../../../lib/auth/tokens/admin-tokens.js')
  const signIn = (secrets: Record<string, string>) => { try { adminSignIn(secrets, 'a-guess', new Map(), 'fastbase', 'example.com'); return 'signed in' } catch (e) { return (e as Error).message } }
  t.match(signIn({}), /^No service token is configured .*ADMIN_SERVICE_TOKEN/, 'nothing configured: says what to set')
  t.match(signIn({ viewer: 'viewer-password' }), /^Invalid credentials \(no service token is configured .*ADMIN_SERVICE_TOKEN/, 'passwords only: a guess is wrong, and the token is not an option')
  t.equal(signIn({ superadmin: 'the-service-token' }), 'Invalid credentials', 'a service token configured: the plain refusal')
})

// Token keys were @fastify/jwt namespaces before the kernel built them (decision D112): tokens issued
// before the change must verify after it, and the other way round, with the same algorithm pin.
t.test('token keys sign and verify as @fastify/jwt did', async (t) => {
  const secret = 'a-secret-of-some-length-0123456789'
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyJwt, { secret, namespace: 'old', sign: { algorithm: 'HS384' }, verify: { algorithms: ['HS384'] } })
  await app.ready()
  const old = (app.jwt as unknown as Record<string, { sign: (claims: object, options: object) => string, verify: (token: string) => Record<string, unknown> }>).old
  const key = tokenKey(secret, 'HS384')
  const claims = { sub: 'u1', cid: 'users' }
  const before = old.sign(claims, { expiresIn: 60, algorithm: 'HS384' })
  t.match(key.verify(before), { ...claims, exp: Number }, 'a token signed the old way verifies')
  const now = key.sign(claims, 60)
  const read = old.verify(now)
  t.match(read, claims, 'and the old way verifies a new one')
  t.equal(Number(read.exp) - Number(read.iat), 60, 'which expires after the seconds given')
  t.notOk('exp' in key.verify(key.sign(claims)), 'no lifetime given: no exp')
  t.throws(() => tokenKey(secret, 'HS256').verify(now), 'another algorithm with the same secret is refused')
  t.throws(() => tokenKey(`${secret}x`, 'HS384').verify(now), 'another secret is refused')
  const expired = key.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 })
  t.throws(() => key.verify(expired), 'an expired token is refused')
  t.match(key.verify(expired, { allowExpired: true }), claims, 'unless the route allows it')
  t.throws(() => tokenKey('', 'HS256'), 'no key without a secret')
})
