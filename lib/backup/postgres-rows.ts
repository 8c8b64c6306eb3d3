// PostgreSQL's rows in an archive (decision D86): `database.jsonl`, for each table a header line
// `#{"table":…,"columns":[…]}` and then one line per row, the row as `to_jsonb` writes it. A restore
// reads it as data only: each row goes through `json_populate_recordset` into a table and columns
// fastbase made from the config, so nothing in the file is ever run as SQL.
import { createReadStream, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { Knex } from 'knex'
import { MIGRATIONS_TABLE } from '../db/migrations.js'
import { errors } from '../errors.js'
import { isObject } from '../plain.js'
import { columnsToLoad, tablesToLoad, type MadeTable } from './copy-plan.js'
import type { Manifest } from './manifest.js'

/** Rows fetched per round trip while writing. */
const FETCH_ROWS = 1000
/** Rows and bytes per INSERT while loading. */
const BATCH_ROWS = 10000
const BATCH_BYTES = 4 * 1024 * 1024
/** A longer line is refused: no row of a real table comes near it, and a line is held in memory whole. */
const MAX_LINE_BYTES = 256 * 1024 * 1024

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`

/** The rows of a raw query, typed by the query that selects them (pg answers raw() with its result object). */
export async function rowsOf<T> (db: Knex | Knex.Transaction, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<T[]> {
  return (await db.raw<{ rows: T[] }>(sql, bindings)).rows
}

/** The ordinary tables of `schema`, and their columns in order. */
async function tablesOf (db: Knex.Transaction, schema: string): Promise<Map<string, MadeTable>> {
  const rows = await rowsOf<{ table: string, column: string, generated: string }>(db,
    `SELECT c.table_name AS table, c.column_name AS column, c.is_generated AS generated FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = ? AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`, [schema])
  const tables = new Map<string, MadeTable>()
  for (const row of rows) {
    const table = tables.get(row.table) ?? { columns: [], generated: [] }
    table.columns.push(row.column)
    if (row.generated === 'ALWAYS') table.generated.push(row.column)
    tables.set(row.table, table)
  }
  return tables
}

/** Writes every table of `schema`, as the transaction `trx` sees them, to `file`; answers the rows per table. */
export async function writeRows (trx: Knex.Transaction, schema: string, file: string): Promise<Record<string, number>> {
  const out = createWriteStream(file)
  const write = async (text: string): Promise<void> => { if (!out.write(text)) await once(out, 'drain') }
  try {
    const counts: Record<string, number> = {}
    for (const [table, { columns }] of await tablesOf(trx, schema)) {
      await write(`#${JSON.stringify({ table, columns })}\n`)
      await trx.raw(`DECLARE fastbase_backup NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS line FROM ${ident(schema)}.${ident(table)} AS t`)
      let count = 0
      for (let rows = await rowsOf<{ line: string }>(trx, `FETCH ${FETCH_ROWS} FROM fastbase_backup`); rows.length > 0; rows = await rowsOf<{ line: string }>(trx, `FETCH ${FETCH_ROWS} FROM fastbase_backup`)) {
        await write(`${rows.map((r) => r.line).join('\n')}\n`)
        count += rows.length
      }
      await trx.raw('CLOSE fastbase_backup')
      counts[table] = count
    }
    await new Promise<void>((resolve, reject) => { out.end((err?: Error | null) => { if (err) reject(err); else resolve() }) })
    return counts
  } catch (err) {
    out.destroy()
    throw err
  }
}

/** The lines of `file` (each ends with a newline), none longer than `max` bytes. */
async function * linesOf (file: string, max: number): AsyncGenerator<string> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  const stream: AsyncIterable<Buffer> = createReadStream(file)
  for await (const chunk of stream) {
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      if (pendingBytes + end - start > max) throw errors.badArchive(`its database holds a line longer than ${max} bytes`)
      yield Buffer.concat([...pending, chunk.subarray(start, end)]).toString('utf8')
      pending = []
      pendingBytes = 0
      start = end + 1
    }
    pending.push(chunk.subarray(start))
    pendingBytes += chunk.length - start
    if (pendingBytes > max) throw errors.badArchive(`its database holds a line longer than ${max} bytes`)
  }
  if (pendingBytes > 0) throw errors.badArchive('its database ends in the middle of a line (cut short)')
}

function header (line: string): { table: string, columns: string[] } {
  let value: unknown
  try {
    value = JSON.parse(line.slice(1))
  } catch {
    value = undefined
  }
  if (!isObject(value) || typeof value.table !== 'string' || !Array.isArray(value.columns) || !value.columns.every((c) => typeof c === 'string')) {
    throw errors.badArchive('its database holds a table header that is not {"table", "columns"}')
  }
  return { table: value.table, columns: value.columns }
}

interface Section { table: string, insert: string | undefined, rows: string[], bytes: number }

/**
 * Loads the rows of `file` into the tables of `schema` (made from the config, empty but for
 * fastbase's first migration record) inside `trx`: foreign keys are dropped and added back once every
 * row is in (which checks them), the config's triggers are off meanwhile (they ran when the rows were
 * first written), identity columns continue after the highest id loaded. Answers the rows per table
 * of the file, loaded or not.
 */
export async function loadRows (trx: Knex.Transaction, schema: string, file: string, manifest: Manifest, declared: string[]): Promise<Record<string, number>> {
  const q = (table: string): string => `${ident(schema)}.${ident(table)}`
  const made = await tablesOf(trx, schema)
  const load = new Set(tablesToLoad(Object.keys(manifest.tables), declared, new Set(made.keys())))
  const keys = await rowsOf<{ table: string, name: string, definition: string }>(trx,
    `SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE k.contype = 'f' AND n.nspname = ?`, [schema])
  for (const key of keys) await trx.raw(`ALTER TABLE ${q(key.table)} DROP CONSTRAINT ${ident(key.name)}`)
  for (const table of made.keys()) await trx.raw(`ALTER TABLE ${q(table)} DISABLE TRIGGER USER`)

  const counts = new Map<string, number>()
  let section: Section | undefined
  const flush = async (): Promise<void> => {
    if (section?.insert === undefined || section.rows.length === 0) return
    const result = await trx.raw<{ rowCount: number }>(section.insert, [`[${section.rows.join(',')}]`])
    if (result.rowCount !== section.rows.length) throw errors.badArchive(`table ${section.table}: ${section.rows.length} lines held ${result.rowCount} rows`)
    section.rows = []
    section.bytes = 0
  }
  for await (const line of linesOf(file, MAX_LINE_BYTES)) {
    if (line.startsWith('#')) {
      await flush()
      const { table, columns } = header(line)
      if (!Object.hasOwn(manifest.tables, table) || counts.has(table)) throw errors.badArchive(`its database holds table ${table.slice(0, 100)} twice, or one its manifest does not list`)
      counts.set(table, 0)
      const madeTable = made.get(table)
      const names = load.has(table) && madeTable !== undefined ? columnsToLoad(table, columns, madeTable).map(ident).join(', ') : ''
      section = { table, insert: names === '' ? undefined : `INSERT INTO ${q(table)} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${q(table)}, CAST(? AS json))`, rows: [], bytes: 0 }
      // The new schema recorded its own first migration; the archive's record is the history of its rows.
      if (table === MIGRATIONS_TABLE && section.insert !== undefined) await trx.raw(`DELETE FROM ${q(table)}`)
      continue
    }
    if (section === undefined) throw errors.badArchive('its database holds rows before any table header')
    counts.set(section.table, (counts.get(section.table) ?? 0) + 1)
    if (section.insert === undefined) continue
    section.rows.push(line)
    section.bytes += line.length
    if (section.rows.length >= BATCH_ROWS || section.bytes >= BATCH_BYTES) await flush()
  }
  await flush()

  for (const key of keys) await trx.raw(`ALTER TABLE ${q(key.table)} ADD CONSTRAINT ${ident(key.name)} ${key.definition}`)
  for (const table of made.keys()) await trx.raw(`ALTER TABLE ${q(table)} ENABLE TRIGGER USER`)
  const identities = await rowsOf<{ table: string, column: string }>(trx, "SELECT table_name AS table, column_name AS column FROM information_schema.columns WHERE table_schema = ? AND is_identity = 'YES'", [schema])
  for (const { table, column } of identities) {
    await trx.raw(`SELECT setval(pg_get_serial_sequence(?, ?), COALESCE(MAX(${ident(column)}), 0) + 1, false) FROM ${q(table)}`, [q(table), column])
  }
  return Object.fromEntries(counts)
}
