// Write-path parity (decision D52): every path that writes a row is held to the same field rules. One
// rule (`expected` below) says, for each kind of write (insert a new row, update an existing one,
// delete it), caller and values, what must happen; every path that makes that kind of write is run
// on the same starting state and must give that status and leave exactly that row in the database.
// An upsert (insert `or: REPLACE`, `edit?or=INSERT`) that meets an existing row is an update.
import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { SignJWT } from 'jose'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken, statusOf } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { ANONYMOUS, adminContext, type AuthContext } from '../../../lib/auth-context.js'
import { verifyPassword } from '../../../lib/auth/passwords/passwords.js'
import { FastbaseError } from '../../../lib/errors.js'
import { planCacheCounts } from '../../../lib/crud/plan-cache.js'
import type { DatabaseSettings, TableField } from '../../../schemas/config.js'

type Row = Record<string, unknown>
type Caller = 'anonymous' | 'owner' | 'other' | 'admin'
const CALLERS: Caller[] = ['anonymous', 'owner', 'other', 'admin']

const OWNER_PASSWORD = 'owner password 1'
const OTHER_PASSWORD = 'other password 1'
const NEW_PASSWORD = 'a brand new password'

// The fields under test: `nick` plain (the updateRule reads new.nick), `tier` noUpdate, `badge`
// noInsert, `email` updatable here (so that a change must unverify it), `password` the auth password.
const fields: TableField[] = [
  ...baseFields,
  ...authFields.filter((f) => f.name !== 'avatar').map((f) => f.name === 'email' ? { ...f, noUpdate: false } : f),
  { name: 'nick', type: 'text', sqlType: 'text' },
  { name: 'tier', type: 'text', sqlType: 'text', noUpdate: true },
  { name: 'badge', type: 'text', sqlType: 'text', noInsert: true }
]

/** Values written to the owner's existing row. */
const UPDATES: Record<string, Row> = {
  plain: { nick: 'renamed' },
  refusedByRule: { nick: 'banned' },
  noUpdateField: { tier: 'gold' },
  noInsertField: { badge: 'star' },
  passwordWithoutCurrent: { password: NEW_PASSWORD },
  passwordWithCurrent: { password: NEW_PASSWORD, passwordCurrent: OWNER_PASSWORD },
  email: { email: 'moved@example.com' }
}

/** Values of a row that does not exist yet. */
const NEW_ROW = { username: 'neo', email: 'neo@example.com', name: 'Neo', password: 'neo password 1', nick: 'n' }
const INSERTS: Record<string, Row> = {
  plain: NEW_ROW,
  noInsertField: { ...NEW_ROW, badge: 'star' },
  noUpdateField: { ...NEW_ROW, tier: 'gold' }
}

const config: DatabaseSettings = {
  jwtSecret: 'parity-secret',
  appUrl: 'https://app.example.com',
  rateLimit: false,
  tables: [{
    name: 'users',
    autoSetUid: true,
    fields,
    extensions: [
      { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600 },
      { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id & new.nick != \'banned\'', deleteRule: 'auth.uid == id' }
    ]
  }],
  // Steps-mode actions: one per kind of write and set of values (step values are the config's own).
  actions: [
    ...Object.entries(UPDATES).flatMap(([name, values]) => [
      { name: `update_${name}`, params: { id: 'string' as const }, steps: { type: 'UPDATE' as const, table: 'users', where: 'id == params.id', setValues: values } },
      { name: `replace_${name}`, params: { id: 'string' as const }, steps: { type: 'INSERT' as const, table: 'users', values, expr: { id: 'params.id' }, or: 'REPLACE' as const } }
    ]),
    ...Object.entries(INSERTS).map(([name, values]) => ({ name: `insert_${name}`, steps: { type: 'INSERT' as const, table: 'users', values } })),
    { name: 'delete', params: { id: 'string' as const }, steps: { type: 'DELETE' as const, table: 'users', where: 'id == params.id' } }
  ]
}

// ---------------------------------------------------------------- the one rule

type Outcome = { status: number } | 'written' | 'refused'

/** What a write of `values` by `caller` must come to, from the documented field rules and table rules. */
function expected (kind: 'insert' | 'update' | 'delete', caller: Caller, values: Row): Outcome {
  const admin = caller === 'admin'
  if (kind === 'delete') return admin || caller === 'owner' ? 'written' : 'refused'
  // noInsert / noUpdate bind everyone, admins included.
  if (kind === 'insert') return values.badge !== undefined ? { status: 403 } : 'written'
  if (values.tier !== undefined) return { status: 403 }
  if (values.password !== undefined && !admin) {
    if (caller === 'anonymous') return { status: 403 }
    // The current password is required, and checked against the caller's own.
    if (values.passwordCurrent === undefined || caller !== 'owner') return { status: 400 }
  }
  return admin || (caller === 'owner' && values.nick !== 'banned') ? 'written' : 'refused'
}

// ---------------------------------------------------------------- the paths

interface World {
  app: FastifyInstance
  owner: Row
  ownerId: string
  tokens: Record<Caller, string | undefined>
  contexts: Record<Caller, AuthContext>
  freshId: () => string
}

/**
 * A path: how it makes one kind of write, and the status it answers when the table rules leave no row
 * to write. `values`: what it must send to write `v` (the insert route asks for every required field).
 */
interface Path { name: string, refused: number, values?: (v: Row) => Row, run: (w: World, caller: Caller, values: Row) => Promise<number> }

/** What an insert of the owner's row must hold besides `v` (the route requires every notNull field). */
function wholeOwnerRow (v: Row): Row {
  const whole: Row = { username: 'owner', email: 'owner@example.com', name: 'owner', password: NEW_PASSWORD, passwordCurrent: OWNER_PASSWORD, ...v }
  if (v.password !== undefined && v.passwordCurrent === undefined) delete whole.passwordCurrent
  return whole
}

async function http (w: World, caller: Caller, url: string, payload: unknown): Promise<number> {
  const token = w.tokens[caller]
  const res = await w.app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  if (res.statusCode >= 500) throw new Error(`${url}: ${res.body}`)
  return res.statusCode
}

async function inProcess (w: World, caller: Caller, action: string, params: Row): Promise<number> {
  try {
    await w.app.fastbase.runAction(action, params, { auth: w.contexts[caller] })
    return 200
  } catch (error) {
    if (error instanceof FastbaseError) return error.statusCode
    throw error
  }
}

const nameOf = (values: Row): string => Object.entries(UPDATES).find(([, v]) => v === values)?.[0] ?? Object.entries(INSERTS).find(([, v]) => v === values)![0]

const UPDATE_PATHS: Path[] = [
  { name: 'update', refused: 200, run: (w, c, v) => http(w, c, '/table/users/update', { where: `id == '${w.ownerId}'`, setValues: v }) },
  { name: 'update or=IGNORE', refused: 200, run: (w, c, v) => http(w, c, '/table/users/update', { where: `id == '${w.ownerId}'`, setValues: v, or: 'IGNORE' }) },
  { name: 'update or=REPLACE', refused: 200, run: (w, c, v) => http(w, c, '/table/users/update', { where: `id == '${w.ownerId}'`, setValues: v, or: 'REPLACE' }) },
  { name: 'edit', refused: 404, run: (w, c, v) => http(w, c, `/table/users/edit/${w.ownerId}`, v) },
  { name: 'edit?or=INSERT (its id)', refused: 404, run: (w, c, v) => http(w, c, `/table/users/edit/${w.ownerId}?or=INSERT`, v) },
  { name: 'edit?or=INSERT (new id, its username)', refused: 403, run: (w, c, v) => http(w, c, `/table/users/edit/${w.freshId()}?or=INSERT`, { ...v, username: w.owner.username }) },
  { name: 'insert or=REPLACE (its id)', refused: 403, values: wholeOwnerRow, run: (w, c, v) => http(w, c, '/table/users/insert', { values: { ...v, id: w.ownerId }, or: 'REPLACE' }) },
  { name: 'insert or=REPLACE (new id, its username)', refused: 403, values: wholeOwnerRow, run: (w, c, v) => http(w, c, '/table/users/insert', { values: { ...v, id: w.freshId(), username: w.owner.username }, or: 'REPLACE' }) },
  { name: 'action UPDATE step', refused: 200, run: (w, c, v) => http(w, c, `/action/update_${nameOf(v)}`, { id: w.ownerId }) },
  { name: 'action INSERT or=REPLACE step', refused: 403, run: (w, c, v) => http(w, c, `/action/replace_${nameOf(v)}`, { id: w.ownerId }) },
  { name: 'runAction UPDATE step', refused: 200, run: (w, c, v) => inProcess(w, c, `update_${nameOf(v)}`, { id: w.ownerId }) },
  { name: 'runAction INSERT or=REPLACE step', refused: 403, run: (w, c, v) => inProcess(w, c, `replace_${nameOf(v)}`, { id: w.ownerId }) }
]

const INSERT_PATHS: Path[] = [
  { name: 'insert', refused: 403, run: (w, c, v) => http(w, c, '/table/users/insert', { values: v }) },
  { name: 'insert or=IGNORE', refused: 403, run: (w, c, v) => http(w, c, '/table/users/insert', { values: v, or: 'IGNORE' }) },
  { name: 'insert or=REPLACE', refused: 403, run: (w, c, v) => http(w, c, '/table/users/insert', { values: v, or: 'REPLACE' }) },
  { name: 'edit?or=INSERT', refused: 403, run: (w, c, v) => http(w, c, `/table/users/edit/${w.freshId()}?or=INSERT`, v) },
  { name: 'action INSERT step', refused: 403, run: (w, c, v) => http(w, c, `/action/insert_${nameOf(v)}`, {}) },
  { name: 'runAction INSERT step', refused: 403, run: (w, c, v) => inProcess(w, c, `insert_${nameOf(v)}`, {}) }
]

const DELETE_PATHS: Path[] = [
  { name: 'delete', refused: 200, run: (w, c) => http(w, c, '/table/users/delete', { where: `id == '${w.ownerId}'` }) },
  { name: 'action DELETE step', refused: 200, run: (w, c) => http(w, c, '/action/delete', { id: w.ownerId }) },
  { name: 'runAction DELETE step', refused: 200, run: (w, c) => inProcess(w, c, 'delete', { id: w.ownerId }) }
]

// ---------------------------------------------------------------- the state, before and after

const FIELDS = ['username', 'email', 'email_verified', 'name', 'nick', 'tier', 'badge']

/** Which password a stored hash holds (a hash costs a scrypt: the owner's own is compared as text). */
async function passwordState (w: World, stored: string, given: string): Promise<string> {
  if (stored === w.owner.password) return 'unchanged'
  if (!stored.startsWith('scrypt$')) return 'stored raw'
  return (await verifyPassword(given, stored)).ok ? 'the one given' : 'another'
}

/** A user row as the test compares it: its fields, which password signs in, which of the owner's sessions live. */
async function observe (w: World, where: Row): Promise<Row | null> {
  const { db, dialect } = w.app.fastbase
  const table = w.app.fastbase.descriptors.get('users')!
  const raw = await db('users').where(where).first()
  if (raw === undefined) return null
  const row: Row = Object.fromEntries(FIELDS.map((name) => [name, dialect.decode(table.fields.get(name)!, raw[name])]))
  row.password = await passwordState(w, raw.password as string, row.username === 'neo' ? NEW_ROW.password : NEW_PASSWORD)
  const live = await db('_fastbase_sessions').where({ user_id: raw.id }).whereNull('revoked_at').select('id')
  row.sessions = live.length
  return row
}

async function reset (w: World): Promise<void> {
  const db = w.app.fastbase.db
  await db('users').whereNotIn('username', ['owner', 'other']).del()
  await db('users').where({ id: w.ownerId }).del()
  await db('users').insert(w.owner)
  await db('_fastbase_sessions').where({ user_id: w.ownerId }).update({ revoked_at: null })
}

async function setUp (t: Test, dialect: 'sqlite' | 'postgres', settings = config): Promise<World> {
  const app = await buildApp(t, settings, { dialect })
  const post = async (url: string, payload: unknown, token?: string): Promise<Row> => {
    const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.body}`)
    return res.json()
  }
  for (const [username, password] of [['owner', OWNER_PASSWORD], ['other', OTHER_PASSWORD]]) {
    await post('/table/users/auth/sign-up', { username, email: `${username}@example.com`, name: username, password, tier: 'basic', nick: username })
  }
  const login = async (identity: string, password: string): Promise<{ token: string, sid: string, id: string }> => {
    const session = await post('/table/users/auth/login-password', { identity, password }) as { token: string, record: { id: string } }
    const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString()) as { sid: string }
    return { token: session.token, sid: claims.sid, id: session.record.id }
  }
  const used = await login('owner', OWNER_PASSWORD)
  await login('owner', OWNER_PASSWORD) // a second session: a password change must end it
  const other = await login('other', OTHER_PASSWORD)
  // The owner's address is proven: a change must unprove it.
  const verified = app.fastbase.descriptors.get('users')!.fields.get('email_verified')!
  await app.fastbase.db('users').where({ id: used.id }).update({ email_verified: app.fastbase.dialect.encode(verified, true) })
  const owner = await app.fastbase.db('users').where({ id: used.id }).first() as Row
  const user = (id: string, sid: string): AuthContext => ({ ...ANONYMOUS, uid: id, sid, cid: 'users' })
  let n = 0
  return {
    app,
    owner,
    ownerId: used.id,
    tokens: { anonymous: undefined, owner: used.token, other: other.token, admin: adminToken },
    contexts: { anonymous: ANONYMOUS, owner: user(used.id, used.sid), other: user(other.id, other.sid), admin: adminContext('superadmin') },
    freshId: () => `fresh${String(++n).padStart(10, '0')}`
  }
}

/** The owner's row after a write of `values` that `outcome` allows (or not) by `caller`. */
function ownerAfter (before: Row, outcome: Outcome, caller: Caller, values: Row): Row | null {
  if (outcome !== 'written') return before
  const after = { ...before }
  for (const name of FIELDS) if (values[name] !== undefined) after[name] = values[name]
  if (values.email !== undefined && values.email !== before.email) after.email_verified = false
  if (values.password !== undefined) {
    after.password = 'the one given'
    // The caller changing their own password keeps the session it used; every other one ends.
    after.sessions = caller === 'owner' ? 1 : 0
  }
  return after
}


forEachDialect(t, 'every write path enforces the same field rules', async (t, dialect) => {
  const w = await setUp(t, dialect)
  const before = (await observe(w, { id: w.ownerId }))!
  t.same(before, { username: 'owner', email: 'owner@example.com', email_verified: true, name: 'owner', nick: 'owner', tier: 'basic', badge: null, password: 'unchanged', sessions: 3 }, 'starting state (sign-up and two sign-ins)')

  for (const path of UPDATE_PATHS) {
    for (const [name, given] of Object.entries(UPDATES)) {
      const values = path.values?.(given) ?? given
      for (const caller of CALLERS) {
        await reset(w)
        const outcome = expected('update', caller, values)
        const status = await path.run(w, caller, values)
        const want = typeof outcome === 'object' ? outcome.status : outcome === 'written' ? 200 : path.refused
        t.same({ status, row: await observe(w, { id: w.ownerId }) }, { status: want, row: ownerAfter(before, outcome, caller, values) }, `${path.name} × ${name} × ${caller}`)
      }
    }
  }

  for (const path of INSERT_PATHS) {
    for (const [name, values] of Object.entries(INSERTS)) {
      for (const caller of CALLERS) {
        await reset(w)
        const outcome = expected('insert', caller, values)
        const status = await path.run(w, caller, values)
        const created = outcome === 'written'
          ? { username: 'neo', email: 'neo@example.com', email_verified: false, name: 'Neo', nick: 'n', tier: values.tier ?? null, badge: null, password: 'the one given', sessions: 0 }
          : null
        t.same({ status: status === 200 ? 200 : status, row: await observe(w, { username: 'neo' }), owner: await observe(w, { id: w.ownerId }) },
          { status: typeof outcome === 'object' ? outcome.status : 200, row: created, owner: before }, `${path.name} × ${name} × ${caller}`)
      }
    }
  }

  for (const path of DELETE_PATHS) {
    for (const caller of CALLERS) {
      await reset(w)
      const outcome = expected('delete', caller, {})
      const status = await path.run(w, caller, {})
      t.same({ status, row: await observe(w, { id: w.ownerId }) }, { status: outcome === 'written' ? 200 : path.refused, row: outcome === 'written' ? null : before }, `${path.name} × ${caller}`)
    }
  }
})

// ---------------------------------------------------------------- before-hooks, the auth flows' writes too

// What a before-hook sets is held to one rule on every path that writes a user row: the table API's
// (HTTP, in process, upserts, action steps) and the auth flows' own writes, which go through the same
// write path (decision D143). Written, the row carries the hook's values, its `updated` stamp is new,
// and the after-hook (realtime's change, the same capture) gets the row as stored; refused, nothing is
// written or reported. The one difference is the rule's own: the columns an auth flow vouches for (the
// id, email and verified flag) are the flow's, where a table API hook may stamp them.
const hookConfig: DatabaseSettings = {
  ...config,
  tables: [{ ...config.tables[0], fields: [...fields, { name: 'score', type: 'integer', sqlType: 'integer' }] }],
  authProviders: [{ issuer: 'https://partner.test', secret: 'partner-shared-secret-0123456789abcdef', clientId: 'parity-app' }]
} as DatabaseSettings

/** What a before-hook sets, by name. */
const HOOK_SETS: Record<string, Row> = {
  plain: { nick: 'hooked', name: 'Hooked' },
  noUpdateField: { tier: 'gold' },
  verifiedFlag: { email_verified: false },
  unknownField: { nope: 1 },
  illTyped: { score: 'many' },
  password: { password: 'chosen by a hook' }
}

/** What a write whose before-hook sets `set` must come to; `flow`: an auth flow's own write. */
function hookedOutcome (set: Row, flow: boolean): Outcome {
  // Passwords are written by callers and the flows only; an owned column is the flow's: server errors.
  if (set.password !== undefined || (flow && set.email_verified !== undefined)) return { status: 500 }
  if (set.nope !== undefined || set.score === 'many') return { status: 400 }
  return 'written'
}

/**
 * A path that writes a user row; `source` is what its hook's `event.source` says, `flow` an auth flow's
 * own write, `prepare` the state it starts from (after the common reset).
 */
interface HookPath { name: string, source?: string, flow: boolean, prepare?: (w: World) => Promise<void>, run: (w: World, n: number) => Promise<number> }

async function post (w: World, url: string, payload: object, token?: string): Promise<number> {
  const res = await w.app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  return res.statusCode
}

/** An external JWT for `login-token` from the configured issuer, the address verified. */
async function partnerToken (sub: string, email: string): Promise<string> {
  return await new SignJWT({ sub, email, email_verified: true }).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://partner.test')
    .setAudience('parity-app').setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode('partner-shared-secret-0123456789abcdef'))
}

const oneTime = async (w: World, kind: 'reset_password' | 'verify_email') => await w.app.fastbase.auth.oneTimeTokens.issue(kind, 'users', { userId: w.ownerId, email: 'owner@example.com' }, 600)
const setColumns = async (w: World, values: Row) => {
  const table = w.app.fastbase.descriptors.get('users')!
  await w.app.fastbase.db('users').where({ id: w.ownerId }).update(Object.fromEntries(Object.entries(values).map(([name, v]) => [name, w.app.fastbase.dialect.encode(table.fields.get(name)!, v)])))
}

const HOOKED_UPDATES: HookPath[] = [
  { name: 'update', flow: false, run: (w) => post(w, '/table/users/update', { where: `id == '${w.ownerId}'`, setValues: { nick: 'renamed' } }, adminToken) },
  { name: 'edit', flow: false, run: (w) => post(w, `/table/users/edit/${w.ownerId}`, { nick: 'renamed' }, adminToken) },
  { name: 'insert or=REPLACE', flow: false, run: (w) => post(w, '/table/users/insert', { values: { ...wholeOwnerRow({ nick: 'renamed' }), id: w.ownerId }, or: 'REPLACE' }, adminToken) },
  { name: 'in-process update', flow: false, run: (w) => statusOf(() => w.app.fastbase.tables.users.update({ where: `id == '${w.ownerId}'`, setValues: { nick: 'renamed' } }, { as: 'system' })) },
  { name: 'runAction UPDATE step', flow: false, run: (w) => statusOf(() => w.app.fastbase.runAction('update_plain', { id: w.ownerId }, { auth: w.contexts.admin })) },
  { name: 'change-password', source: 'auth:password-change', flow: true, run: (w) => post(w, '/table/users/auth/change-password', { password: NEW_PASSWORD, passwordCurrent: OWNER_PASSWORD }, w.tokens.owner) },
  { name: 'confirm-password-reset', source: 'auth:password-reset', flow: true, run: async (w) => await post(w, '/table/users/auth/confirm-password-reset', { token: await oneTime(w, 'reset_password'), password: NEW_PASSWORD }) },
  { name: 'confirm-verification', source: 'auth:verify-email', flow: true, run: async (w) => await post(w, '/table/users/auth/confirm-verification', { token: await oneTime(w, 'verify_email') }, w.tokens.owner) },
  {
    name: 'login-password (a legacy hash rehashed)',
    source: 'auth:password-rehash',
    flow: true,
    prepare: async (w) => { await w.app.fastbase.db('users').where({ id: w.ownerId }).update({ password: createHash('sha256').update(`${OWNER_PASSWORD}somesalt`).digest('hex'), password_salt: 'somesalt' }) },
    run: (w) => post(w, '/table/users/auth/login-password', { identity: 'owner', password: OWNER_PASSWORD })
  },
  {
    name: 'login-token (an unproven account taken over)',
    source: 'auth:login-token',
    flow: true,
    prepare: async (w) => { await setColumns(w, { email_verified: false }) },
    run: async (w, n) => (await w.app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-token', headers: { authorization: `Bearer ${await partnerToken(`owner-${n}`, 'owner@example.com')}` } })).statusCode
  }
]

const HOOKED_INSERTS: HookPath[] = [
  { name: 'insert', flow: false, run: (w) => post(w, '/table/users/insert', { values: NEW_ROW }, adminToken) },
  { name: 'in-process insert', flow: false, run: (w) => statusOf(() => w.app.fastbase.tables.users.insert({ values: NEW_ROW }, { as: 'system' })) },
  { name: 'sign-up', source: 'auth:sign-up', flow: false, run: (w) => post(w, '/table/users/auth/sign-up', NEW_ROW) },
  {
    name: 'login-token (a first sign-in creates the account)',
    source: 'auth:login-token',
    flow: true,
    run: async (w, n) => (await w.app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-token', headers: { authorization: `Bearer ${await partnerToken(`neo-${n}`, NEW_ROW.email)}` } })).statusCode
  }
]

forEachDialect(t, 'every write path runs the before-hooks by one rule, the auth flows\' own writes too', async (t, dialect) => {
  const w = await setUp(t, dialect, hookConfig)
  const { app } = w
  const table = app.fastbase.descriptors.get('users')!
  const OLD = '2001-02-03T04:05:06.000Z'
  let hookSets: Row = {}
  // What each hook heard: the before-hook's source and caller, the after-hook's row and caller.
  const seen: Array<{ source?: string, caller: string | null }> = []
  const reported: Row[] = []
  const reportedCallers: Array<string | null | undefined> = []
  app.fastbase.hooks.on('users', 'beforeUpdate', (event) => { seen.push({ source: event.source, caller: event.caller.uid }); Object.assign(event.values, hookSets) })
  app.fastbase.hooks.on('users', 'beforeInsert', (event) => { seen.push({ source: event.source, caller: event.caller.uid }); Object.assign(event.values, hookSets) })
  app.fastbase.hooks.on('users', 'afterUpdate', (event) => { reported.push(event.row); reportedCallers.push(event.caller?.uid) })
  app.fastbase.hooks.on('users', 'afterInsert', (event) => { reported.push(event.row); reportedCallers.push(event.caller?.uid) })
  /** A user row as stored, every column decoded (as the after-hooks and realtime get it). */
  const stored = async (where: Row): Promise<Row | null> => {
    const raw = await app.fastbase.db('users').where(where).first()
    return raw === undefined ? null : Object.fromEntries(table.fieldList.map((f) => [f.name, app.fastbase.dialect.decode(f, raw[f.name])]))
  }
  /** What the write left: its status, the hook's columns as stored, whether `updated` is new, and what was reported of it. */
  const after = async (status: number, where: Row, set: Row) => {
    // After-hooks run once the write is committed: by the answer, or never.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const row = await stored(where)
    return {
      status,
      hooked: row === null ? null : Object.fromEntries(Object.keys(set).filter((name) => table.fields.has(name) && name !== 'password').map((name) => [name, row[name]])),
      stamped: row === null ? null : row.updated !== OLD,
      reported: reported.length === 0 ? 'nothing' : reported.length === 1 && JSON.stringify(reported[0]) === JSON.stringify(row) ? 'the row as stored' : reported
    }
  }
  let n = 0
  for (const [kind, paths] of [['update', HOOKED_UPDATES], ['insert', HOOKED_INSERTS]] as const) {
    for (const path of paths) {
      for (const [name, set] of Object.entries(HOOK_SETS)) {
        await reset(w)
        await setColumns(w, { updated: OLD })
        await path.prepare?.(w)
        hookSets = set
        seen.length = 0
        reported.length = 0
        reportedCallers.length = 0
        const outcome = hookedOutcome(set, path.flow)
        const where = kind === 'update' ? { id: w.ownerId } : { email: NEW_ROW.email }
        const before = await stored(where)
        const status = await path.run(w, ++n)
        const written = outcome === 'written'
        const unchanged = (names: string[]) => Object.fromEntries(names.map((name) => [name, before![name]]))
        const want = {
          status: typeof outcome === 'object' ? outcome.status : 200,
          hooked: written ? set : before === null ? null : unchanged(Object.keys(set).filter((name) => table.fields.has(name) && name !== 'password')),
          stamped: written ? true : before === null ? null : false,
          reported: written ? 'the row as stored' : 'nothing'
        }
        t.same(await after(status, where, set), want, `${kind}: ${path.name} × a hook setting ${name}`)
        t.same(seen.map((s) => s.source), [path.source], `${kind}: ${path.name} × ${name}: the hook ran once, its event.source ${path.source ?? 'undefined'}`)
        t.same(reportedCallers, written ? seen.map((s) => s.caller) : [], `${kind}: ${path.name} × ${name}: the after-hook hears the caller the before-hook saw`)
      }
    }
  }
})

// ---------------------------------------------------------------- rules that follow a relation

// A comment may only be written onto a post its author may see (`new.post_id.public`, decision
// D95): every path that writes a comment must refuse bob's comment on alice's private post and
// accept it on a public one, and refuse moving his comment there. And refuse it exactly as it refuses
// a comment on a post that does not exist (decision D104): 400 `foreign_key`, the same answer, or the
// write would tell bob which hidden posts exist.
const relationConfig: DatabaseSettings = {
  jwtSecret: 'parity-relations',
  appUrl: 'https://app.example.com',
  tables: [
    {
      name: 'people',
      fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
    },
    {
      name: 'posts',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'public', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'owner_id', type: 'relation', sqlType: 'text', foreignKey: { table: 'people', column: 'id' } }
      ],
      extensions: [{ name: 'rules', listRule: 'public == true | owner_id == auth.uid', viewRule: 'public == true | owner_id == auth.uid', createRule: null, updateRule: null, deleteRule: null }]
    },
    {
      name: 'comments',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'author_id', type: 'text', sqlType: 'text' },
        { name: 'post_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'posts', column: 'id' } }
      ],
      extensions: [{
        name: 'rules',
        listRule: 'true',
        viewRule: 'true',
        createRule: 'auth.uid != null & author_id == auth.uid & (new.post_id.public == true | new.post_id.owner_id == auth.uid)',
        updateRule: 'auth.uid != null & author_id == auth.uid & (new.post_id.public == true | new.post_id.owner_id == auth.uid)',
        deleteRule: null
      }]
    }
  ],
  actions: [
    { name: 'comment', params: { id: 'number', post: 'number' }, steps: { type: 'INSERT', table: 'comments', values: {}, expr: { id: 'params.id', post_id: 'params.post', author_id: 'auth.uid' } } },
    { name: 'move', params: { id: 'number', post: 'number' }, steps: { type: 'UPDATE', table: 'comments', where: 'id == params.id', set: { post_id: 'params.post' } } }
  ]
}

forEachDialect(t, 'every write path enforces a rule that follows a relation (new.post_id.public)', async (t, dialect) => {
  const bob: AuthContext = { ...ANONYMOUS, uid: 'bob', cid: 'people' }
  // bob's requests through HTTP carry the same caller as the in-process ones.
  const app = await buildApp(t, relationConfig, { dialect, setup: (app) => app.addHook('onRequest', async (request) => { if (request.headers['x-bob'] !== undefined) request.fastbaseAuth = bob }) })
  const db = app.fastbase.db
  const encode = (v: boolean) => app.fastbase.dialect.encode(app.fastbase.descriptors.get('posts')!.fields.get('public')!, v)
  await db('people').insert([{ id: 'alice' }, { id: 'bob' }])
  await db('posts').insert([{ id: 1, public: encode(true), owner_id: 'alice' }, { id: 2, public: encode(false), owner_id: 'alice' }, { id: 3, public: encode(false), owner_id: 'bob' }])
  const reset = async () => {
    await db('comments').del()
    await db('comments').insert({ id: 10, author_id: 'bob', post_id: 1 })
  }
  const http = async (url: string, payload: object): Promise<Answer> => {
    const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: { 'x-bob': '1' } })
    if (res.statusCode >= 500) throw new Error(`${url}: ${res.body}`)
    return { status: res.statusCode, body: res.body }
  }
  const answerOf = async (call: () => Promise<unknown>): Promise<Answer> => {
    try {
      return { status: 200, body: JSON.stringify(await call()) }
    } catch (error) {
      if (error instanceof FastbaseError) return { status: error.statusCode, body: JSON.stringify({ code: error.errorCode, message: error.message, data: error.data }) }
      throw error
    }
  }
  const inProcess = async (action: string, params: Row): Promise<Answer> => await answerOf(async () => await app.fastbase.runAction(action, params, { auth: bob }))
  // A private post of another, and a post no row has: one answer.
  const refusedAsMissing = async (name: string, run: (post: number) => Promise<Answer>, unchanged: () => Promise<unknown>) => {
    await reset()
    const hidden = await run(2)
    await unchanged()
    await reset()
    const missing = await run(99)
    await unchanged()
    t.same(hidden, missing, `${name}: a private post of another answers as a post that does not exist`)
    t.equal(hidden.status, 400, `${name}: 400`)
    t.match(hidden.body, /"post_id":\{"code":"foreign_key"/, `${name}: foreign_key under post_id`)
  }
  const inserts: Array<[string, (post: number) => Promise<Answer>]> = [
    ['insert', (post) => http('/table/comments/insert', { values: { id: 20, author_id: 'bob', post_id: post } })],
    ['insert or=IGNORE', (post) => http('/table/comments/insert', { values: { id: 20, author_id: 'bob', post_id: post }, or: 'IGNORE' })],
    ['insert or=REPLACE', (post) => http('/table/comments/insert', { values: { id: 20, author_id: 'bob', post_id: post }, or: 'REPLACE' })],
    ['edit?or=INSERT', (post) => http('/table/comments/edit/20?or=INSERT', { author_id: 'bob', post_id: post })],
    ['action INSERT step', (post) => http('/action/comment', { id: 20, post })],
    ['runAction INSERT step', (post) => inProcess('comment', { id: 20, post })],
    ['in-process insert', async (post) => await answerOf(async () => await app.fastbase.tables.comments.insert({ values: { id: 20, author_id: 'bob', post_id: post } }, { as: bob }))]
  ]
  for (const [name, run] of inserts) {
    await refusedAsMissing(name, run, async () => t.equal((await db('comments').where({ id: 20 })).length, 0, `${name}: not written`))
    await reset()
    t.equal((await run(1)).status, 200, `${name}: a comment on a public post is written`)
    t.equal((await db('comments').where({ id: 20 })).length, 1, `${name}: and there`)
    await reset()
    t.equal((await run(3)).status, 200, `${name}: a comment on the author's own private post is written`)
  }
  const updates: Array<[string, (post: number) => Promise<Answer>]> = [
    ['update', (post) => http('/table/comments/update', { where: 'id == 10', setValues: { post_id: post } })],
    ['update with set', (post) => http('/table/comments/update', { where: 'id == 10', set: { post_id: String(post) } })],
    ['update or=REPLACE', (post) => http('/table/comments/update', { where: 'id == 10', setValues: { post_id: post }, or: 'REPLACE' })],
    ['edit', (post) => http('/table/comments/edit/10', { post_id: post })],
    ['edit?or=INSERT (its id)', (post) => http('/table/comments/edit/10?or=INSERT', { post_id: post })],
    ['insert or=REPLACE (its id)', (post) => http('/table/comments/insert', { values: { id: 10, author_id: 'bob', post_id: post }, or: 'REPLACE' })],
    ['action UPDATE step', (post) => http('/action/move', { id: 10, post })],
    ['runAction UPDATE step', (post) => inProcess('move', { id: 10, post })],
    ['in-process update', async (post) => await answerOf(async () => await app.fastbase.tables.comments.update({ where: 'id == 10', setValues: { post_id: post } }, { as: bob }))]
  ]
  for (const [name, run] of updates) {
    await refusedAsMissing(name, run, async () => t.same((await db('comments').where({ id: 10 }).first()).post_id, 1, `${name}: the comment stays where it was`))
    await reset()
    t.equal((await run(3)).status, 200, `${name}: moving it onto the author's own post is written`)
    t.same((await db('comments').where({ id: 10 }).first()).post_id, 3, `${name}: and moved`)
  }
  // Where the row it references is only known once the statement runs, a caller cannot write it.
  await reset()
  const computed = await http('/table/comments/update', { where: 'id == 10', set: { post_id: 'id - 7' } })
  t.equal(computed.status, 400, 'a foreign key set from the row itself is refused for a caller the rules apply to')
  t.match(computed.body, /Invalid post_id: a foreign key field is given a value/)
  t.same((await db('comments').where({ id: 10 }).first()).post_id, 1, 'and nothing moved')
  // An admin writes as before: the database alone tells a missing post.
  const asAdmin = async (post: number) => (await app.inject({ method: 'POST', url: '/api/v1/table/comments/update', headers: { authorization: `Bearer ${adminToken}` }, payload: { where: 'id == 10', set: { post_id: String(post) } } })).statusCode
  await reset()
  t.equal(await asAdmin(2), 200, 'an admin moves a comment onto any post')
  t.equal(await asAdmin(99), 400, 'but not onto a post that does not exist')
})

/** A write's answer: its status and body. */
interface Answer { status: number, body: string }

// ---------------------------------------------------------------- planned and unplanned writes

// The table above has write hooks (an auth table's passwords), which no plan covers: every write there
// is unplanned. Here a table without any: the table routes' plain inserts and edits run from plans
// (lib/crud/write-plans.ts), the other paths do not (an expression, a conflict clause, action steps),
// and every one is held to the same rule. The planned ones must be seen using the plan cache, or the
// comparison would say nothing about plans.
const notesConfig: DatabaseSettings = {
  jwtSecret: 'parity-notes',
  appUrl: 'https://app.example.com',
  rateLimit: false,
  tables: [{
    name: 'notes',
    autoSetUid: true,
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
      { name: 'owner_id', type: 'text', sqlType: 'text' },
      { name: 'nick', type: 'text', sqlType: 'text' },
      { name: 'tier', type: 'text', sqlType: 'text', noUpdate: true },
      { name: 'badge', type: 'text', sqlType: 'text', noInsert: true }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'auth.uid != null & owner_id == auth.uid', updateRule: 'auth.uid == owner_id & new.nick != \'banned\'', deleteRule: 'auth.uid == owner_id' }]
  }],
  actions: [
    ...Object.entries({ plain: { nick: 'renamed' }, refusedByRule: { nick: 'banned' }, noUpdateField: { tier: 'gold' }, noInsertField: { badge: 'star' } }).map(([name, setValues]) =>
      ({ name: `note_${name}`, params: { id: 'string' as const }, steps: { type: 'UPDATE' as const, table: 'notes', where: 'id == params.id', setValues } })),
    { name: 'note_new', steps: { type: 'INSERT' as const, table: 'notes', values: { nick: 'n' }, expr: { owner_id: 'auth.uid' } } },
    { name: 'note_new_badge', steps: { type: 'INSERT' as const, table: 'notes', values: { nick: 'n', badge: 'star' }, expr: { owner_id: 'auth.uid' } } }
  ]
}

forEachDialect(t, 'planned and unplanned writes of a table without hooks enforce the same rules', async (t, dialect) => {
  const callers: Record<Caller, AuthContext> = {
    anonymous: ANONYMOUS,
    owner: { ...ANONYMOUS, uid: 'owner', cid: 'people' },
    other: { ...ANONYMOUS, uid: 'other', cid: 'people' },
    admin: adminContext('superadmin')
  }
  // An HTTP request names its caller in x-caller; an admin's carries the service token instead.
  const app = await buildApp(t, notesConfig, {
    dialect,
    setup: (app) => app.addHook('onRequest', async (request) => {
      const caller = request.headers['x-caller']
      if (caller === 'owner' || caller === 'other') request.fastbaseAuth = callers[caller]
    })
  })
  const db = app.fastbase.db
  const OWNED = { id: 'note1', owner_id: 'owner', nick: 'first', tier: 'basic', badge: null }
  const { id: _id, ...ownedRow } = OWNED
  const reset = async () => {
    await db('notes').del()
    await db('notes').insert(OWNED)
  }
  const http = async (caller: Caller, url: string, payload: object): Promise<number> => {
    const headers = caller === 'admin' ? { authorization: `Bearer ${adminToken}` } : caller === 'anonymous' ? {} : { 'x-caller': caller }
    const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers })
    if (res.statusCode >= 500) throw new Error(`${url}: ${res.body}`)
    return res.statusCode
  }
  const inProcess = async (call: () => Promise<unknown>): Promise<number> => {
    try {
      await call()
      return 200
    } catch (error) {
      if (error instanceof FastbaseError) return error.statusCode
      throw error
    }
  }
  const row = async (where: Row) => await db('notes').where(where).select('owner_id', 'nick', 'tier', 'badge').first() ?? null
  const updates: Record<string, Row> = { plain: { nick: 'renamed' }, refusedByRule: { nick: 'banned' }, noUpdateField: { tier: 'gold' }, noInsertField: { badge: 'star' } }
  // `planned`: the path must consult the plan cache.
  const updatePaths: Array<{ name: string, planned: boolean, refused: number, run: (c: Caller, name: string, v: Row) => Promise<number> }> = [
    { name: 'edit', planned: true, refused: 404, run: (c, _n, v) => http(c, `/table/notes/edit/${OWNED.id}`, v) },
    { name: 'in-process edit', planned: true, refused: 404, run: (c, _n, v) => inProcess(async () => await app.fastbase.tables.notes.edit({ id: OWNED.id, values: v }, { as: callers[c] })) },
    { name: 'update', planned: false, refused: 200, run: (c, _n, v) => http(c, '/table/notes/update', { where: `id == '${OWNED.id}'`, setValues: v }) },
    { name: 'update or=IGNORE', planned: false, refused: 200, run: (c, _n, v) => http(c, '/table/notes/update', { where: `id == '${OWNED.id}'`, setValues: v, or: 'IGNORE' }) },
    { name: 'action UPDATE step', planned: false, refused: 200, run: (c, n) => c === 'admin' ? http(c, `/action/note_${n}`, { id: OWNED.id }) : inProcess(async () => await app.fastbase.runAction(`note_${n}`, { id: OWNED.id }, { auth: callers[c] })) }
  ]
  for (const path of updatePaths) {
    for (const [name, values] of Object.entries(updates)) {
      for (const caller of CALLERS) {
        await reset()
        const consulted = planCacheCounts.hits + planCacheCounts.misses
        const status = await path.run(caller, name, values)
        const outcome = expected('update', caller, values)
        const written = outcome === 'written'
        t.same({ status, row: await row({ id: OWNED.id }) },
          { status: typeof outcome === 'object' ? outcome.status : written ? 200 : path.refused, row: written ? { ...ownedRow, ...values } : ownedRow },
          `${path.name} × ${name} × ${caller}`)
        if (path.planned && status === 200) t.ok(planCacheCounts.hits + planCacheCounts.misses > consulted, `${path.name} × ${name} × ${caller}: from a plan`)
      }
    }
  }
  const inserts: Record<string, Row> = { plain: { nick: 'n' }, noInsertField: { nick: 'n', badge: 'star' } }
  const insertPaths: Array<{ name: string, planned: boolean, run: (c: Caller, name: string, v: Row) => Promise<number> }> = [
    { name: 'insert', planned: true, run: (c, _n, v) => http(c, '/table/notes/insert', { values: { ...v, owner_id: callers[c].uid ?? 'nobody' } }) },
    { name: 'in-process insert', planned: true, run: (c, _n, v) => inProcess(async () => await app.fastbase.tables.notes.insert({ values: { ...v, owner_id: callers[c].uid ?? 'nobody' } }, { as: callers[c] })) },
    { name: 'insert or=IGNORE', planned: false, run: (c, _n, v) => http(c, '/table/notes/insert', { values: { ...v, owner_id: callers[c].uid ?? 'nobody' }, or: 'IGNORE' }) },
    { name: 'action INSERT step', planned: false, run: (c, n) => inProcess(async () => await app.fastbase.runAction(n === 'plain' ? 'note_new' : 'note_new_badge', {}, { auth: callers[c] })) }
  ]
  for (const path of insertPaths) {
    for (const [name, values] of Object.entries(inserts)) {
      for (const caller of CALLERS) {
        await reset()
        const consulted = planCacheCounts.hits + planCacheCounts.misses
        const status = await path.run(caller, name, values)
        // The createRule wants a signed-in owner of the row: an admin passes every rule, and the
        // action's owner is the caller's uid (none for an admin: `auth.uid` is its id, not null).
        const allowed = caller === 'admin' || caller === 'owner' || caller === 'other'
        const outcome = values.badge !== undefined ? 403 : allowed ? 200 : 403
        const created = await db('notes').whereNot({ id: OWNED.id }).select('nick', 'badge')
        t.same({ status, created }, { status: outcome, created: outcome === 200 ? [{ nick: 'n', badge: null }] : [] }, `${path.name} × ${name} × ${caller}`)
        if (path.planned && status === 200) t.ok(planCacheCounts.hits + planCacheCounts.misses > consulted, `${path.name} × ${name} × ${caller}: from a plan`)
      }
    }
  }
})
