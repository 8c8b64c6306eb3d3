// The before-hooks of the writes auth flows make to a user row themselves (decision D69): a password
// changed, reset or rehashed at login, an email verified, an account an external sign-in creates or
// takes over. Sign-up is the table's own insert and meets its hooks there (lib/crud/before-hooks.ts).
// Hooks run inside the flow's transaction, before its write, with `event.source` naming the flow:
// - they never see the password hash nor its salt (nor any plaintext), and may not write them;
// - the flow's identity columns (the uid, the email, the verified flag) are the flow's: a hook sees
//   the ones it writes and may change none (a server error naming it), since the flow vouches for them;
// - any other column a hook sets is written with the flow's values, checked per column (a 400 naming
//   it), as a hook's value on the table API is; a FastbaseError it throws refuses the flow, and the
//   transaction takes everything with it.
import type { Knex } from 'knex'
import type { AuthContext } from '../auth-context.js'
import type { AuthSource, BeforeInsertEvent, BeforeUpdateEvent } from '../crud/record-hooks.js'
import { shownToHooks, withKept } from '../crud/before-hooks.js'
import { errors, addFieldError, type FieldErrors } from '../errors.js'
import { ValueError } from '../values.js'
import { literalText } from '../expr/index.js'
import type { AuthTable, Row, SessionServices } from './types.js'

/** Which flow writes, and for whom (anonymous where nobody is signed in yet). */
export interface FlowWrite { source: AuthSource, caller: AuthContext }

/** The row an external sign-in creates, through the table's beforeInsert hooks, encoded for the insert. */
export async function hookedInsert (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: FlowWrite, values: Row): Promise<Row> {
  const hooks = services.hooks?.of(at.table.name, 'beforeInsert')
  if (hooks === undefined) return encoded(services, at, values)
  return await hooked(services, at, trx, flow, 'beforeInsert', values, async (base, shown) => {
    const event: BeforeInsertEvent<Row, unknown> = { ...base, values: shown }
    for (const hook of hooks) await hook(event)
    return event.values
  })
}

/** What a flow writes to user `uid`, through the table's beforeUpdate hooks, encoded for the update. */
export async function hookedUpdate (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: FlowWrite, uid: string, values: Row): Promise<Row> {
  const hooks = services.hooks?.of(at.table.name, 'beforeUpdate')
  if (hooks === undefined) return encoded(services, at, values)
  return await hooked(services, at, trx, flow, 'beforeUpdate', values, async (base, shown) => {
    const event: BeforeUpdateEvent<Row, unknown> = { ...base, values: shown, set: Object.freeze({}), where: uidWhere(at, uid) }
    for (const hook of hooks) await hook(event)
    return event.values
  })
}

type EventBase = Omit<BeforeInsertEvent<Row, unknown>, 'values'>

/** Runs the hooks (`run`) on the values they may see, then checks and encodes what they left. */
async function hooked (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: FlowWrite, name: 'beforeInsert' | 'beforeUpdate', values: Row, run: (base: EventBase, shown: Row) => Promise<Row>): Promise<Row> {
  const { shown, kept } = shownToHooks(at.table, values)
  const given = { ...shown }
  const base: EventBase = { table: at.table.name, caller: flow.caller, db: trx, tables: services.hooks!.tablesWithin(trx), source: flow.source }
  const result = withKept(at.table, name, await run(base, shown), kept)
  for (const column of flowOwned(at)) {
    const changed = Object.hasOwn(given, column) ? result[column] !== given[column] : Object.hasOwn(result, column)
    if (changed) throw new Error(`fastbase hooks: a ${name} hook on "${at.table.name}" set "${column}", which the ${flow.source} flow writes itself`)
  }
  return encoded(services, at, result)
}

/** The columns that say who the account is and what vouches for it: the flow's, never a hook's. */
function flowOwned (at: AuthTable): string[] {
  const { uid, email, verified } = at.fields
  return [uid, email, verified].flatMap((f) => f === undefined ? [] : [f.name])
}

/** The user's row as an expression (`event.where`), for a hook that reads it through `event.tables`. */
function uidWhere (at: AuthTable, uid: string): string {
  const field = at.fields.uid
  return `${field.name} == ${literalText(field.type === 'integer' || field.type === 'number' ? Number(uid) : uid)}`
}

/** Values encoded per column; a hook's unknown column, file or ill-typed value is a 400 naming it. */
function encoded (services: SessionServices, at: AuthTable, values: Row): Row {
  const fieldErrors: FieldErrors = {}
  const row: Row = {}
  for (const [name, value] of Object.entries(values)) {
    const field = at.table.fields.get(name)
    if (field === undefined) addFieldError(fieldErrors, name, 'Unknown field')
    // A file is uploaded with a request; a hook has none to give.
    else if (field.type === 'file') addFieldError(fieldErrors, name, 'A file cannot be set by a hook')
    else {
      try {
        row[name] = value === undefined || value === null ? null : services.dialect.encode(field, value)
      } catch (error) {
        if (!(error instanceof ValueError)) throw error
        addFieldError(fieldErrors, name, error.message)
      }
    }
  }
  if (Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
  return row
}
