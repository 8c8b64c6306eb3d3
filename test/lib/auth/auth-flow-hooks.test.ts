// Record before-hooks on the writes the auth flows make themselves (decision D69): sign-up, a password
// changed, reset or rehashed at login, an email verified, an account an external sign-in creates or
// takes over. Each flow runs the table's hook once, inside its transaction, with `event.source`
// naming it; the hook never sees a password, may set other columns, may not change the columns the
// flow vouches for, and refuses the flow (nothing written) by throwing. After-hooks are unchanged.
// And a SQL-mode action that writes a table refuses a before-hook it could not run.
import t from 'tap'
import { createHash } from 'node:crypto'
import { SignJWT } from 'jose'
import { buildApp, forEachDialect } from '../../helper.js'
import { errors } from '../../../lib/errors.js'
import { IDENTITIES } from '../../../lib/auth/stores/store-tables.js'
import type { AfterWriteEvent, BeforeInsertEvent, BeforeUpdateEvent } from '../../../lib/crud/record-hooks.js'
import { ada, extendingConfig } from '../../fixtures/extending/config.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import type { Tables } from '../../../plugins/types.js'

type Row = Record<string, unknown>
type Seen = { source?: string, values: Row, caller: string | null, where?: string }

const ISSUER = 'https://partner.test'
const SECRET = 'partner-shared-secret-0123456789abcdef'

/** An external JWT for `login-token`, from the configured HS256 issuer. */
async function partnerToken (sub: string, email: string, name?: string): Promise<string> {
  return await new SignJWT({ sub, email, email_verified: true, ...name === undefined ? {} : { name } })
    .setProtectedHeader({ alg: 'HS256' }).setIssuer(ISSUER).setAudience('blog-app').setIssuedAt().setExpirationTime('10m')
    .sign(new TextEncoder().encode(SECRET))
}

/** Waits (a little) for what runs after a commit. */
async function until (check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
}

forEachDialect(t, 'auth flows run the before-hooks', async (t, dialect) => {
  const config = extendingConfig('flows', { authProviders: [{ issuer: ISSUER, secret: SECRET, clientId: 'blog-app' }] } as Partial<DatabaseSettings>)
  const app = await buildApp(t, config, { dialect })
  const { hooks, db, auth } = app.fastbase
  const post = async (url: string, payload: unknown, token?: string) => {
    const reply = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return { status: reply.statusCode, body: reply.json() }
  }
  const loginToken = async (token: string) => {
    const reply = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-token', headers: { authorization: `Bearer ${token}` } })
    return { status: reply.statusCode, body: reply.json() }
  }
  const user = async (where: Row): Promise<Row | undefined> => await db('users').where(where).first()
  /** The user's row, every column decoded. */
  const record = async (id: string): Promise<Row> => await app.fastbase.tables.users.view({ id }, { as: 'system' }) as Row

  // One hook per event for the whole test; each part says what it does (`then`) and reads what it saw.
  const seen: { beforeInsert: Seen[], beforeUpdate: Seen[], afterUpdate: Row[] } = { beforeInsert: [], beforeUpdate: [], afterUpdate: [] }
  let then: (event: BeforeInsertEvent<Row> | BeforeUpdateEvent<Row>) => void = () => {}
  hooks.on('users', 'beforeInsert', (event) => {
    seen.beforeInsert.push({ source: event.source, values: { ...event.values }, caller: event.caller.uid })
    then(event as BeforeInsertEvent<Row>)
  })
  hooks.on('users', 'beforeUpdate', async (event) => {
    // The hook reads the user through the flow's own transaction.
    const [row] = await (event.tables as Tables).users.select({ where: event.where, select: ['id'] }, { as: 'system' }) as Row[]
    seen.beforeUpdate.push({ source: event.source, values: { ...event.values }, caller: event.caller.uid, where: row?.id as string })
    then(event as BeforeUpdateEvent<Row>)
  })
  hooks.on('users', 'afterUpdate', (event: AfterWriteEvent<Row>) => { seen.afterUpdate.push(event.row) })
  const reset = (next: typeof then = () => {}) => {
    seen.beforeInsert.length = 0
    seen.beforeUpdate.length = 0
    seen.afterUpdate.length = 0
    then = next
  }
  const refuse = () => { throw errors.forbidden('Refused by a hook') }

  await t.test('sign-up: the table\'s insert, without the password', async (t) => {
    reset(refuse)
    t.same(await post('/table/users/auth/sign-up', ada), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal(await user({ username: 'ada' }), undefined, 'refused: no user')
    t.same(seen.beforeInsert.map((s) => s.source), ['auth:sign-up'], 'the hook ran once, told it is a sign-up')
    t.same(Object.keys(seen.beforeInsert[0].values).sort(), ['email', 'name', 'username'], 'no password, no confirm field')

    reset((event) => { (event.values as Row).password = 'chosen by a hook' })
    t.equal((await post('/table/users/auth/sign-up', ada)).status, 500, 'a hook may not write a password')
    t.equal(await user({ username: 'ada' }), undefined)

    reset((event) => { event.values.name = 'Ada Lovelace' })
    const signUp = await post('/table/users/auth/sign-up', ada)
    t.equal(signUp.status, 200)
    t.equal(signUp.body.record.name, 'Ada Lovelace', 'the hook changed the name')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: ada.password })).status, 200, 'and the password is the caller\'s')
  })

  const session = (await post('/table/users/auth/login-password', { identity: 'ada', password: ada.password })).body
  const adaId = session.record.id as string
  const other = (await post('/table/users/auth/login-password', { identity: 'ada', password: ada.password })).body

  await t.test('password change', async (t) => {
    const body = { password: 'new password 1', passwordConfirm: 'new password 1', passwordCurrent: ada.password }
    const hashBefore = (await user({ id: adaId }))!.password
    reset(refuse)
    t.same(await post('/table/users/auth/change-password', body, session.token), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal((await user({ id: adaId }))!.password, hashBefore, 'refused: the hash is as it was')
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: other.refresh_token })).status, 200, 'and no session was revoked')
    t.match(seen.beforeUpdate, [{ source: 'auth:password-change', values: {}, caller: adaId, where: adaId }], 'once, as the user, on the user\'s row; no hash, no salt')
    t.equal(seen.beforeUpdate.length, 1)

    reset((event) => { event.values.meta = { changed: event.source } })
    t.same(await post('/table/users/auth/change-password', body, session.token), { status: 200, body: { success: true } })
    t.same((await record(adaId)).meta, { changed: 'auth:password-change' }, 'the hook\'s column is written with the hash')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'new password 1' })).status, 200)
    await until(() => seen.afterUpdate.length === 1)
    t.match(seen.afterUpdate, [{ id: adaId, meta: { changed: 'auth:password-change' } }], 'afterUpdate once, with the final row')
  })

  await t.test('password reset', async (t) => {
    const issue = async () => await auth.oneTimeTokens.issue('reset_password', 'users', { userId: adaId, email: 'ada@example.com' }, 600)
    const body = { password: 'reset password', passwordConfirm: 'reset password' }
    reset(refuse)
    t.same(await post('/table/users/auth/confirm-password-reset', { ...body, token: await issue() }), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'reset password' })).status, 400, 'refused: the password is as it was')
    t.equal((await record(adaId)).email_verified, false, 'and the email still unverified')
    t.match(seen.beforeUpdate, [{ source: 'auth:password-reset', values: { email_verified: true }, caller: null, where: adaId }], 'once, anonymous, shown the verified flag it sets')
    t.same(Object.keys(seen.beforeUpdate[0].values), ['email_verified'], 'no hash, no salt')

    reset((event) => { event.values.email_verified = false })
    t.equal((await post('/table/users/auth/confirm-password-reset', { ...body, token: await issue() })).status, 500, 'a hook may not change what the flow vouches for')
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'reset password' })).status, 400)

    reset((event) => { event.values.role = 'reset' })
    const done = await post('/table/users/auth/confirm-password-reset', { ...body, token: await issue() })
    t.equal(done.status, 200)
    t.match(done.body.record, { email_verified: true, role: 'reset' })
    t.equal((await post('/table/users/auth/login-password', { identity: 'ada', password: 'reset password' })).status, 200)
  })

  await t.test('email verification', async (t) => {
    reset()
    await app.fastbase.tables.users.update({ where: `id == '${adaId}'`, setValues: { email_verified: false, role: null } }, { as: 'system' })
    const issue = async () => await auth.oneTimeTokens.issue('verify_email', 'users', { userId: adaId, email: 'ada@example.com' }, 600)
    const signedIn = (await post('/table/users/auth/login-password', { identity: 'ada', password: 'reset password' })).body
    reset(refuse)
    t.same(await post('/table/users/auth/confirm-verification', { token: await issue() }, signedIn.token), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal((await record(adaId)).email_verified, false, 'refused: still unverified')
    t.match(seen.beforeUpdate, [{ source: 'auth:verify-email', values: { email_verified: true }, caller: adaId, where: adaId }])
    t.equal(seen.beforeUpdate.length, 1)

    reset((event) => { event.values.role = 'verified' })
    const done = await post('/table/users/auth/confirm-verification', { token: await issue() })
    t.equal(done.status, 200)
    t.match(done.body.record, { email_verified: true, role: 'verified' }, 'a click from the email (anonymous) gets a session with the hook\'s column')
    t.equal(seen.beforeUpdate[0].caller, null)
  })

  await t.test('a legacy hash rehashed at login', async (t) => {
    const legacy = createHash('sha256').update('legacy password' + 'somesalt').digest('hex')
    reset()
    await tablesInsertLegacy(legacy)
    reset(refuse)
    t.same(await post('/table/users/auth/login-password', { identity: 'old', password: 'legacy password' }), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal((await user({ username: 'old' }))!.password, legacy, 'refused: the old hash stays')
    t.match(seen.beforeUpdate, [{ source: 'auth:password-rehash', values: {}, caller: null }])
    t.equal(seen.beforeUpdate.length, 1)
    reset((event) => { event.values.role = 'rehashed' })
    const login = await post('/table/users/auth/login-password', { identity: 'old', password: 'legacy password' })
    t.equal(login.status, 200)
    t.equal(login.body.record.role, 'rehashed', 'the session\'s record is the row as written')
    t.match((await user({ username: 'old' }))!.password, /^scrypt\$/)
  })

  async function tablesInsertLegacy (hash: string): Promise<void> {
    await app.fastbase.tables.users.insert({ values: { id: 'legacyuser000000000000', username: 'old', email: 'old@example.com', password: 'placeholder 1', name: 'Old' } }, { as: 'system' })
    await db('users').where({ id: 'legacyuser000000000000' }).update({ password: hash, password_salt: 'somesalt' })
  }

  await t.test('an external sign-in creates an account', async (t) => {
    reset(refuse)
    t.same(await loginToken(await partnerToken('p-1', 'grace@example.com', 'Grace')), { status: 403, body: { code: 403, message: 'Refused by a hook', data: {} } })
    t.equal(await user({ email: 'grace@example.com' }), undefined, 'refused: no user')
    t.same(await db(IDENTITIES).where({ subject: 'p-1' }), [], 'and no link')
    t.equal(seen.beforeInsert.length, 1)
    t.match(seen.beforeInsert[0], { source: 'auth:login-token', caller: null, values: { email: 'grace@example.com', email_verified: true, name: 'Grace', username: String, id: String } })
    t.same(Object.keys(seen.beforeInsert[0].values).sort(), ['email', 'email_verified', 'id', 'name', 'username'], 'no password, no salt')

    reset((event) => { event.values.email = 'someone.else@example.com' })
    t.equal((await loginToken(await partnerToken('p-1', 'grace@example.com'))).status, 500, 'a hook may not change the address the provider vouched for')
    t.equal(await user({ email: 'someone.else@example.com' }), undefined)

    reset((event) => { (event.values as Row).views = 1 })
    t.match(await loginToken(await partnerToken('p-1', 'grace@example.com')), { status: 400, body: { data: { views: { _errors: ['Unknown field'] } } } }, 'a hook\'s column is checked')

    // A hook that gives the new account a value another account holds: a 400 naming the field, not a 500.
    reset()
    t.equal((await post('/table/users/auth/sign-up', { username: 'taken', email: 'taken@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'T' })).status, 200)
    reset((event) => { event.values.username = 'taken' })
    t.match(await loginToken(await partnerToken('p-1', 'grace@example.com')), { status: 400, body: { data: { username: { code: 'unique' } } } }, 'a taken value set by a hook is a 400 naming it')
    t.equal(await user({ email: 'grace@example.com' }), undefined)

    reset((event) => { event.values.name = 'Grace Hopper'; event.values.role = 'partner' })
    const signedIn = await loginToken(await partnerToken('p-1', 'grace@example.com', 'Grace'))
    t.equal(signedIn.status, 200)
    t.match(signedIn.body.record, { email: 'grace@example.com', name: 'Grace Hopper', role: 'partner', email_verified: true })
    reset()
    t.equal((await loginToken(await partnerToken('p-1', 'grace@example.com'))).body.record.id, signedIn.body.record.id, 'the next sign-in finds the account')
    t.same([seen.beforeInsert, seen.beforeUpdate], [[], []], 'and writes nothing')
  })

  await t.test('an external sign-in takes over an account whose address nobody proved', async (t) => {
    reset()
    const mallory = await post('/table/users/auth/sign-up', { username: 'mallory', email: 'victim@example.com', password: 'attacker pass', passwordConfirm: 'attacker pass', name: 'M' })
    t.equal(mallory.status, 200)
    reset(refuse)
    t.equal((await loginToken(await partnerToken('p-victim', 'victim@example.com'))).status, 403)
    t.equal((await post('/table/users/auth/refresh-token', { refresh_token: mallory.body.refresh_token })).status, 200, 'refused: nothing taken over, no session ended')
    t.equal((await post('/table/users/auth/login-password', { identity: 'mallory', password: 'attacker pass' })).status, 200, 'nor the password changed')
    t.match(seen.beforeUpdate, [{ source: 'auth:login-token', values: { email_verified: true }, caller: null, where: mallory.body.record.id }])
    // The profile a takeover gives the account (decision D90) is the hooks' to see and change too.
    t.same(Object.keys(seen.beforeUpdate[0].values).sort(), ['email_verified', 'name', 'username'])

    reset((event) => { event.values.name = 'Victim' })
    const victim = await loginToken(await partnerToken('p-victim', 'victim@example.com'))
    t.equal(victim.status, 200)
    t.match(victim.body.record, { id: mallory.body.record.id, name: 'Victim', email_verified: true })
    t.equal((await post('/table/users/auth/login-password', { identity: 'mallory', password: 'attacker pass' })).status, 400, 'taken over')
  })
})

forEachDialect(t, 'SQL-mode actions refuse a before-hook they could not run', async (t, dialect) => {
  const config = extendingConfig('sqlmode', {
    actions: [
      { name: 'bump', params: { id: 'string' }, sql: { type: 'UPDATE', table: 'posts', set: { views: { q: 'views + 1' } }, where: 'id = {:id}' } },
      { name: 'note', params: { m: 'string' }, sql: [{ type: 'INSERT', table: 'audit', values: { id: '{:m}', message: '{:m}' } }, { type: 'DELETE', table: 'audit', where: "message = 'gone'" }] }
    ]
  })
  const refused: string[] = []
  const app = await buildApp(t, config, {
    dialect,
    setup: (app) => {
      // Before ready, as a host registering hooks right after `register(fastbase)`.
      try { app.fastbase.hooks.on('posts', 'beforeUpdate', () => {}) } catch (error) { refused.push((error as Error).message) }
    }
  })
  t.same(refused, ['fastbase hooks: beforeUpdate on "posts" cannot run for the SQL-mode action "bump", which updates "posts" with values written in SQL; write that action in steps mode or as a code action'], 'refused before ready, naming the action and the table')
  const { hooks } = app.fastbase
  t.throws(() => hooks.on('audit', 'beforeInsert', () => {}), { message: 'fastbase hooks: beforeInsert on "audit" cannot run for the SQL-mode action "note", which inserts into "audit" with values written in SQL; write that action in steps mode or as a code action' }, 'and after ready')
  t.throws(() => hooks.on('audit', 'beforeDelete', () => {}), /SQL-mode action "note", which deletes from "audit"/)
  const fine = [hooks.on('posts', 'beforeInsert', () => {}), hooks.on('posts', 'beforeDelete', () => {}), hooks.on('users', 'beforeUpdate', () => {}), hooks.on('audit', 'beforeUpdate', () => {})]
  t.same(fine.map((off) => typeof off), ['function', 'function', 'function', 'function'], 'the events and tables no SQL-mode statement writes take before-hooks (each registration answers its remover)')
  const after: Row[] = []
  fine.push(hooks.on('audit', 'afterInsert', (event) => { after.push(event.row) }))
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/action/note', headers: { authorization: 'Bearer fastbase-test-admin-service-token' }, payload: { m: 'hello' } })).statusCode, 200)
  await until(() => after.length === 1)
  t.match(after, [{ id: 'hello', message: 'hello' }], 'their after-hooks run')
  for (const off of fine) off()
})
