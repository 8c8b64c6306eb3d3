// What `fastbase copy` moves, in which order (decision D101): every table of the config, a table
// before the tables whose foreign keys point at it, then fastbase's own tables whose rows are the
// project's state (accounts' sessions and refresh tokens, one-time tokens, provider links, used OAuth
// states). Not copied: the migrations record and the schema model, which the target's own migration
// run writes in its dialect's SQL, and state of one instance or one time window (instances, jobs,
// rate-limit counters, realtime interest), which a restarted fleet makes anew.
import type { DatabaseSettings, TableData, TableField } from '../../schemas/config.js'
import { authTablesFor } from '../internal/internal-tables.js'

export interface CopiedTable {
  data: TableData
  /** The primary key: rows are read and written in its order, and a rerun goes on after the last one. */
  key: TableField
}

/** The tables to copy, parents first; throws naming a table without a one-column primary key. */
export function tablesToCopy (config: Pick<DatabaseSettings, 'tables'>): CopiedTable[] {
  const ordered = parentsFirst(config.tables)
  return [...ordered, ...authTablesFor(config)].map((data) => ({ data, key: keyOf(data) }))
}

function keyOf (table: TableData): TableField {
  const keys = table.fields.filter((f) => f.primary === true)
  if (keys.length !== 1) throw new Error(`table ${table.name} has no one-column primary key: fastbase copy reads rows in key order`)
  return keys[0]
}

/**
 * Config order, except that a table comes after every other table its foreign keys name. Within a
 * cycle the config's order stands (the target then refuses a row whose parent is not there yet).
 */
export function parentsFirst (tables: TableData[]): TableData[] {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const placed = new Set<string>()
  const visiting = new Set<string>()
  const order: TableData[] = []
  const visit = (table: TableData): void => {
    if (placed.has(table.name) || visiting.has(table.name)) return
    visiting.add(table.name)
    for (const field of table.fields) {
      const parent = field.foreignKey === undefined ? undefined : byName.get(field.foreignKey.table)
      if (parent !== undefined && parent !== table) visit(parent)
    }
    visiting.delete(table.name)
    placed.add(table.name)
    order.push(table)
  }
  for (const table of tables) visit(table)
  return order
}

/** A key as read from a row: text or a whole number (what a rerun stores and compares with). */
export type KeyValue = string | number

export function keyValue (row: Record<string, unknown>, table: CopiedTable): KeyValue {
  const value = row[table.key.name]
  if (typeof value === 'string' || typeof value === 'number') return value
  throw new Error(`table ${table.data.name}: a row's key ${table.key.name} is ${value === null ? 'null' : typeof value}, not text or a number`)
}
