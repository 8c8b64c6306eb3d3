// Realtime sees the writes the auth flows make to user rows themselves, on both dialects: a user
// created by an external sign-in (login-token), a verified flag set by confirm-verification, a
// password changed. Each is an event with the row as written, after the commit, to whoever may see it.
import t from 'tap'
import { SignJWT } from 'jose'
import { adminToken, forEachDialect } from '../../helper.js'
import { SseClient, api, config, listening, settle, signUp } from '../../fixtures/realtime/client.js'

const ISSUER = 'https://partner.test'
const SECRET = 'partner-shared-secret-0123456789abcdef'

forEachDialect(t, 'auth flows emit their writes to user rows', async (t, dialect) => {
  const { app, base } = await listening(t, config({}, { jwtAllowedIssuers: [{ issuer: ISSUER, secret: SECRET }] }), { dialect })
  const ann = await signUp(base, 'ann')
  const admin = await SseClient.open(base, { token: adminToken, query: 'subscribe=users' })
  const annStream = await SseClient.open(base, { token: ann.token, query: 'subscribe=users' })
  t.teardown(() => { admin.close(); annStream.close() })

  // An external sign-in creates a user.
  const external = await new SignJWT({ email: 'partner@example.com' }).setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER).setSubject('p-1').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET))
  const created = await fetch(`${base}/api/v1/table/users/auth/login-token`, { method: 'POST', headers: { authorization: `Bearer ${external}` } })
  t.equal(created.status, 200, 'login-token')
  const partnerId = (await created.json()).record.id

  // confirm-verification sets ann's verified flag.
  const token = await app.fastbase.auth.oneTimeTokens.issue('verify_email', 'users', { userId: ann.id, email: 'ann@example.com' }, 3600)
  t.equal((await api(base, '/table/users/auth/confirm-verification', { token }, ann.token)).status, 200, 'confirm-verification')

  // change-password writes ann's password hash (a field nobody reads).
  t.equal((await api(base, '/table/users/auth/change-password', { passwordCurrent: 'a long password 1', password: 'another long password', passwordConfirm: 'another long password' }, ann.token)).status, 200, 'change-password')
  await settle(app)

  const seen = admin.changes().map((c) => `${c.action}:${c.record.id === partnerId ? 'partner' : c.record.username}`)
  t.same(seen, ['insert:partner', 'update:ann', 'update:ann'], 'admin: the created user, the verification, the password change')
  t.match(admin.changes()[0].record, { email: 'partner@example.com', email_verified: true }, 'the created row as written')
  t.equal(admin.changes()[1].record.email_verified, true, 'the verification\'s row has the flag set')
  t.same(annStream.changes().map((c) => `${c.action}:${c.record.username}`), ['update:ann', 'update:ann'], 'ann: her own row only (listRule auth.uid == id)')
  t.notOk(annStream.changes().some((c) => 'password' in c.record || 'password_salt' in c.record), 'no password field reaches a user')
})
