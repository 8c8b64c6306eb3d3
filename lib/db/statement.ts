// A statement compiled once and run many times: its SQL text (Knex's `?` form, and the driver's
// native form) and, per run, its bindings. The one place that decides whether a statement takes
// the connection's direct runner or goes through Knex; the runners themselves are per dialect.
import type { Knex } from 'knex'
import type { DirectRunner, Row, SpanOf, Statement } from '../dialects/connection.js'
import type { Binding } from '../dialects/types.js'

export type { Statement } from '../dialects/connection.js'

/** From a built Knex query: its text in both forms and its bindings in order. */
export function compileStatement (query: Knex.QueryBuilder | Knex.Raw): { statement: Statement, bindings: readonly Binding[] } {
  const compiled = query.toSQL()
  const native = compiled.toNative()
  return { statement: { sql: compiled.sql, native: native.sql }, bindings: native.bindings }
}

/**
 * Rows of a read: on the direct runner outside transactions when it takes it, else through Knex.
 * SQLite's direct runner answers at once, and so does this (decision D109).
 */
export function runStatement (db: Knex | Knex.Transaction, direct: DirectRunner | undefined, statement: Statement, bindings: readonly Binding[]): Row[] | Promise<Row[]> {
  const rows = db.isTransaction === true ? undefined : direct?.read(statement, bindings)
  return rows ?? knexRows(db.raw(statement.sql, bindings))
}

async function knexRows (query: Knex.Raw): Promise<Row[]> {
  return rowsOf(await query)
}

/**
 * A write statement given as `?` SQL text, the same way. Rows of its RETURNING clause, at once from
 * SQLite's direct runner (a planned write then answers with no promise, as a read does: D109).
 * `span`: set to the write's place among data versions where the runner can (DirectRunner#write).
 */
export function runWriteStatement (db: Knex | Knex.Transaction, direct: DirectRunner | undefined, sql: string, bindings: readonly Binding[], span?: SpanOf): Row[] | Promise<Row[]> {
  const rows = db.isTransaction === true ? undefined : direct?.write(sql, bindings, span)
  return rows ?? knexRows(db.raw(sql, bindings))
}

/** A write built with Knex (conflict handling): compiled and run the same way. */
export async function runWriteQuery (db: Knex | Knex.Transaction, direct: DirectRunner | undefined, query: Knex.QueryBuilder | Knex.Raw): Promise<Row[]> {
  if (db.isTransaction === true || direct === undefined) return rowsOf(await query)
  const { sql, bindings } = query.toSQL()
  return await runWriteStatement(db, direct, sql, bindings)
}

/** better-sqlite3 answers rows (or run info for a statement without RETURNING), pg a result object. */
function rowsOf (result: unknown): Row[] {
  return Array.isArray(result) ? result : (result as { rows?: Row[] }).rows ?? []
}
