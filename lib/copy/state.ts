// Where a copy is, kept on the target (decision D101): one row per table with the last key copied and
// the rows so far, written in the same transaction as each batch, so a copy stopped anywhere goes on
// from exactly there when run again. The table exists only while a copy is under way: its presence
// is what tells a rerun from a copy into a database that is not empty.
import type { Knex } from 'knex'
import type { KeyValue } from './copied-tables.js'

export const COPY_STATE_TABLE = '_fastbase_copy'

export interface TableState { lastKey: KeyValue | undefined, rows: number, done: boolean }

/** True when a copy into this database was started and has not finished. */
export async function copyUnderWay (knex: Knex): Promise<boolean> {
  return await knex.schema.hasTable(COPY_STATE_TABLE)
}

/** Creates the state, every table not yet copied, in one transaction. */
export async function startCopyState (knex: Knex, tables: string[]): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.schema.createTable(COPY_STATE_TABLE, (t) => {
      t.text('table_name').primary()
      t.text('last_key')
      t.integer('rows').notNullable()
      t.integer('done').notNullable()
    })
    if (tables.length > 0) await trx(COPY_STATE_TABLE).insert(tables.map((name) => ({ table_name: name, last_key: null, rows: 0, done: 0 })))
  })
}

export async function readCopyState (knex: Knex, table: string): Promise<TableState> {
  const row: { last_key: string | null, rows: number | string, done: number | string } | undefined = await knex(COPY_STATE_TABLE).where({ table_name: table }).first()
  if (row === undefined) return { lastKey: undefined, rows: 0, done: false }
  return { lastKey: row.last_key === null ? undefined : storedKey(row.last_key), rows: Number(row.rows), done: Number(row.done) === 1 }
}

function storedKey (text: string): KeyValue {
  const value: unknown = JSON.parse(text)
  if (typeof value === 'string' || typeof value === 'number') return value
  throw new Error(`${COPY_STATE_TABLE}: a last key that is not text or a number: ${text.slice(0, 100)}`)
}

/** Records a batch (inside its transaction) or the end of a table. */
export async function saveCopyState (trx: Knex | Knex.Transaction, table: string, state: TableState): Promise<void> {
  const values = { last_key: state.lastKey === undefined ? null : JSON.stringify(state.lastKey), rows: state.rows, done: state.done ? 1 : 0 }
  const updated = await trx(COPY_STATE_TABLE).where({ table_name: table }).update(values)
  if (updated === 0) await trx(COPY_STATE_TABLE).insert({ table_name: table, ...values })
}

export async function dropCopyState (knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists(COPY_STATE_TABLE)
}
