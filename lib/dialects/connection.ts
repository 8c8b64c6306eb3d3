// What a database connection offers the rest of fastbase, whichever the dialect: the Knex instance
// (transactions, DDL, conflict handling) and a direct runner for single statements outside
// transactions, where each dialect has its own fast path.
import type { Knex } from 'knex'
import type { DialectName, WriteSpan } from './types.js'

export type Row = Record<string, unknown>

/** A statement compiled once and run many times (lib/db/statement.ts builds them). */
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
  /**
   * It may take long (a search, an expansion): SQLite runs it on a reader thread, so the event
   * loop, and every other request, never waits for it.
   */
  offThread?: boolean
  /** It answers one row at most (`LIMIT 1`): SQLite takes that row without a second step (decision D134). */
  oneRow?: boolean
}

/**
 * Runs one statement outside any transaction on the dialect's fast path: SQLite's read-only
 * connection and idle writer, synchronously with statements prepared once per text; PostgreSQL's
 * pool with named prepared statements. `undefined` means "not now": the caller goes through Knex.
 */
export interface DirectRunner {
  read: (statement: Statement, bindings: readonly unknown[]) => Row[] | Promise<Row[]> | undefined
  /**
   * `sql` has `?` placeholders. Rows of its RETURNING clause. `span` (an insert that ends with its
   * RETURNING list): the runner sets `span.span` to what places the write among data versions, where
   * it can, before it answers (decision D132). An object the caller holds, not a map keyed by the
   * rows: a WeakMap entry per write made every scavenge slower (D109).
   */
  write: (sql: string, bindings: readonly unknown[], span?: SpanOf) => Row[] | Promise<Row[]> | undefined
  /**
   * A text that is the same only while the committed data is (any write, here or in another process
   * or instance, changes it); undefined when that is not known now (a transaction is open). Read
   * before a statement, it tells whether the statement's earlier answer still holds.
   */
  dataVersion?: () => string | Promise<string> | undefined
  /**
   * `read` and then `dataVersion` in one read transaction, where the runner can now (SQLite's idle
   * writer): the rows are of the version answered, and the version costs no second lock (decision
   * D135). undefined otherwise; the caller then reads and asks apart.
   */
  readVersioned?: (statement: Statement, bindings: readonly unknown[]) => { rows: Row[], version: string } | undefined
  /**
   * Pool connections the runner holds idle between its statements, and its statements waiting for
   * one (PostgreSQL's lease): the pool counts the first as used and never sees the second.
   */
  held?: () => { idle: number, waiting: number }
}


/** Where DirectRunner#write puts a write's span. */
export interface SpanOf { span?: WriteSpan }

export interface ConnectionSettings {
  /**
   * Milliseconds a caller's statement may run: on PostgreSQL every statement outside schema
   * changes, on SQLite the reads that run on reader threads (Statement#offThread). None when undefined.
   */
  statementTimeout?: number
}

export interface Connection {
  knex: Knex
  dialectName: DialectName
  direct: DirectRunner
  /** Creates what the connection needs before the schema sync (PostgreSQL's `?schema=`). */
  prepare: () => Promise<void>
  /** Releases the driver's connections. */
  close: () => Promise<void>
}

/**
 * Statement texts up to this length are kept prepared (per SQLite connection, per PostgreSQL pool
 * connection). Longer ones — multi-row inserts, whose length callers choose — are prepared each time.
 */
export const MAX_PREPARED_TEXT = 4096

/**
 * Reads that may take long (Statement#offThread) run this many at once by default, on either
 * dialect: one per core of a small machine (SQLite's reader threads, PostgreSQL's slots).
 */
export const DEFAULT_LONG_READS = 2
/** Long reads waiting per thread or slot at most; past it a read is refused as busy. */
export const QUEUED_LONG_READS = 32

/** A non-negative integer setting from the environment. */
export function envInt (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
  return value
}
