// SQLite through better-sqlite3: one writer connection behind Knex (SQLite has one writer), which
// also serves reads outside transactions while Knex is not using it, a read-only second connection
// for those reads while it is, reader threads for the reads that may take long, and statements
// prepared once per text.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import knexFactory from 'knex'
import Database, { type Database as SqliteDatabase } from 'better-sqlite3'
import { memoize } from '../memo.js'
import { errorCode } from '../thrown.js'
import { DEFAULT_LONG_READS, MAX_PREPARED_TEXT, QUEUED_LONG_READS, envInt, type Connection, type ConnectionSettings, type DirectRunner, type Row } from './connection.js'
import { ReaderPool } from './sqlite-readers.js'
import { rowStatements, type RowStatement } from './sqlite-rows.js'
import { ChangesSpan } from './sqlite-versions.js'
import { RAISE_FUNCTION } from './common.js'

/** The file of a `sqlite:<file>`, `sqlite::memory:`, `file:<file>` or plain-path URL. */
export function sqliteFilename (url: string): string {
  if (/^sqlite::memory:$|^:memory:$/i.test(url)) return ':memory:'
  if (/^file:\/\//i.test(url)) return fileURLToPath(url)
  const path = url.replace(/^(sqlite|file):(\/\/)?/i, '')
  return resolve(path)
}


export function connectSqlite (url: string, settings: ConnectionSettings = {}): Connection {
  const filename = sqliteFilename(url)
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
  const busyTimeout = envInt('FASTBASE_SQLITE_BUSY_TIMEOUT', 5000)
  let writerDb: SqliteDatabase | undefined
  /** The writer's total_changes(), read around a spanned write (a statement of its own, answering the bare number). */
  let writerChanges: (() => number) | undefined
  // A new writer connection starts its change counter at 0 again: its versions must not repeat an
  // earlier connection's (a restore swaps the database file).
  let writerEpoch = ''
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // A failed query's message gets its SQL text, not the SQL with the values spliced in: Knex's
    // splicing throws its own TypeError on a BigInt binding (hiding the database's error), and bound
    // values (caller data) have no place in an error message.
    compileSqlOnError: false,
    // One connection: SQLite has one writer, and Knex transactions must not wait on a second
    // connection that the first one's write lock blocks.
    pool: {
      min: 1,
      max: 1,
      afterCreate (db: SqliteDatabase, done: (err: unknown, db: SqliteDatabase) => void) {
        setUpWriter(db).then(() => { done(null, db) }, (err: unknown) => { done(err, db) })
      }
    }
  })
  async function setUpWriter (db: SqliteDatabase): Promise<void> {
    db.pragma(`busy_timeout = ${busyTimeout}`)
    await enterWal(db, busyTimeout)
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    registerFunctions(db)
    // Prepared apart from the cache below: pluck() changes the statement it is called on.
    const changes = db.prepare<[], number>(TOTAL_CHANGES).pluck()
    cachePreparedStatements(db)
    writerDb = db
    writerEpoch = randomBytes(6).toString('hex')
    writerChanges = () => changes.get() ?? 0
  }
  // Knex types its client `any`: tarn's pool, of which two counters are read.
  const pool: { numUsed: () => number, numPendingAcquires: () => number } | undefined = knex.client.pool
  /**
   * The writer connection, right now, when Knex is not using it (no transaction open, nobody
   * queued). Safe because better-sqlite3 runs a statement synchronously: nothing can start in between.
   */
  const idleWriter = (): SqliteDatabase | undefined =>
    writerDb === undefined || writerDb.inTransaction || pool === undefined || pool.numUsed() > 0 || pool.numPendingAcquires() > 0 ? undefined : writerDb
  // Every write steps to its end (`all`, or `run` without RETURNING): only there does SQLite run its
  // automatic checkpoint, and only there is a failed commit reported (decision D83).
  const runOn = (db: SqliteDatabase, sql: string, bindings: readonly unknown[]): Row[] => {
    const rows = rowsOf(db, sql)
    if (rows !== undefined) return rows.all(bindings)
    const statement = db.prepare<unknown[], Row>(sql)
    if (statement.reader) return statement.all(...bindings)
    statement.run(...bindings)
    return []
  }
  // Reads skip Knex's one-connection pool queue: they take the writer while Knex is not using it,
  // whose page cache every write of this process keeps current (a second connection must reread
  // what the writer changed: a session check after each write cost a third more), and a read-only
  // connection while a transaction holds the writer (under WAL it never waits for the writer). An
  // in-memory database is private to its connection: it has only the writer.
  const reader = filename === ':memory:' ? undefined : readOnlyConnection(filename, busyTimeout)
  const threads = filename === ':memory:' ? 0 : envInt('FASTBASE_SQLITE_READ_THREADS', DEFAULT_LONG_READS)
  const readers = threads === 0
    ? undefined
    : new ReaderPool({ filename, threads, busyTimeout, timeout: settings.statementTimeout ?? 0, queuePerThread: QUEUED_LONG_READS, statementCacheSize: STATEMENT_CACHE_SIZE })
  const direct: DirectRunner = {
    read (statement, bindings) {
      if (statement.offThread === true && readers !== undefined) return readers.read(statement.native, bindings)
      const db = idleWriter() ?? reader?.()
      if (db === undefined) return undefined
      const prepared = rowsOf(db, statement.native) ?? everyRow(db, statement.native)
      if (statement.oneRow !== true) return prepared.all(bindings)
      // A read only: `get` leaves the statement unfinished, which a write must not (decision D83).
      const row = prepared.get(bindings)
      return row === undefined ? [] : [row]
    },
    write (sql, bindings, span) {
      const db = idleWriter()
      if (db === undefined) return undefined
      if (span === undefined || writerChanges === undefined) return runOn(db, sql, bindings)
      const rows = runOn(db, sql, bindings)
      if (rows.length === 0) return rows
      // Only total_changes() (a statement of its own; the whole version costs 6 µs): the other parts
      // of a version only ever grow, so writesBetween compares them at its two ends. Read once, after:
      // the span starts its own rows before (decision D147). Where triggers or foreign-key actions
      // changed more rows, that start is no count any statement ended at, so no chain of spans
      // reaches the span and no total is carried across the write.
      const after = writerChanges()
      span.span = new ChangesSpan(writerEpoch, after - rows.length, after)
      return rows
    },
    // Every write of this process goes through the writer (total_changes counts its rows, rolled
    // back or not); data_version moves when another connection or process commits; schema_version
    // with any schema change. Outside transactions only: inside one the writer counts uncommitted rows.
    dataVersion () {
      const db = idleWriter()
      return db === undefined ? undefined : versionOn(db)
    },
    // BEGIN takes no lock; the read takes the one both statements then share (a lone statement takes
    // and drops its own, two file-lock calls on WAL's shared memory), and COMMIT drops it. Nothing can
    // run on the writer in between: better-sqlite3 runs all four synchronously.
    readVersioned (statement, bindings) {
      if (statement.offThread === true && readers !== undefined) return undefined
      const db = idleWriter()
      if (db === undefined) return undefined
      db.prepare(BEGIN).run()
      try {
        const rows = (rowsOf(db, statement.native) ?? everyRow(db, statement.native)).all(bindings)
        const version = versionOn(db)
        return version === undefined ? undefined : { rows, version }
      } finally {
        db.prepare(COMMIT).run()
      }
    }
  }
  /** The writer's data version (Dialect#writesBetween reads its parts). */
  function versionOn (db: SqliteDatabase): string | undefined {
    const row = db.prepare<[], { c: number, d: number, s: number }>(DATA_VERSION).get()
    return row === undefined ? undefined : `${writerEpoch}:${row.c}:${row.d}:${row.s}`
  }
  return {
    knex,
    dialectName: 'sqlite',
    direct,
    prepare: async () => {},
    close: async () => {
      readers?.close()
      reader?.close()
      await knex.destroy()
    }
  }
}

/**
 * Switches a connection to WAL, waiting out other connections that hold the file's lock meanwhile.
 * The switch writes the file's header; when another connection is writing at that moment (say,
 * another process switching the same new file), SQLite answers SQLITE_BUSY at once instead of
 * calling the busy handler (waiting could deadlock), so the wait is here, bounded like the handler's.
 */
export async function enterWal (db: SqliteDatabase, busyTimeout: number): Promise<void> {
  const deadline = Date.now() + busyTimeout
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (err) {
      if (errorCode(err) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, WAL_RETRY_MS))
  }
}

const WAL_RETRY_MS = 10
const TOTAL_CHANGES = 'SELECT total_changes()'
const BEGIN = 'BEGIN'
const COMMIT = 'COMMIT'
// The writer's epoch, then these three, joined by colons (Dialect#writesBetween reads them).
const DATA_VERSION = 'SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version) AS d, (SELECT schema_version FROM pragma_schema_version) AS s'

/** Opened on first use: the database file exists by then (the schema sync created it). */
function readOnlyConnection (filename: string, busyTimeout: number): (() => SqliteDatabase) & { close: () => void } {
  let db: SqliteDatabase | undefined
  const open = (): SqliteDatabase => {
    if (db !== undefined) return db
    db = new Database(filename, { readonly: true, fileMustExist: true })
    db.pragma(`busy_timeout = ${busyTimeout}`)
    registerFunctions(db)
    cachePreparedStatements(db)
    return db
  }
  return Object.assign(open, { close: () => { db?.close(); db = undefined } })
}

/** The message of a `RAISE(...)` fails the statement as SQLite's own RAISE does in a trigger. */
function registerFunctions (db: SqliteDatabase): void {
  db.function(RAISE_FUNCTION, { varargs: false, deterministic: false }, (message: unknown) => {
    throw Object.assign(new Error(String(message ?? 'The write was refused by a trigger.')), { code: 'SQLITE_CONSTRAINT_TRIGGER' })
  })
}

// Knex prepares every query anew; the same SQL text recurs constantly (one text per query shape),
// so statements are kept per connection. Safe: better-sqlite3 runs a statement to completion
// synchronously, and the one connection is never used by two queries at once.
const STATEMENT_CACHE_SIZE = 500

function cachePreparedStatements (db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db)
  const cached = memoize(STATEMENT_CACHE_SIZE, (sql) => prepare(sql))
  // The direct runner's reads and RETURNING writes, kept apart: their statements answer arrays.
  rowStatementsOn.set(db, rowStatements(prepare, STATEMENT_CACHE_SIZE))
  db.prepare = ((sql: string) => (sql.length <= MAX_PREPARED_TEXT ? cached(sql) : prepare(sql))) as typeof db.prepare
}

const rowStatementsOn = new WeakMap<SqliteDatabase, (sql: string) => RowStatement | undefined>()

/** `sql` on `db` as a statement whose row objects are made by a literal (sqlite-rows.ts); undefined where the driver makes them, or for a write without RETURNING. */
function rowsOf (db: SqliteDatabase, sql: string): RowStatement | undefined {
  return sql.length <= MAX_PREPARED_TEXT ? rowStatementsOn.get(db)?.(sql) : undefined
}

/** A read whose rows the driver makes (sqlite-rows.ts's rowMaker), on the connection's cached statement. */
function everyRow (db: SqliteDatabase, sql: string): RowStatement {
  const statement = db.prepare<unknown[], Row>(sql)
  return { all: (bindings) => statement.all(...bindings), get: (bindings) => statement.get(...bindings) }
}
