// Everything that differs between SQLite and PostgreSQL is behind this interface (and the DDL side,
// SchemaDialect in ddl.ts). `lib/dialects/sqlite.ts` and `lib/dialects/postgres.ts` are the only
// implementations; nothing else in the code base branches on the dialect name: what differs is a
// capability or a method here.
import type { Knex } from 'knex'
import type { TableField, TableData } from '../../schemas/config.js'
import type { SearchIndex } from '../search/fts.js'
import type { SearchQuery } from '../search/fts-query.js'

export type DialectName = 'sqlite' | 'postgres'

/** A value bound to a `?` placeholder (what Knex's raw() takes). */
export type Binding = Knex.RawBinding

/** A SQL fragment with `?` placeholders and the values bound to them, in order. */
export interface Fragment {
  sql: string
  bindings: Binding[]
}

export type ConstraintKind = 'unique' | 'not_null' | 'foreign_key' | 'check' | 'trigger'

export interface ConstraintViolation {
  kind: ConstraintKind
  /** Column named by the database error, when it names one of the table's columns. */
  column?: string
  /** A trigger's own message (`RAISE(FAIL, 'message')`): the config author's text, safe to answer. */
  message?: string
}

export interface DdlDialect {
  /**
   * Statements that create one table with its indexes and triggers, in order; without the foreign
   * keys of the fields in `omitForeignKeys` (a cycle's keys, added once every table exists).
   */
  createTable(table: TableData, tables: TableData[], omitForeignKeys?: ReadonlySet<string>): string[]
  /** SQL type of a column in this dialect. */
  columnType(field: TableField): string
}

/**
 * The rows a search ranks: those `where` admits, the first `limit` in `order`. `rest`, given when
 * `where` requires the search, is `where` without it: a dialect with `drive` may then take the first
 * `limit` in the index's order instead (decision D77).
 */
export interface Candidates { where: Fragment | true, order: string, limit: number, rest?: Fragment | true }

/**
 * Where a write that ran alone sits among data versions (DirectRunner#dataVersion), read by the
 * dialect's `writesBetween`. SQLite: `id` is the writer's count of changed rows just before it and
 * `after` the one just after, with no row changed between but the ones it answers (no trigger, no
 * cascade). PostgreSQL: `id` is its transaction's id, which snapshots list.
 */
export interface WriteSpan { id: string, after?: string }

export interface Dialect extends DdlDialect {
  readonly name: DialectName
  /** The database's name for people (messages). */
  readonly label: string
  /**
   * Several instances may serve one database: what they must agree on (rate-limit counters, realtime
   * interest and changes) goes through the database rather than staying in one process's memory.
   */
  readonly sharedByInstances: boolean
  /**
   * The planner turns `key IN (SELECT ...)` into a semi-join it costs against per-row lookups (an
   * index probe per row for a page, a hash for a count): a condition that follows relations is
   * compiled with semi-joins for every statement (decision D126). Otherwise only for statements that
   * read every row they admit (counts): SQLite builds the whole set first.
   */
  readonly plansSemiJoins: boolean
  /**
   * Statements run synchronously in this process (the driver blocks the event loop while one runs):
   * work that may be long runs on a thread of its own.
   */
  readonly synchronous: boolean

  /** Quotes a (validated) identifier. */
  quote(name: string): string
  /** `a ~ b` / `a !~ b`: case-insensitive LIKE with `\` as the escape character. */
  like(left: string, right: string, negate: boolean): string
  /** `a == b` (equal = true) / `a != b`: null-safe comparison. */
  isDistinct(left: string, right: string, equal: boolean): string
  /** `a || b`: string concatenation. */
  concat(parts: string[]): string
  /** `col -> path` / `col ->> path` (target's bindings included). `numeric` asks for a number (compared with a number). */
  jsonExtract(target: Fragment, path: (string | number)[], asText: boolean, numeric: boolean): Fragment
  /** `json_contains(a, b)`: JSON array `a` contains the value `b`. */
  jsonContains(array: string, value: string): string
  /**
   * `column` (of `field`) is one of the members of the JSON array bound at its one `?`, in a form the
   * planner answers by looking each member up in the column's index. With `writesBetween`, a list's
   * total can be carried across the rows a write inserted rather than counted again (D132).
   */
  keyIn?(column: string, field: TableField): string
  /**
   * The writes that moved the data version from `from` to `to`, in order, when `known` places each
   * of them (a WriteSpan of a write that ran alone) and there are at most `limit`; else undefined.
   */
  writesBetween?(from: string, to: string, known: (id: string) => WriteSpan | undefined, limit: number): string[] | undefined
  /**
   * SQL of the data version a statement reads at (PostgreSQL's snapshot), for a count to say exactly
   * which version it counted. Where there is none, a count that answers at once is at the version
   * read just before it (SQLite).
   */
  statementVersion?: string
  /** `json_set(doc, path, value)`: the fragment binds the path only. */
  jsonSet(doc: string, path: (string | number)[], value: string): Fragment
  /**
   * A JSON object from `key -> SQL value` pairs (a relation expanded in a select list). A key whose
   * value is null may be missing from it: readers take a missing key as null.
   */
  jsonObject(pairs: Array<{ key: string, sql: string }>): string
  /** Whitelisted SQL functions by lower-case name, over compiled arguments; undefined when unknown. */
  callFunction(name: string, args: string[]): string | undefined
  /** SQL of the current timestamp, in the storage format of `date` columns. */
  now(): string
  /**
   * Does this statement text read the clock or chance (`now()` and its kin)? Its answer may then
   * change with no write, so it is never kept per data version (lib/crud/total-cache.ts).
   */
  readsClock(sql: string): boolean
  /** SQL that moves an auto-increment column's counter past explicit ids, where the dialect needs it. */
  resyncIdentity(quotedTable: string, column: string): string | undefined
  /**
   * The planner's estimate of how many rows a query returns, where the dialect offers one without
   * running it: `explain` wraps the query's text, `rows` reads the answer. SQLite has none.
   */
  rowEstimate?: { explain(sql: string): string, rows(result: Array<Record<string, unknown>>): number }
  /**
   * Where a value of `field` is bound in a statement (`?`, or a typed cast): `literal(v, field)` for
   * any v but null is this text with `encode(field, v)` bound, and binding null here gives NULL.
   */
  placeholder(field: TableField): string
  /** A bound constant; `field` is the column it is compared with or written to, for encoding and typing. */
  literal(value: unknown, field?: TableField): Fragment
  /**
   * Rows that no longer exist (a delete's captured values, decoded), as a FROM item named like the
   * table `quotedTable`, typed like its columns: a rule compiled for the table evaluates on it as on
   * the table's own rows (realtime delete events, lib/realtime/hub.ts).
   */
  rowsAs(quotedTable: string, fields: TableField[], rows: Array<Record<string, unknown>>): Fragment
  /** Full-text search (decision D37, lib/search/fts.ts); the index itself is part of createTable. */
  search: {
    /**
     * The rows the query matches (in `fields` when given, else in any field), as a condition on the
     * row `row` names: the quoted table, or the alias a statement reads it under (relation expand).
     */
    match(index: SearchIndex, row: string, fields: string[] | undefined, query: SearchQuery): Fragment
    /** What names a row of `table` in `scores` (`row` as in match). */
    rowKey(index: SearchIndex, row: string): string
    /**
     * A statement of `fb_row` (the rowKey) and `fb_score` (higher is better) for the rows of
     * `table` (quoted) that `candidates` admits, taken in `order`, at most `limit`: each score read
     * from the row's own text in `fields` and the query alone.
     */
    scores(index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery, candidates: Candidates): Fragment
    /**
     * A FROM of the matching rows of `table` (quoted), read in the index's own order and joined to the
     * table, exposing no other column than the table's: for a statement whose condition requires the
     * search (the rest of it then tested on them), cheaper than `match` where most rows match. Absent,
     * or undefined for an index whose rows cannot be looked up by its row id: `match` is used.
     */
    drive?(index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery): Fragment | undefined
  }

  // ---- values ----
  /** JSON value from a request -> value bound for this column. Throws ValueError with a message on bad input. */
  encode(field: TableField, value: unknown): Binding
  /** Value read from the driver -> JSON value for responses (decision D1). */
  decode(field: TableField | undefined, value: unknown): unknown
  /** True when `decode(field, v)` is `v` for every value the driver reads from this column: rows of such columns are answered as read. */
  readsAsIs(field: TableField): boolean
  /** Rows of a `knex.raw` result (drivers shape them differently). */
  rawRows(result: unknown): Record<string, unknown>[]

  // ---- errors ----
  /** Constraint violation described by a driver error, or undefined. */
  constraintViolation(error: unknown, table: TableData): ConstraintViolation | undefined
  /** The database stayed locked longer than the busy timeout. */
  isBusy(error: unknown): boolean
  /** The statement ran past the caller's statement timeout and was cancelled. */
  isTimeout(error: unknown): boolean
  /** The statement failed because of a caller's value (bad JSON text, wrong type in a comparison): a 400. */
  badInput(error: unknown): string | undefined
}
