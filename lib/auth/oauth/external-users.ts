// Signing in with an identity another party vouches for (OAuth, one-tap, an external JWT): find the
// user the identity was linked to, else the user with that email when the provider has verified it,
// else create one; record the link; open an ordinary session (decisions D29, D34).
//
// An existing account whose address nobody had proven is taken over by the address's owner, not
// joined: whoever created it (possibly someone who typed the victim's address and never verified it)
// loses every session, the password and any other provider link before the owner gets in, and what
// they set on the account (role, meta, profile) goes back to what a new account gets.
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { errors } from '../../errors.js'
import { newUid } from '../../uid.js'
import { normalizeEmail } from '../email-address.js'
import { passwordColumns } from '../passwords/password-writes.js'
import { fieldsHave } from '../table-with.js'
import { nowSeconds } from '../stores/sessions.js'
import { IDENTITIES } from '../stores/store-tables.js'
import { openSession, type SignInResponse } from '../sessions/session-service.js'
import { publicRecord } from '../sessions/accounts.js'
import type { AuthTable, Row, SessionServices } from '../types.js'
import { insertUser, updateUser, type Flow } from '../user-writes.js'
import { ANONYMOUS } from '../../auth-context.js'
import type { AuthSource } from '../../crud/record-hooks.js'
import { constraintError, isUniqueViolation } from '../../crud/db-errors.js'
import { schemaDialect } from '../../dialects/index.js'
import type { TableField } from '../../../schemas/config.js'

export interface ExternalIdentity {
  /** 'google', 'github', a custom provider's name, or the issuer of an external JWT. */
  provider: string
  /** The provider's stable id of the account (`sub`, GitHub's numeric id as text). */
  subject: string
  email?: string
  /** As the provider states it: only a verified address may find an existing account. */
  emailVerified: boolean
  name?: string
  avatarUrl?: string
  /** Verified claims or userinfo, kept with the link. */
  raw: Row
}

// Claims are kept for reference; a provider that sends a huge profile does not fill the table.
const MAX_KEPT_DATA = 16 * 1024
const USERNAME_MAX = 32
const USERNAME_TRIES = 5

/** The sign-in that vouches for the identity (record hooks' `event.source`). */
export type ExternalSource = Extract<AuthSource, 'auth:oauth' | 'auth:one-tap' | 'auth:login-token' | 'auth:otp'>

/**
 * Finds or creates the user for `identity`, records the link and opens a session. The account it
 * creates or takes over is written through the table's write path (lib/auth/user-writes.ts), as anonymous.
 */
export async function signInExternal (services: SessionServices, at: AuthTable, identity: ExternalIdentity, source: ExternalSource): Promise<SignInResponse> {
  if (identity.provider === '' || identity.subject === '') throw errors.unauthorized('The identity has no subject')
  const flow: Flow = { source, caller: ANONYMOUS }
  const attempt = async (): Promise<SignInResponse> => await services.db.transaction(async (trx) => {
    const row = await linkedUser(trx, at, identity) ?? await userByEmail(services, trx, at, identity, flow) ?? await createUser(services, trx, at, identity, flow)
    await recordLink(trx, at, identity, String(row[at.fields.uid.name]))
    return await openSession(services, at, row, trx)
  })
  try {
    return await attempt()
  } catch (err) {
    // Two first sign-ins of one account at once: one created the user or the link, the other's
    // insert hit a unique key (the user's, answered by the write path, or the link's). Once more, it
    // finds what the first one made.
    if (!isUniqueViolation({ dialect: services.dialect, table: at.table }, err)) throw err
    try {
      return await attempt()
    } catch (again) {
      // Not a race: a value the new account would hold (one a before-hook set) is another account's.
      const violation = services.dialect.constraintViolation(again, at.table.data)
      if (violation?.kind === 'unique') throw constraintError('unique', violation.column ?? at.table.name)
      throw again
    }
  }
}

async function linkedUser (trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity): Promise<Row | undefined> {
  const link = await trx(IDENTITIES).where({ table_name: at.table.name, provider: identity.provider, subject: identity.subject }).first()
  if (link === undefined) return undefined
  const row: Row | undefined = await trx(at.table.name).where(at.fields.uid.name, link.user_id).first()
  // The user was deleted: the link goes with them, and the account is matched afresh below.
  if (row === undefined) await trx(IDENTITIES).where('id', link.id).delete()
  return row
}

/**
 * The account holding the identity's email. Only a provider-verified address may take over an
 * existing account; an unverified one that names an existing account is refused rather than given
 * a second account (the email column is unique) or, worse, someone else's.
 */
export async function userByEmail (services: SessionServices, trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity, flow: Flow): Promise<Row | undefined> {
  const email = emailOf(identity)
  if (email === undefined || at.fields.email === undefined) return undefined
  const row: Row | undefined = await trx(at.table.name).where(at.fields.email.name, email).first()
  if (row === undefined) return undefined
  if (!identity.emailVerified) throw errors.forbidden('An account with this email exists; the provider has not verified the address, so sign in with your password')
  const verified = at.fields.verified
  // A table without a verified column has proven no address: every account is treated as unproven.
  if (verified !== undefined && (row[verified.name] === true || row[verified.name] === 1)) return row
  return await takeOver(services, trx, at, identity, row, flow)
}

/**
 * The provider has just proven an address the account never had proven: whatever credentials the
 * account had were set by someone who may not own the address. Its sessions end (access tokens die
 * with them), its password becomes one nobody knows (a reset to the now-proven address sets a new
 * one), its other provider links go, and its email is verified from now on. What the creator could
 * set is set as for a new account (decision D90): name and username from the identity, every other
 * field they could write (and role and meta always) to its default, else null. Rows the account
 * owns stay.
 */
async function takeOver (services: SessionServices, trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity, row: Row, flow: Flow): Promise<Row> {
  const { fields } = at
  const uid = String(row[fields.uid.name])
  const values: Row = { ...await profileOf(trx, at, identity, uid) }
  if (fields.verified !== undefined) values[fields.verified.name] = true
  if (fieldsHave(fields, 'password')) Object.assign(values, await passwordColumns(fields, randomBytes(32).toString('base64url')))
  // One write: the reset under what the flow and its hooks give (a table that has neither writes nothing).
  const reset = resetColumns(services, at)
  const updated = Object.keys(values).length === 0 && Object.keys(reset).length === 0 ? row : await updateUser(services, at, trx, flow, uid, values, reset)
  await services.sessions.revokeUser(at.table.name, uid, undefined, trx)
  await trx(IDENTITIES).where({ table_name: at.table.name, user_id: uid })
    .whereNot((q) => q.where({ provider: identity.provider, subject: identity.subject })).delete()
  return updated
}

/**
 * What a takeover writes back to its default (SQL, as the table's DDL has it; `NULL` without one):
 * role and meta, and every field a caller could write at sign-up or later (one not both noInsert and
 * noUpdate), except what says who the account is (uid, email, verified, password, salt), its
 * timestamps, and name and username, which come from the identity. A notNull field without a
 * default keeps its value: there is none a new account would get (a before-hook may set one).
 */
function resetColumns (services: SessionServices, at: AuthTable): Record<string, string> {
  const { fields } = at
  const own = new Set([fields.uid, fields.email, fields.verified, fields.password, fields.salt, fields.name, fields.username].filter((f) => f !== undefined).map((f) => f.name))
  const always = new Set([...fields.audience, ...(fields.meta === undefined ? [] : [fields.meta])].map((f) => f.name))
  const ddl = schemaDialect(services.dialect.name)
  return Object.fromEntries(at.table.data.fields.flatMap((field: TableField): Array<[string, string]> => {
    if (own.has(field.name) || field.primary === true || field.autoIncrement === true) return []
    if (field.usage === 'record_created' || field.usage === 'record_updated') return []
    if (!always.has(field.name) && field.noInsert === true && field.noUpdate === true) return []
    const value = ddl.columnDefault(field)
    if (value !== undefined) return [[field.name, value]]
    return field.notNull === true ? [] : [[field.name, 'NULL']]
  }))
}

/** The name and username an account made from `identity` gets; `uid`: the account taken over, whose own username is free to it. */
async function profileOf (trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity, uid?: string): Promise<Row> {
  const { fields } = at
  const local = emailOf(identity)?.split('@')[0]
  const values: Row = {}
  if (fields.name !== undefined) values[fields.name.name] = (identity.name ?? local ?? 'User').slice(0, 255)
  if (fields.username !== undefined) values[fields.username.name] = await freeUsername(trx, at, fields.username, identity.name ?? local ?? 'user', uid)
  return values
}

function emailOf (identity: ExternalIdentity): string | undefined {
  return identity.email === undefined || identity.email === '' ? undefined : normalizeEmail(identity.email)
}

export async function createUser (services: SessionServices, trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity, flow: Flow): Promise<Row> {
  const { fields } = at
  const email = emailOf(identity)
  if (email === undefined && fields.email?.notNull === true) throw errors.badRequest('The provider did not share an email address, which this app needs to create an account')
  const uid = newUid()
  const values: Row = { [fields.uid.name]: uid, ...await profileOf(trx, at, identity) }
  if (fields.email !== undefined && email !== undefined) values[fields.email.name] = email
  if (fields.verified !== undefined) values[fields.verified.name] = email !== undefined && identity.emailVerified
  // No password anyone knows: the account signs in through its provider until a reset sets one.
  if (fieldsHave(fields, 'password')) Object.assign(values, await passwordColumns(fields, randomBytes(32).toString('base64url')))
  const created = await insertUser(services, at, trx, flow, values)
  services.executor.hooks?.signedUp(at.table.name, publicRecord(services.dialect, at, created), trx)
  return created
}

/** A username from the identity's name or email (letters, digits, `_`; starts with a letter), made unique (user `uid` aside). */
async function freeUsername (trx: Knex.Transaction, at: AuthTable, username: TableField, from: string, uid?: string): Promise<string> {
  const column = username.name
  const taken = async (candidate: string): Promise<boolean> => {
    const query = trx(at.table.name).where(column, candidate)
    return await (uid === undefined ? query : query.whereNot(at.fields.uid.name, uid)).first() !== undefined
  }
  const base = (`u${from}`.normalize('NFKD').replace(/[^A-Za-z0-9_]+/g, '_').replace(/^u(?=[A-Za-z])/, '')).slice(0, USERNAME_MAX - 7)
  for (let i = 0; i < USERNAME_TRIES; i++) {
    const candidate = i === 0 ? base : `${base}_${randomBytes(3).toString('hex')}`
    if (!await taken(candidate)) return candidate
  }
  return `${base}_${randomBytes(6).toString('hex')}`.slice(0, USERNAME_MAX)
}

async function recordLink (trx: Knex.Transaction, at: AuthTable, identity: ExternalIdentity, userId: string): Promise<void> {
  const now = nowSeconds()
  const updated = await trx(IDENTITIES).where({ table_name: at.table.name, provider: identity.provider, subject: identity.subject }).update({ last_used_at: now, email: identity.email ?? null })
  if (updated > 0) return
  const data = JSON.stringify(identity.raw)
  await trx(IDENTITIES).insert({
    id: newUid(),
    table_name: at.table.name,
    provider: identity.provider,
    subject: identity.subject,
    user_id: userId,
    email: identity.email ?? null,
    data: data.length <= MAX_KEPT_DATA ? data : null,
    created_at: now,
    last_used_at: now
  })
}
