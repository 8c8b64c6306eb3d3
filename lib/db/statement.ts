// A statement compiled once and run many times: its SQL text (Knex's `?` form, and the driver's
// native form) and, per run, its bindings. The one place that knows where a prepared read runs.
import { createHash } from 'node:crypto'
import type { Knex } from 'knex'
import type { DirectWriter, Reader } from './connect.js'
import { memoize } from '../memo.js'

export interface Statement {
  /** `?` placeholders, for Knex (inside transactions). */
  sql: string
  /** The driver's own placeholders (`?` for SQLite, `$1` for PostgreSQL). */
  native: string
  /**
   * PostgreSQL plans it anew for each run's values (an unnamed statement): for counts over many
   * rows a plan made for the actual values beats the generic one by far more than planning costs.
   */
  planEachRun?: boolean
}

type Row = Record<string, unknown>

/** From a built Knex query: its text in both forms and its bindings in order. */
export function compileStatement (query: Knex.QueryBuilder | Knex.Raw): { statement: Statement, bindings: readonly unknown[] } {
  const compiled = query.toSQL()
  const native = compiled.toNative()
  return { statement: { sql: compiled.sql, native: native.sql }, bindings: native.bindings }
}

interface PgConnection {
  query: ((config: { name?: string, text: string, values: readonly unknown[] }) => Promise<{ rows: Row[] }>) & ((text: string) => Promise<unknown>)
  /** pg's record of the statements prepared on this connection (name -> text). */
  connection: { parsedStatements: Record<string, string> }
}

// Prepared statements live as long as their connection: past this many on one connection (callers
// can send endless distinct shapes), they are all dropped and prepared again as they recur. Long
// texts (multi-row inserts) are not worth keeping: they run unnamed.
const PREPARED_PER_CONNECTION = 256
export const MAX_PREPARED_TEXT = 4096
const preparedCounts = new WeakMap<object, number>()

// A name per statement text: PostgreSQL parses and plans a named statement once per connection.
const statementName = memoize(2000, (text: string) => `fb_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`)

/**
 * Rows of a read. SQLite outside a transaction: the read-only connection, synchronously, with the
 * statement prepared once per text. PostgreSQL outside a transaction: a pool connection and a named
 * prepared statement. Inside a transaction: through Knex, on the transaction.
 */
export async function runStatement (db: Knex | Knex.Transaction, reader: Reader | undefined, statement: Statement, bindings: readonly unknown[]): Promise<Row[]> {
  if (db.isTransaction !== true) {
    if (reader !== undefined) return reader.all(statement.native, bindings)
    if (db.client.config.client === 'pg' && statement.native.length <= MAX_PREPARED_TEXT) return await runPooled(db as Knex, statement.native, bindings, statement.planEachRun === true)
  }
  return rowsOf(await db.raw(statement.sql, bindings as Knex.RawBinding[]))
}

/** `?` placeholders -> `$1, $2, ...` (fastbase's SQL has no other question marks). */
const numbered = memoize(2000, (sql: string) => { let n = 0; return sql.replace(/\?/g, () => `$${++n}`) })

/**
 * A write statement given as `?` SQL text: on SQLite's idle writer when possible, as a named
 * statement on PostgreSQL outside a transaction, else through Knex. Rows of its RETURNING clause.
 */
export async function runWriteStatement (db: Knex | Knex.Transaction, writer: DirectWriter | undefined, sql: string, bindings: readonly unknown[]): Promise<Row[]> {
  if (db.isTransaction !== true) {
    const rows = writer?.run(sql, bindings)
    if (rows !== undefined) return rows
    if (db.client.config.client === 'pg' && sql.length <= MAX_PREPARED_TEXT) return await runPooled(db as Knex, numbered(sql), bindings)
  }
  return rowsOf(await db.raw(sql, bindings as Knex.RawBinding[]))
}

/** better-sqlite3 answers rows (or run info for a statement without RETURNING), pg a result object. */
function rowsOf (result: unknown): Row[] {
  return Array.isArray(result) ? result as Row[] : (result as { rows?: Row[] }).rows ?? []
}

/** On a pool connection: as a named prepared statement, or (`unnamed`) planned for these values. */
async function runPooled (knex: Knex, text: string, values: readonly unknown[], unnamed = false): Promise<Row[]> {
  const client = knex.client as { acquireConnection: () => Promise<PgConnection>, releaseConnection: (c: PgConnection) => void }
  const connection = await client.acquireConnection()
  try {
    if (unnamed) return (await connection.query({ text, values })).rows
    const name = statementName(text)
    const prepared = connection.connection.parsedStatements
    if (!Object.hasOwn(prepared, name)) {
      const count = (preparedCounts.get(prepared) ?? 0) + 1
      if (count > PREPARED_PER_CONNECTION) {
        await connection.query('DEALLOCATE ALL')
        connection.connection.parsedStatements = {}
      } else {
        preparedCounts.set(prepared, count)
      }
    }
    return (await connection.query({ name, text, values })).rows
  } finally {
    client.releaseConnection(connection)
  }
}
