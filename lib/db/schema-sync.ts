// Start-up schema sync: creates the config tables a database does not have yet, and records what
// it ran in `_fastbase_migrations` (DECISIONS 21, 28).
//
// Tables that already exist are left untouched: changing an existing table (added or dropped
// columns, new indexes...) is the migrations issue, which will diff the config against the
// recorded schema. Until then a changed table keeps its old shape.
import type { Knex } from 'knex'
import type { DatabaseSettings, TableData } from '../../schemas/config.js'
import { sortByDependencies, type SchemaDialect } from '../dialects/ddl.js'

export const MIGRATIONS_TABLE = '_fastbase_migrations'
export const INITIAL_MIGRATION = '00000_initial_schema'

/** `_fastbase_migrations` described as a config table, so each dialect's DDL creates it. */
const migrationsTable: TableData = {
  name: MIGRATIONS_TABLE,
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
    { name: 'name', type: 'text', sqlType: 'text', unique: true, notNull: true },
    { name: 'sql', type: 'text', sqlType: 'text', notNull: true },
    { name: 'applied_at', type: 'date', sqlType: 'timestamp', notNull: true, default: { q: 'CURRENT_TIMESTAMP' } }
  ]
}

export interface SyncLog {
  info(details: object, message: string): void
}

export interface SyncOptions {
  /** fastbase's own tables (sessions, ...) created along with the config's. */
  internalTables?: TableData[]
}

export interface SyncResult {
  /** Tables created by this sync, in creation order. */
  created: string[]
  /** Names of the migrations recorded by this sync. */
  migrations: string[]
}

interface Migration {
  name: string
  tables: TableData[]
}

const MIGRATION_NUMBER_DIGITS = 5

function migrationNumber (name: string): number {
  const n = Number.parseInt(name.slice(0, MIGRATION_NUMBER_DIGITS), 10)
  return Number.isNaN(n) ? -1 : n
}

/** On a fresh database everything is the initial schema; later each new table is its own migration. */
function plan (missing: TableData[], applied: string[]): Migration[] {
  const ordered = sortByDependencies(missing)
  if (applied.length === 0) return [{ name: INITIAL_MIGRATION, tables: ordered }]
  const next = Math.max(...applied.map(migrationNumber)) + 1
  return ordered.map((table, i) => ({
    name: `${String(next + i).padStart(MIGRATION_NUMBER_DIGITS, '0')}_create_table_${table.name}`,
    tables: [table]
  }))
}

async function run (trx: Knex.Transaction, statements: string[]): Promise<void> {
  for (const sql of statements) await trx.raw(sql)
}

async function missingTables (trx: Knex.Transaction, tables: TableData[]): Promise<TableData[]> {
  const missing: TableData[] = []
  for (const table of tables) {
    if (!(await trx.schema.hasTable(table.name))) missing.push(table)
  }
  return missing
}

/**
 * Creates every table of `config` (and `options.internalTables`) that does not exist, in
 * foreign-key order, in one transaction. Safe when several instances start at once on one
 * database: the dialect's schema lock makes them run one after the other, and the later ones
 * find the tables already there.
 */
export async function syncSchema (knex: Knex, dialect: SchemaDialect, config: DatabaseSettings, log: SyncLog, options: SyncOptions = {}): Promise<SyncResult> {
  const tables = [...(options.internalTables ?? []), ...config.tables]
  return knex.transaction(async (trx) => {
    await run(trx, dialect.schemaLock())
    if (!(await trx.schema.hasTable(MIGRATIONS_TABLE))) await run(trx, dialect.createTable(migrationsTable, []))
    const applied = (await trx(MIGRATIONS_TABLE).select('name')).map((r: { name: string }) => r.name)
    const missing = await missingTables(trx, tables)
    if (missing.length === 0 && applied.length > 0) return { created: [], migrations: [] }
    const migrations = plan(missing, applied)
    for (const migration of migrations) {
      const statements = migration.tables.flatMap((t) => dialect.createTable(t, tables))
      await run(trx, statements)
      await trx(MIGRATIONS_TABLE).insert({ name: migration.name, sql: statements.map((s) => `${s};\n`).join('') })
    }
    const result = { created: migrations.flatMap((m) => m.tables.map((t) => t.name)), migrations: migrations.map((m) => m.name) }
    log.info(result, 'database schema: created missing tables')
    return result
  })
}

/**
 * Creates one of fastbase's own tables when it is missing, outside the migration history like
 * `_fastbase_migrations` itself: for state a plugin keeps whatever the config holds (the rate-limit
 * counters). Under the schema lock, so instances starting together do not both create it.
 * Answers whether it created the table.
 */
export async function ensureInternalTable (knex: Knex, dialect: SchemaDialect, table: TableData): Promise<boolean> {
  return await knex.transaction(async (trx) => {
    await run(trx, dialect.schemaLock())
    if (await trx.schema.hasTable(table.name)) return false
    await run(trx, dialect.createTable(table, []))
    return true
  })
}
