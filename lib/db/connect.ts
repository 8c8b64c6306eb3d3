// Opens the one Knex instance of an app from a database URL: better-sqlite3 by default, pg for
// postgres:// URLs.
import { mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import knexFactory, { type Knex } from 'knex'
import { createRequire } from 'node:module'
import type Pg from 'pg'
import Database, { type Database as SqliteDatabase } from 'better-sqlite3'
import type { DialectName } from '../dialects/types.js'
import { memoize } from '../memo.js'
import { quoteIdent } from '../ddl.js'
import { schemaLockSql } from '../dialects/postgres-ddl.js'
import { MAX_PREPARED_TEXT } from './statement.js'

/** Runs one read-only statement synchronously, outside any transaction. */
export interface Reader {
  all: (sql: string, bindings: readonly unknown[]) => Array<Record<string, unknown>>
  close: () => void
}

/**
 * SQLite only: runs one statement on the writer connection right now when Knex is not using it (no
 * transaction open, nobody queued), else answers undefined and the caller goes through Knex. Safe
 * because better-sqlite3 runs the statement synchronously: nothing can start in between.
 */
export interface DirectWriter {
  run: (sql: string, bindings: readonly unknown[]) => Array<Record<string, unknown>> | undefined
}

export interface Connection {
  knex: Knex
  writer?: DirectWriter
  dialectName: DialectName
  /**
   * SQLite only: a second, read-only connection. Under WAL readers never wait for the writer, so reads
   * outside transactions skip Knex's pool queue (one connection) and run synchronously with cached
   * statements. Writes and transactions keep the one writer connection.
   */
  reader?: Reader
  /** PostgreSQL schema chosen with `?schema=`; create it with `ensureSchema` before use. */
  schema?: string
}

const PG_INT8 = 20
const PG_NUMERIC = 1700
const PG_INT8_ARRAY = 1016
const PG_NUMERIC_ARRAY = 1231
const PG_TEXT_ARRAY = 1009

const toNumber = (value: string): number => Number(value)
type Parser = (value: string) => unknown
// pg is loaded with the first PostgreSQL connection: SQLite deployments never load it.
let pgModule: typeof Pg | undefined
const loadPg = (): typeof Pg => (pgModule ??= createRequire(import.meta.url)('pg') as typeof Pg)
// pg's own parsers, looked up by plain oid (pg's typings only accept its enum of names).
const builtinParser = (oid: number, format?: string): Parser => (loadPg().types.getTypeParser as (oid: number, format?: string) => Parser)(oid, format)

/**
 * Type parsers of fastbase's pg connections (passed per connection, never set on the global
 * pg.types, so other pg users in the process are unaffected): counts, bigint and numeric columns
 * come back as JSON numbers (DECISIONS 31), timestamptz keeps pg's Date.
 */
export const pgTypes: Knex.PgCustomTypesConfig = {
  getTypeParser (oid: number, format: string): Parser {
    if (format !== 'binary') {
      if (oid === PG_INT8 || oid === PG_NUMERIC) return toNumber
      if (oid === PG_INT8_ARRAY || oid === PG_NUMERIC_ARRAY) {
        const parseTextArray = builtinParser(PG_TEXT_ARRAY) as (value: string) => Array<string | null>
        return (value) => parseTextArray(value).map((v) => (v === null ? null : Number(v)))
      }
    }
    return builtinParser(oid, format)
  }
}

export function isPostgresUrl (url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url)
}

/** The file of a `sqlite:<file>`, `sqlite::memory:`, `file:<file>` or plain-path URL. */
export function sqliteFilename (url: string): string {
  if (/^sqlite::memory:$|^:memory:$/i.test(url)) return ':memory:'
  if (/^file:\/\//i.test(url)) return fileURLToPath(url)
  const path = url.replace(/^(sqlite|file):(\/\/)?/i, '')
  return resolve(path)
}

function envInt (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
  return value
}

function connectSqlite (url: string): Connection {
  const filename = sqliteFilename(url)
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
  const busyTimeout = envInt('FASTBASE_SQLITE_BUSY_TIMEOUT', 5000)
  let writerDb: SqliteDatabase | undefined
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // One connection: SQLite has one writer, and Knex transactions must not wait on a second
    // connection that the first one's write lock blocks.
    pool: {
      min: 1,
      max: 1,
      afterCreate (db: SqliteDatabase, done: (err: Error | null, db: SqliteDatabase) => void) {
        try {
          db.pragma('journal_mode = WAL')
          db.pragma('synchronous = NORMAL')
          db.pragma(`busy_timeout = ${busyTimeout}`)
          db.pragma('foreign_keys = ON')
          cachePreparedStatements(db)
          writerDb = db
          done(null, db)
        } catch (err) {
          done(err as Error, db)
        }
      }
    }
  })
  const pool = knex.client.pool as { numUsed: () => number, numPendingAcquires: () => number } | undefined
  const writer: DirectWriter = {
    run (sql, bindings) {
      if (writerDb === undefined || writerDb.inTransaction || pool === undefined || pool.numUsed() > 0 || pool.numPendingAcquires() > 0) return undefined
      const statement = writerDb.prepare(sql)
      if (statement.reader) return statement.all(...bindings) as Array<Record<string, unknown>>
      statement.run(...bindings)
      return []
    }
  }
  return { knex, dialectName: 'sqlite', writer, reader: filename === ':memory:' ? undefined : sqliteReader(filename, busyTimeout) }
}

/** Opened on first use: the database file exists by then (the schema sync created it). */
function sqliteReader (filename: string, busyTimeout: number): Reader {
  let db: SqliteDatabase | undefined
  const open = (): SqliteDatabase => {
    if (db !== undefined) return db
    db = new Database(filename, { readonly: true, fileMustExist: true })
    db.pragma(`busy_timeout = ${busyTimeout}`)
    cachePreparedStatements(db)
    return db
  }
  return {
    all: (sql, bindings) => open().prepare(sql).all(...bindings) as Array<Record<string, unknown>>,
    close: () => { db?.close(); db = undefined }
  }
}

// Knex prepares every query anew; the same SQL text recurs constantly (one text per query shape),
// so statements are kept per connection. Safe: better-sqlite3 runs a statement to completion
// synchronously, and the one connection is never used by two queries at once.
const STATEMENT_CACHE_SIZE = 500

function cachePreparedStatements (db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db)
  const cached = memoize(STATEMENT_CACHE_SIZE, (sql) => prepare(sql))
  // Long texts (multi-row inserts, whose length callers choose) are prepared each time, not kept.
  db.prepare = ((sql: string) => (sql.length <= MAX_PREPARED_TEXT ? cached(sql) : prepare(sql))) as typeof db.prepare
}

function connectPostgres (url: string): Connection {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  parsed.searchParams.delete('schema')
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: parsed.toString(), types: pgTypes },
    searchPath: schema === undefined ? undefined : [schema],
    pool: { min: 0, max: envInt('FASTBASE_PG_POOL_MAX', 10) }
  })
  return { knex, dialectName: 'postgres', schema }
}

/** A Knex instance for `databaseUrl`; an empty URL means `<dataDir>/fastbase.sqlite`. */
export function connect (databaseUrl: string, dataDir: string): Connection {
  const url = databaseUrl === '' ? join(dataDir, 'fastbase.sqlite') : databaseUrl
  return isPostgresUrl(url) ? connectPostgres(url) : connectSqlite(url)
}

/**
 * Creates the `?schema=` schema if missing. The advisory lock makes concurrent starts safe
 * (two concurrent CREATE SCHEMA IF NOT EXISTS can otherwise fail on a catalog unique index).
 */
export async function ensureSchema (connection: Connection): Promise<void> {
  const { knex, schema } = connection
  if (schema === undefined) return
  await knex.transaction(async (trx) => {
    await trx.raw(schemaLockSql('?'), [schema])
    await trx.raw(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`)
  })
}
