// User records of an auth table as the auth endpoints need them. These reads bypass rules on purpose:
// they identify the caller, and what they return is the caller's own record.
import type { Knex } from 'knex'
import type { Dialect } from '../../dialects/types.js'
import type { AuthTable } from '../types.js'
import { normalizeEmail, teenybaseEmail } from '../email-address.js'
import { roleOf } from './user-context.js'

type Row = Record<string, unknown>

/**
 * The user an identity (email or username) names, with every column (password hash included).
 * An address is matched as typed first, then as its username; only when neither matches, an account
 * teenybase stored under its normalised form of the address (`a.b+x@gmail.com` -> `ab@gmail.com`),
 * so migrated users keep logging in (decision D36). That row's stored email is the normalised form
 * itself, a mailbox the typed address delivers to, so it never names someone else's account.
 * One query for all three, so a missing account costs the same as a present one.
 */
export async function findByIdentity (db: Knex, at: AuthTable, identity: string): Promise<Row | undefined> {
  const { email, username } = at.fields
  if (email === undefined && username === undefined) return undefined
  const typed = normalizeEmail(identity)
  const legacy = email === undefined ? undefined : teenybaseEmail(identity)
  const rows: Row[] = await db(at.table.name).where((q) => {
    if (email !== undefined) q.orWhere(email.name, typed)
    if (username !== undefined) q.orWhere(username.name, identity)
    if (email !== undefined && legacy !== undefined && legacy !== typed) q.orWhere(email.name, legacy)
  }).limit(3)
  return rows.find((row) => email !== undefined && row[email.name] === typed) ??
    rows.find((row) => username !== undefined && row[username.name] === identity) ??
    rows.find((row) => email !== undefined && row[email.name] === legacy)
}

export async function findById (db: Knex, at: AuthTable, uid: string): Promise<Row | undefined> {
  return await db(at.table.name).where(at.fields.uid.name, uid).first()
}

/** The record auth endpoints return: visible fields only, typed (decision D14). */
export function publicRecord (dialect: Dialect, at: AuthTable, row: Row): Row {
  return Object.fromEntries(at.table.visibleFields(false).map((f) => [f.name, dialect.decode(f, row[f.name])]))
}

export function isVerified (at: AuthTable, record: Row): boolean {
  return at.fields.verified !== undefined && record[at.fields.verified.name] === true
}

/** Access-token claims (teenybase's: cid, user, sub, id, meta, sid, aud, verified). */
export function claimsFor (at: AuthTable, record: Row, sid: string, issuer: string): Row {
  const { fields } = at
  const role = roleOf(at, record)
  const claims: Row = { cid: at.table.name, id: String(record[fields.uid.name]), sid }
  if (fields.username !== undefined) claims.user = record[fields.username.name]
  if (fields.email !== undefined) claims.sub = record[fields.email.name]
  if (fields.meta !== undefined) claims.meta = record[fields.meta.name] ?? null
  if (role !== null) claims.aud = Array.isArray(role) ? role : [role]
  if (fields.verified !== undefined) claims.verified = isVerified(at, record)
  claims.iss = issuer
  return claims
}
