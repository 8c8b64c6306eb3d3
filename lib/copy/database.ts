// `fastbase copy`'s rows (decision D101): the target gets the schema a start would make (fastbase's
// own migrations, run for the target's dialect), then each table's rows, in key order, in batches,
// each value decoded by the source's dialect and encoded by the target's (booleans, JSON, timestamps,
// integers); identity sequences move past the copied keys. Then every table is read back on both
// sides and compared (count and digest) before the copy counts as done.
import type { Knex } from 'knex'
import type { DatabaseSettings, TableField } from '../../schemas/config.js'
import { dialectFor, schemaDialect, type Connection, type Dialect } from '../dialects/index.js'
import { migrate, MIGRATIONS_TABLE, projectOf } from '../db/migrations.js'
import { internalTablesFor } from '../internal/internal-tables.js'
import { TableDigest } from './checksum.js'
import { copyUnderWay, dropCopyState, readCopyState, saveCopyState, startCopyState } from './state.js'
import { keyValue, type CopiedTable, type KeyValue } from './copied-tables.js'

/** Bound parameters per insert, under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMETERS = 30_000
const MAX_BATCH = 500

export interface Progress {
  /** `copied` of `total` rows of `table` are on the target (called per batch). */
  rows: (table: string, copied: number, total: number) => void
}

export interface TableReport { name: string, rows: number, digest: string, resumedAt?: number }

export interface CopyOptions { batch?: number, progress?: Progress }

/** Rows per insert for a table of `columns` columns. */
export function batchSize (columns: number, wanted = MAX_BATCH): number {
  return Math.max(1, Math.min(wanted, Math.floor(MAX_PARAMETERS / Math.max(1, columns))))
}

export class TargetNotEmpty extends Error {
  override readonly name = 'TargetNotEmpty'
}

/**
 * Copies every table of `tables` from `source` into `target`, which must be empty or hold a copy
 * that stopped before it finished (then it goes on). Throws when a table's rows differ afterwards.
 */
export async function copyDatabase (source: Connection, target: Connection, config: DatabaseSettings, tables: CopiedTable[], options: CopyOptions = {}): Promise<TableReport[]> {
  const resuming = await copyUnderWay(target.knex)
  if (!resuming) {
    const found = await firstTableOf(target.knex, [MIGRATIONS_TABLE, ...tables.map((t) => t.data.name)])
    if (found !== undefined) throw new TargetNotEmpty(`the target database is not empty (it has the table ${found}): fastbase copy writes only into an empty database; create a new one (or drop its tables) and run it again`)
    await startCopyState(target.knex, tables.map((t) => t.data.name))
  }
  const log = { info: () => {}, warn: () => {} }
  await migrate({ knex: target.knex, ddl: schemaDialect(target.dialectName), dialect: target.dialectName, log },
    [...internalTablesFor(config, target.dialectName), ...config.tables], { mode: 'setup', project: projectOf(config) })
  const from = dialectFor(source.dialectName)
  const to = dialectFor(target.dialectName)
  const resumedAt = new Map<string, number>()
  for (const table of tables) {
    const state = await readCopyState(target.knex, table.data.name)
    if (state.done) continue
    if (state.rows > 0) resumedAt.set(table.data.name, state.rows)
    await copyTable(source.knex, target.knex, from, to, table, state.lastKey, state.rows, options)
  }
  const reports: TableReport[] = []
  const differ: string[] = []
  for (const table of tables) {
    const [a, b] = [await digestOf(source.knex, from, table), await digestOf(target.knex, to, table)]
    if (a.rows !== b.rows || a.hex !== b.hex) differ.push(`${table.data.name} (${a.rows} rows, ${b.rows} on the target${a.rows === b.rows ? ', contents differ' : ''})`)
    reports.push({ name: table.data.name, rows: b.rows, digest: b.hex, resumedAt: resumedAt.get(table.data.name) })
  }
  if (differ.length > 0) throw new Error(`the copy does not match the source in ${differ.join(', ')}: were rows written to the source during the copy? Drop the target's tables and copy again with the server stopped`)
  await dropCopyState(target.knex)
  return reports
}

async function firstTableOf (knex: Knex, names: string[]): Promise<string | undefined> {
  for (const name of names) if (await knex.schema.hasTable(name)) return name
  return undefined
}

/** Rows of `table` after the key `after` in key order, `limit` at most, with `columns` (default: the config's). */
export async function page (knex: Knex, table: CopiedTable, after: KeyValue | undefined, limit: number, columns = table.data.fields.map((f) => f.name)): Promise<Array<Record<string, unknown>>> {
  const query = knex(table.data.name).select(columns).orderBy(table.key.name).limit(limit)
  return await (after === undefined ? query : query.where(table.key.name, '>', after))
}

async function copyTable (source: Knex, target: Knex, from: Dialect, to: Dialect, table: CopiedTable, lastKey: KeyValue | undefined, copied: number, options: CopyOptions): Promise<void> {
  const { name, fields } = table.data
  const size = batchSize(fields.length, options.batch)
  const total = Number((await source(name).count({ n: '*' }))[0].n)
  options.progress?.rows(name, copied, total)
  for (;;) {
    const rows = await page(source, table, lastKey, size)
    if (rows.length === 0) break
    const values = rows.map((row) => Object.fromEntries(fields.map((f) => [f.name, to.encode(f, from.decode(f, row[f.name]))])))
    lastKey = keyValue(rows[rows.length - 1], table)
    copied += rows.length
    await target.transaction(async (trx) => {
      await trx(name).insert(values)
      await saveCopyState(trx, name, { lastKey, rows: copied, done: false })
    })
    options.progress?.rows(name, copied, total)
  }
  for (const field of fields.filter((f: TableField) => f.autoIncrement === true)) {
    const sql = to.resyncIdentity(to.quote(name), field.name)
    if (sql !== undefined) await target.raw(sql)
  }
  await saveCopyState(target, name, { lastKey, rows: copied, done: true })
}

/** Count and digest of a table's rows as its dialect decodes them, read in key order by pages. */
async function digestOf (knex: Knex, dialect: Dialect, table: CopiedTable): Promise<TableDigest> {
  const digest = new TableDigest()
  const size = batchSize(table.data.fields.length)
  let after: KeyValue | undefined
  for (;;) {
    const rows = await page(knex, table, after, size)
    for (const row of rows) digest.add(table.data.fields.map((f) => dialect.decode(f, row[f.name])))
    if (rows.length < size) return digest
    after = keyValue(rows[rows.length - 1], table)
  }
}
