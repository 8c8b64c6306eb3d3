// Where a write statement runs: directly on the idle SQLite writer, or through Knex. (Reads: statement.ts.)
import type { Knex } from 'knex'
import type { DirectWriter } from './connect.js'

/** A write statement: directly on the idle SQLite writer when possible (never inside a transaction), else Knex. */
export async function runWrite (writer: DirectWriter | undefined, db: Knex | Knex.Transaction, query: Knex.QueryBuilder | Knex.Raw): Promise<unknown> {
  if (writer !== undefined && db.isTransaction !== true) {
    const { sql, bindings } = query.toSQL().toNative()
    const rows = writer.run(sql, bindings)
    if (rows !== undefined) return rows
  }
  return await query
}
