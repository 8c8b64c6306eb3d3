// A user token -> the auth context rules see. One query checks the session (not revoked, not expired)
// and loads the user's visible fields for `auth.<field>`, so a logout or password change takes effect
// on every instance at once, and a deleted user's token stops working.
import { isDeepStrictEqual } from 'node:util'
import type { Knex } from 'knex'
import type { Binding } from '../../dialects/types.js'
import type { AuthContext } from '../../auth-context.js'
import type { AuthTable } from '../types.js'
import { ANONYMOUS } from '../../auth-context.js'
import { SESSIONS } from '../stores/store-tables.js'
import { nowSeconds } from '../stores/sessions.js'
import { compileStatement, runStatement, type Statement } from '../../db/statement.js'
import type { Executor } from '../../crud/context.js'

type Row = Record<string, unknown>

/** `auth.role`: the audience fields' non-empty values; one value is a string, a list stays a list, as teenybase's `aud` claim reads. */
export function roleOf (at: AuthTable, record: Row): string | string[] | null {
  const values = at.fields.audience.map((f) => record[f.name]).filter((v): v is string => typeof v === 'string' && v !== '')
  return values.length === 0 ? null : values.length === 1 ? values[0] : values
}

/** The context of a user whose record is known (after login, or loaded per request). */
export function contextFor (at: AuthTable, record: Row, sid: string | null, jwt: Row, aal: number): AuthContext {
  const { fields } = at
  const verified = fields.verified === undefined ? false : record[fields.verified.name] === true
  const meta = fields.meta === undefined ? {} : record[fields.meta.name]
  return {
    ...ANONYMOUS,
    uid: String(record[fields.uid.name]),
    sid,
    cid: at.table.name,
    email: verified && fields.email !== undefined ? record[fields.email.name] as string : null,
    verified,
    role: roleOf(at, record) as string | null,
    jwt,
    meta: meta !== null && typeof meta === 'object' ? meta as Record<string, unknown> : {},
    record,
    aal
  }
}

// Stand-ins for the per-request values while the statement text is built once.
const SID = '\u0000session-id'
const NOW = '\u0000now'

interface SessionCheck { statement: Statement, bindings: readonly Binding[] }
const checks = new WeakMap<AuthTable, SessionCheck>()

/** The session check of an auth table, its text built once (every user token request runs it). */
function sessionCheck (db: Knex, at: AuthTable): SessionCheck {
  let check = checks.get(at)
  if (check === undefined) {
    check = compileStatement(db.from({ s: SESSIONS })
      .join({ u: at.table.name }, `u.${at.fields.uid.name}`, 's.user_id')
      .where('s.id', SID)
      .andWhere('s.table_name', at.table.name)
      .whereNull('s.revoked_at')
      .andWhere('s.expires_at', '>', NOW)
      .select({ ...Object.fromEntries(at.table.visibleFields(false).map((f) => [`f_${f.name}`, `u.${f.name}`])), s_aal: 's.aal' })
      .limit(1, { skipBinding: true }))
    checks.set(at, check)
  }
  return check
}

/** The context last made from a token's verified claims, and the user row it was made from. */
interface Remembered { columns: unknown[], context: AuthContext }
const remembered = new WeakMap<Row, Remembered>()

/**
 * The context of a user token, its session checked now. The claims object is the one the token's
 * verification answered (kept per token until it expires), so a token whose user row reads the same
 * as last time gets the same context object back: nothing is decoded or built again, and what is
 * derived from a context (the globals rules read) is kept with it.
 */
export async function userContext ({ db, direct, dialect }: Executor, at: AuthTable, payload: Row): Promise<AuthContext | undefined> {
  const { sid, id } = payload
  if (typeof sid !== 'string' || typeof id !== 'string') return undefined
  const visible = at.table.visibleFields(false)
  const check = sessionCheck(db, at)
  const now = nowSeconds()
  const [row]: Array<Row | undefined> = await runStatement(db, direct, check.statement, check.bindings.map((b) => (b === SID ? sid : b === NOW ? now : b)))
  if (row === undefined) return undefined
  // The session's level last: a session raised to 2 (a second factor turned on) is a new context.
  const columns = [...visible.map((f) => row[`f_${f.name}`]), row.s_aal]
  const last = remembered.get(payload)
  if (last !== undefined && sameColumns(last.columns, columns)) return last.context
  const record = Object.fromEntries(visible.map((f, i) => [f.name, dialect.decode(f, columns[i])]))
  if (String(record[at.fields.uid.name]) !== id) return undefined
  const context = contextFor(at, record, sid, payload, Number(row.s_aal))
  remembered.set(payload, { columns, context })
  return context
}

/** The same values as read before (PostgreSQL reads a json column as a new object each time). */
function sameColumns (a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i] || isDeepStrictEqual(value, b[i]))
}

/**
 * The caller a user of `at` is, for server code acting on their behalf (`app.fastbase.callerFor`):
 * the context a token of theirs gives, without a session. Undefined when no such user exists. Its
 * level is 1: server code has proven no second factor for the user (decision D116).
 */
export async function callerForUser ({ db, dialect }: Executor, at: AuthTable, uid: string | number): Promise<AuthContext | undefined> {
  const visible = at.table.visibleFields(false)
  const row: Row | undefined = await db(at.table.name).select(visible.map((f) => f.name)).where(at.fields.uid.name, uid).first()
  if (row === undefined) return undefined
  const record = Object.fromEntries(visible.map((f) => [f.name, dialect.decode(f, row[f.name])]))
  return contextFor(at, record, null, {}, 1)
}
