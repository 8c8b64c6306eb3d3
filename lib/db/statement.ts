// A statement compiled once and run many times: its SQL text (Knex's `?` form, and the driver's
// native form) and, per run, its bindings. The one place that knows where a prepared read runs.
import type { Knex } from 'knex'
import type { Reader } from './connect.js'

export interface Statement {
  /** `?` placeholders, for Knex (inside transactions). */
  sql: string
  /** The driver's own placeholders (`?` for SQLite, `$1` for PostgreSQL). */
  native: string
}

type Row = Record<string, unknown>

/** From a built Knex query: its text in both forms and its bindings in order. */
export function compileStatement (query: Knex.QueryBuilder | Knex.Raw): { statement: Statement, bindings: readonly unknown[] } {
  const compiled = query.toSQL()
  const native = compiled.toNative()
  return { statement: { sql: compiled.sql, native: native.sql }, bindings: native.bindings }
}

/**
 * Rows of a read. SQLite outside a transaction: the read-only connection, synchronously, with the
 * statement prepared once per text. Elsewhere: through Knex, on the transaction when there is one.
 */
export async function runStatement (db: Knex | Knex.Transaction, reader: Reader | undefined, statement: Statement, bindings: readonly unknown[]): Promise<Row[]> {
  if (reader !== undefined && db.isTransaction !== true) return reader.all(statement.native, bindings)
  const result: unknown = await db.raw(statement.sql, bindings as Knex.RawBinding[])
  // better-sqlite3 answers rows, pg a result object.
  return Array.isArray(result) ? result as Row[] : (result as { rows: Row[] }).rows
}
