// Where a statement runs: the SQLite fast paths (reader connection, idle writer) or Knex.
import type { Knex } from 'knex'
import type { DirectWriter, Reader } from './connect.js'

/** Rows of a read: through the direct reader when there is one (never inside a transaction), else Knex. */
export async function runRead (reader: Reader | undefined, db: Knex | Knex.Transaction, query: Knex.QueryBuilder): Promise<Array<Record<string, unknown>>> {
  if (reader === undefined || db.isTransaction === true) return await query
  const { sql, bindings } = query.toSQL().toNative()
  return reader.all(sql, bindings)
}

/** A write statement: directly on the idle SQLite writer when possible (never inside a transaction), else Knex. */
export async function runWrite (writer: DirectWriter | undefined, db: Knex | Knex.Transaction, query: Knex.QueryBuilder | Knex.Raw): Promise<unknown> {
  if (writer !== undefined && db.isTransaction !== true) {
    const { sql, bindings } = query.toSQL().toNative()
    const rows = writer.run(sql, bindings)
    if (rows !== undefined) return rows
  }
  return await query
}
