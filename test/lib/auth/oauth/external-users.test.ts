// Find-or-create for external identities (lib/auth/oauth/external-users.ts), below the routes that use it:
// the same external account is always the same user, a verified email finds an existing account,
// an unverified one never does, and the sessions it opens are ordinary ones.
import t from 'tap'
import { buildApp, forEachDialect } from '../../../helper.js'
import { baseFields, authFields, sqlValue } from '../../../../lib/config/helpers.js'
import { signInExternal, type ExternalIdentity } from '../../../../lib/auth/oauth/external-users.js'
import { IDENTITIES } from '../../../../lib/auth/stores/store-tables.js'
import { isChallenge, type SessionResponse, type SignInResponse } from '../../../../lib/auth/sessions/session-service.js'
import type { DatabaseSettings } from '../../../../schemas/config.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000', jwtSecret: 'external-users-secret', rateLimit: false,
  tables: [{
    name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields],
    extensions: [{ name: 'auth', jwtSecret: 'users-key' }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id' }]
  }]
}

/** The session a sign-in answered (none of these users has a second factor on). */
function sessionOf (answer: SignInResponse): SessionResponse {
  if (isChallenge(answer)) throw new Error('a challenge where a session was expected')
  return answer
}

/** The status of the error a sign-in was refused with (0: it was not refused). */
const refusal = async (attempt: Promise<unknown>): Promise<number> => await attempt.then(() => 0, (err: { statusCode?: number }) => err.statusCode ?? -1)

const google = (subject: string, email?: string, emailVerified = true, name?: string): ExternalIdentity =>
  ({ provider: 'google', subject, email, emailVerified, name, raw: { sub: subject, email } })

forEachDialect(t, 'find or create by identity and verified email', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const at = app.fastbase.auth.tables.get('users')!
  const services = app.fastbase.auth
  const signIn = async (identity: ExternalIdentity) => sessionOf(await signInExternal(services, at, identity, 'auth:oauth'))
  const db = app.fastbase.db

  const first = await signIn(google('g-1', 'Ada.Lovelace@Example.com', true, 'Ada Lovelace'))
  t.match(first.record, { email: 'ada.lovelace@example.com', email_verified: true, name: 'Ada Lovelace', username: 'Ada_Lovelace' }, 'a new user from the identity')
  t.notOk('password' in first.record)
  const me = await app.inject({ method: 'GET', url: `/api/v1/table/users/view/${first.record.id}`, headers: { authorization: `Bearer ${first.token}` } })
  t.equal(me.statusCode, 200, 'an ordinary session: the token authenticates')
  const refreshed = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/refresh-token', headers: { authorization: `Bearer ${first.token}` }, payload: { refresh_token: first.refresh_token } })
  t.equal(refreshed.statusCode, 200, 'and refreshes')

  const again = await signIn(google('g-1', 'changed@example.com', true))
  t.equal(again.record.id, first.record.id, 'the same account is the same user, whatever its email says now')

  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'grace', email: 'grace@example.com', password: 'correct horse battery', name: 'Grace' } })
  t.equal(signUp.statusCode, 200, signUp.body)
  const linked = await signIn({ provider: 'github', subject: '42', email: 'GRACE@example.com', emailVerified: true, raw: {} })
  t.equal(linked.record.id, signUp.json().record.id, 'a verified email finds the password account')
  t.equal(linked.record.email_verified, true, 'and marks its address verified')

  t.equal(await refusal(signIn({ provider: 'other', subject: 'x', email: 'grace@example.com', emailVerified: false, raw: {} })),
    403, 'an unverified email never signs into an existing account')
  const unverified = await signIn({ provider: 'other', subject: 'y', email: 'new@example.com', emailVerified: false, raw: {} })
  t.equal(unverified.record.email_verified, false, 'an unverified new address makes an unverified account')

  t.equal(await refusal(signIn({ provider: 'other', subject: 'z', emailVerified: true, raw: {} })), 400, 'no email for a table that needs one')
  t.equal(await refusal(signIn({ provider: 'google', subject: '', emailVerified: true, raw: {} })), 401, 'no subject')

  const clash = await signIn(google('g-2', 'grace@other.example', true, 'grace'))
  t.match(clash.record.username, /^grace_[0-9a-f]{6}$/, 'a taken username gets a suffix')

  const [a, b] = await Promise.all([signIn(google('g-3', 'race@example.com')), signIn(google('g-3', 'race@example.com'))])
  t.equal(a.record.id, b.record.id, 'two first sign-ins at once make one user')
  t.equal((await db(IDENTITIES).where({ provider: 'google', subject: 'g-3' })).length, 1, 'and one link')

  await db('users').where('id', String(first.record.id)).delete()
  const afresh = await signIn(google('g-1', 'ada.lovelace@example.com'))
  t.not(afresh.record.id, first.record.id, 'a deleted user: the link goes, a new account is made')
  t.equal((await db(IDENTITIES).where({ provider: 'google', subject: 'g-1' })).length, 1)
})

forEachDialect(t, 'an account whose address nobody proved is taken over, not joined', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const at = app.fastbase.auth.tables.get('users')!
  const services = app.fastbase.auth
  const signIn = async (identity: ExternalIdentity) => sessionOf(await signInExternal(services, at, identity, 'auth:oauth'))
  const db = app.fastbase.db
  const view = async (session: { token: string, record: Record<string, unknown> }) =>
    (await app.inject({ method: 'GET', url: `/api/v1/table/users/view/${String(session.record.id)}`, headers: { authorization: `Bearer ${session.token}` } })).statusCode

  // The attacker signs up with the victim's address (never verified), signs in twice, and has the
  // attacker's own provider account linked to it.
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'mallory', email: 'victim@example.com', password: 'attacker pass 1', name: 'M' } })
  t.equal(signUp.statusCode, 200, signUp.body)
  const attacker = signUp.json()
  const second = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { identity: 'victim@example.com', password: 'attacker pass 1' } })
  t.equal(second.statusCode, 200)
  // A link the attacker would keep (recorded directly: the routes never link an unproven address).
  await db(IDENTITIES).insert({ id: 'planted-link', table_name: 'users', provider: 'acme', subject: 'mallory', user_id: attacker.record.id, email: null, data: null, created_at: 0, last_used_at: 0 })
  const passwordBefore = (await db('users').where('id', attacker.record.id).first()).password

  const victim = await signIn(google('g-victim', 'Victim@example.com', true, 'Victim'))
  t.equal(victim.record.id, attacker.record.id, 'the address\'s owner gets the account')
  t.equal(victim.record.email_verified, true)
  t.equal(await view(attacker), 401, 'every session of the attacker ended')
  t.equal(await view(second.json()), 401)
  t.equal(await view(victim), 200, 'the owner\'s session works')
  t.not((await db('users').where('id', attacker.record.id).first()).password, passwordBefore, 'the password is one nobody knows')
  const login = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { identity: 'victim@example.com', password: 'attacker pass 1' } })
  t.equal(login.statusCode, 400, 'the attacker\'s password no longer signs in')
  t.same((await db(IDENTITIES).where({ user_id: attacker.record.id })).map((l: { provider: string }) => l.provider), ['google'], 'the attacker\'s provider link is gone')
  t.equal(await refusal(signIn({ provider: 'acme', subject: 'mallory', email: 'mallory@example.com', emailVerified: true, raw: {} })), 0)
  const mallory = await db('users').where('email', 'mallory@example.com').first()
  t.not(mallory?.id, attacker.record.id, 'the attacker\'s provider account now makes an account of its own')

  // A verified account is joined as it is: sessions and password stay.
  const again = await signIn({ provider: 'github', subject: 'victim-gh', email: 'victim@example.com', emailVerified: true, raw: {} })
  t.equal(again.record.id, victim.record.id)
  t.equal(await view(victim), 200, 'joining a verified account ends no session')
})

// What the account's creator set before the owner took it over: role and meta (which rules read as
// auth.role and auth.meta), the profile, other fields a caller may write. A takeover sets them as a new
// account gets them (decision D90); rows the account owns stay.
forEachDialect(t, 'a takeover resets what the squatter set', async (t, dialect) => {
  const profile: DatabaseSettings = {
    ...config,
    tables: [{
      ...config.tables[0],
      fields: [
        ...baseFields, ...authFields,
        { name: 'bio', type: 'text', sqlType: 'text' },
        { name: 'plan', type: 'text', sqlType: 'text', default: sqlValue('free') },
        { name: 'settings', type: 'json', sqlType: 'json', default: sqlValue({ theme: 'light' }) },
        { name: 'handle', type: 'text', sqlType: 'text', notNull: true },
        // Only the system writes it: no caller, so no squatter, could have set it.
        { name: 'credits', type: 'integer', sqlType: 'integer', default: sqlValue(0), noInsert: true, noUpdate: true }
      ]
    }, {
      name: 'notes', autoSetUid: true,
      fields: [...baseFields, { name: 'owner', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id' } }, { name: 'body', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'owner == auth.uid', viewRule: 'owner == auth.uid', createRule: 'owner == auth.uid', updateRule: null, deleteRule: 'owner == auth.uid' }]
    }]
  }
  const app = await buildApp(t, profile, { dialect })
  const at = app.fastbase.auth.tables.get('users')!
  const squat = await app.inject({
    method: 'POST',
    url: '/api/v1/table/users/auth/sign-up',
    payload: { username: 'squatter', email: 'owner@example.com', password: 'squatter pass 1', name: 'Squatter', role: 'admin', meta: { tier: 'gold' }, bio: 'planted', plan: 'pro', settings: { theme: 'dark' }, handle: 'sq' }
  })
  t.equal(squat.statusCode, 200, squat.body)
  const squatter = squat.json()
  t.match(squatter.record, { role: 'admin', meta: { tier: 'gold' }, plan: 'pro' }, 'a caller could set them at sign-up')
  await app.fastbase.tables.users.edit({ id: squatter.record.id, values: { credits: 5 } as never }, { as: 'system' })
  const note = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { authorization: `Bearer ${squatter.token as string}` }, payload: { values: { owner: squatter.record.id, body: 'planted note' } } })
  t.equal(note.statusCode, 200, note.body)

  const owner = sessionOf(await signInExternal(app.fastbase.auth, at, google('g-owner', 'owner@example.com', true, 'Owner Name'), 'auth:one-tap'))
  t.equal(owner.record.id, squatter.record.id, 'taken over')
  t.match(owner.record, {
    email: 'owner@example.com',
    email_verified: true,
    name: 'Owner Name',
    username: 'Owner_Name',
    role: null,
    meta: null,
    avatar: null,
    bio: null,
    plan: 'free',
    settings: { theme: 'light' },
    credits: 5,
    handle: 'sq'
  }, 'the identity\'s name and username, defaults or null for the rest; what only the system writes, and a notNull field with no default, kept')
  t.equal(owner.record.role, null, 'no role')
  const claims = JSON.parse(Buffer.from(owner.token.split('.')[1], 'base64url').toString())
  t.notMatch(JSON.stringify(claims), /admin/, 'the owner\'s token carries no role the squatter chose')
  const notes = await app.inject({ url: '/api/v1/table/notes/list', headers: { authorization: `Bearer ${owner.token}` } })
  t.match(notes.json(), { items: [{ body: 'planted note' }], total: 1 }, 'rows the account owns stay, the owner\'s to keep or delete')
})
