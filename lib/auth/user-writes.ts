// The writes auth flows make to a user row themselves (decision D143): a password changed, reset or
// rehashed at login, an email verified, an account an external sign-in creates or takes over. They
// go through the table API's write path (lib/crud/write.ts), inside the flow's transaction, with the
// rules off and `source` naming the flow: the record hooks run there as for every write (decision
// D69; what they may see and set: lib/crud/before-hooks.ts#FlowWrite), and the change reaches realtime
// and the after-hooks after the commit, the row as written. Sign-up is the table's own insert.
import type { Knex } from 'knex'
import type { AuthContext } from '../auth-context.js'
import type { AuthSource } from '../crud/record-hooks.js'
import type { FlowWrite } from '../crud/before-hooks.js'
import { crudContext, withinTransaction, type CrudContext } from '../crud/context.js'
import { insert, update } from '../crud/write.js'
import { literalText } from '../expr/index.js'
import type { AuthTable, Row, SessionServices } from './types.js'

/** Which flow writes, and for whom (anonymous where nobody is signed in yet). */
export interface Flow { source: AuthSource, caller: AuthContext }

/** Creates the user row `values` (uid included); answers it as written. */
export async function insertUser (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: Flow, values: Row): Promise<Row> {
  await insert(flowContext(services, at, trx, flow), { values }, flowWrite(at))
  return await written(trx, at, String(values[at.fields.uid.name]))
}

/**
 * Writes `values` to user `uid`, and `defaults` (columns set back to their default, as SQL) under
 * them; answers the row as written. The user must be there: an update that reaches no row is a 403.
 */
export async function updateUser (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: Flow, uid: string, values: Row, defaults?: Record<string, string>): Promise<Row> {
  // `where` names the row as an expression: the hooks read it as `event.where`.
  await update(flowContext(services, at, trx, flow), { where: uidWhere(at, uid), setValues: values, mustChange: true }, undefined, { ...flowWrite(at), defaults })
  return await written(trx, at, uid)
}

/** The user's row as the write left it, every column (a session is opened from it), read in the flow's transaction. */
async function written (trx: Knex.Transaction, at: AuthTable, uid: string): Promise<Row> {
  return await trx(at.table.name).where(at.fields.uid.name, uid).first()
}

/** The flow's write in its transaction: the caller the hooks see, rules off, `source` naming the flow. */
function flowContext (services: SessionServices, at: AuthTable, trx: Knex.Transaction, flow: Flow): CrudContext {
  return { ...crudContext(withinTransaction(services.executor, trx), at.table, flow.caller, { applyRules: false }), source: flow.source }
}

/** The columns that say who the account is and what vouches for it: the flow's, never a hook's. */
function flowWrite (at: AuthTable): FlowWrite {
  const { uid, email, verified } = at.fields
  return { owned: [uid, email, verified].flatMap((f) => f === undefined ? [] : [f.name]) }
}

/** The user's row as an expression. */
function uidWhere (at: AuthTable, uid: string): string {
  const field = at.fields.uid
  return `${field.name} == ${literalText(field.type === 'integer' || field.type === 'number' ? Number(uid) : uid)}`
}
