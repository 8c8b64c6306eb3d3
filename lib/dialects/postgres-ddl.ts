// PostgreSQL DDL. Column types follow the field `type` where it decides how values behave (bool,
// json, date), so that the API answers the same on both dialects; otherwise the sqlType.
// Raw `{q}` SQL in defaults, checks, index `where` and trigger bodies is passed as written: a
// SQLite-only function there is the config author's business (CURRENT_TIMESTAMP works on both).
import { collationsOf, createTableStatements, defaultSql, referencedField, triggerName, triggersOf, type DdlSyntax, type MigrationSyntax, type SchemaDialect, type TriggerParts } from './ddl.js'
import type { SqlType, TableData, TableField } from '../../schemas/config.js'
import { RAISE_FUNCTION, quote } from './common.js'
import { dropSearchStatements, POSTGRES_SEARCH_FORMAT, searchIndexName, searchStatements } from './postgres-fts.js'

const SQL_TYPES: Record<SqlType, string> = {
  text: 'text',
  // The text-affinity aliases hold text unless the field type says json/date (handled first).
  json: 'text',
  date: 'text',
  datetime: 'text',
  timestamp: 'text',
  time: 'text',
  null: 'text',
  integer: 'bigint',
  int: 'bigint',
  boolean: 'bigint',
  real: 'double precision',
  float: 'double precision',
  numeric: 'numeric',
  blob: 'bytea'
}

function columnType (field: TableField): string {
  if (field.type === 'bool') return 'boolean'
  if (field.type === 'json') return 'jsonb'
  if (field.type === 'date') return 'timestamptz'
  return SQL_TYPES[field.sqlType] ?? 'text'
}

/** A foreign key column takes the type of the column it references (PostgreSQL requires comparable types). */
function columnTypeIn (field: TableField, tables: TableData[]): string {
  return columnType(referencedField(field, tables) ?? field)
}

// SQLite's NOCASE as a case-insensitive ICU collation. PostgreSQL 15 refuses LIKE/ILIKE on
// nondeterministic collations, so a `~` filter on such a column must apply COLLATE "C" itself.
const NOCASE = 'fastbase_nocase'
const CREATE_NOCASE = `CREATE COLLATION IF NOT EXISTS "${NOCASE}" (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`

/**
 * Text columns get COLLATE "C" (byte order) unless the config names a collation: SQLite compares
 * and sorts text with BINARY, and LIKE / lower() are ASCII-only there, exactly as under "C".
 */
function collate (name: string | undefined, type: string | undefined): string | undefined {
  if (type !== undefined && type !== 'text') return undefined // only text is collatable in PostgreSQL
  if (name === undefined) return type === 'text' ? 'COLLATE "C"' : undefined
  switch (name.toUpperCase()) {
    case 'BINARY':
      return 'COLLATE "C"'
    case 'NOCASE':
      return `COLLATE "${NOCASE}"`
    case 'RTRIM':
      throw new Error('Collation RTRIM has no PostgreSQL equivalent')
    default:
      return `COLLATE ${quote(name)}`
  }
}

// teenybase configs check JSON columns with SQLite's json_valid(col). A jsonb column is valid JSON
// by construction; a text one is valid when it casts. NULL stays NULL, as in SQLite (CHECK passes).
const CREATE_JSON_VALID = [
  'CREATE OR REPLACE FUNCTION json_valid(value jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN value IS NULL THEN NULL ELSE true END $$',
  'CREATE OR REPLACE FUNCTION json_valid(value text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN IF value IS NULL THEN RETURN NULL; END IF; PERFORM value::jsonb; RETURN true; EXCEPTION WHEN others THEN RETURN false; END $$'
]

function prerequisites (table: TableData): string[] {
  return [
    ...(collationsOf(table).some((c) => c.toUpperCase() === 'NOCASE') ? [CREATE_NOCASE] : []),
    ...(/\bjson_valid\s*\(/i.test(JSON.stringify(table)) ? CREATE_JSON_VALID : [])
  ]
}

/** A quoted dollar-quote tag that does not occur in `text`. */
function dollarTag (text: string): string {
  let tag = '$fastbase$'
  for (let i = 1; text.includes(tag); i++) tag = `$fastbase${i}$`
  return tag
}

/**
 * PostgreSQL triggers run a function: the body statements become a PL/pgSQL function of the same
 * name. Row-level like SQLite's; a BEFORE trigger returns the row so the operation goes ahead.
 * SQLite idioms in teenybase trigger bodies are carried over: `SELECT RAISE(FAIL, 'msg') WHERE c`
 * becomes `IF c THEN RAISE EXCEPTION 'msg'`, another SELECT becomes PERFORM (PL/pgSQL refuses a
 * SELECT whose rows go nowhere), and a trigger that updates its own table does not fire itself
 * again (SQLite's triggers are not recursive; on PostgreSQL such a trigger would loop).
 */
function trigger (p: TriggerParts): string[] {
  const of = p.updateOf.length > 0 ? ` OF ${p.updateOf.join(', ')}` : ''
  const selfUpdate = p.body.some((s) => updatesTable(s, p.table))
  const conditions = [p.when, selfUpdate ? 'pg_trigger_depth() < 1' : undefined].filter((c) => c !== undefined)
  const when = conditions.length === 0 ? '' : ` WHEN (${conditions.join(' AND ')})`
  const row = p.event === 'DELETE' ? 'OLD' : 'NEW'
  const body = `BEGIN\n${p.body.map((s) => `  ${plpgsqlStatement(s)};\n`).join('')}  RETURN ${row};\nEND`
  const tag = dollarTag(body)
  return [
    `CREATE OR REPLACE FUNCTION ${p.name}() RETURNS trigger LANGUAGE plpgsql AS ${tag}\n${body}\n${tag}`,
    `CREATE TRIGGER ${p.name} ${p.seq} ${p.event}${of} ON ${p.table} FOR EACH ROW${when} EXECUTE FUNCTION ${p.name}()`
  ]
}

// `SELECT RAISE(FAIL, 'message') [WHERE condition]` (also ABORT / ROLLBACK, and IGNORE without a message).
const RAISE = /^SELECT\s+RAISE\s*\(\s*(FAIL|ABORT|ROLLBACK|IGNORE)\s*(?:,\s*('(?:[^']|'')*')\s*)?\)\s*(?:WHERE\s+([\s\S]+))?$/i

function plpgsqlStatement (statement: string): string {
  const raise = RAISE.exec(statement)
  if (raise !== null) {
    const [, kind, message, condition] = raise
    // IGNORE skips the row: a BEFORE trigger returning NULL does exactly that.
    // USING MESSAGE: the text is not a format string (a % in it stays a %). The error code is the one
    // the dialect maps to a refused write (400), as SQLite's RAISE gives SQLITE_CONSTRAINT_TRIGGER.
    const action = kind.toUpperCase() === 'IGNORE' ? 'RETURN NULL' : `RAISE EXCEPTION USING MESSAGE = ${message ?? "'The write was refused by a trigger.'"}, ERRCODE = 'triggered_action_exception'`
    return condition === undefined ? action : `IF ${condition} THEN ${action}; END IF`
  }
  return statement.replace(/^SELECT\b/i, 'PERFORM')
}

/** Does the statement UPDATE the table (quoted or not)? */
function updatesTable (statement: string, quotedTable: string): boolean {
  const name = quotedTable.slice(1, -1).replace(/""/g, '"')
  return new RegExp(`\\bUPDATE\\s+(?:${escapeRegExp(quotedTable)}|${escapeRegExp(name)}\\b)`, 'i').test(statement)
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

const syntax: DdlSyntax = {
  columnType: columnTypeIn,
  autoIncrement: 'GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY',
  // A bool literal for a column that is not boolean (e.g. sqlType boolean, type integer) is 1/0.
  bool: (value, field) => (field === undefined || columnType(field) === 'boolean' ? String(value) : (value ? '1' : '0')),
  collate,
  specialDefault: () => undefined,
  prerequisites,
  trigger,
  search: searchStatements
}

// Advisory lock class of fastbase schema changes; the second key is the schema being changed.
const LOCK_CLASS = 0x66627365 // 'fbse'

/** Statement that takes fastbase's transaction-scoped schema lock for the schema named by `schemaSql`. */
export function schemaLockSql (schemaSql: string): string {
  return `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${schemaSql}))`
}

/**
 * Run first in a transaction of fastbase's own long work (schema changes, the purge): pool
 * connections cancel statements past the caller's statement_timeout (postgres-connection.ts), and
 * waiting for another instance's schema lock or rewriting a large table must not be cancelled.
 */
export const LIFT_STATEMENT_TIMEOUT = 'SET LOCAL statement_timeout = 0'

// `RAISE(ABORT, 'msg')` of a SQL-mode action (lib/actions/raise.ts): the error a trigger's RAISE
// gives here (the code the dialect maps to a refused write). Text-typed: PostgreSQL has no
// expression of "any" type. VOLATILE so that it is never evaluated ahead of the row that reaches it.
// Created only when missing: a start with nothing to do changes nothing.
const CREATE_RAISE = `DO $do$ BEGIN IF to_regprocedure('${RAISE_FUNCTION}(text)') IS NULL THEN
CREATE FUNCTION ${RAISE_FUNCTION}(message text) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN RAISE EXCEPTION USING MESSAGE = coalesce(message, 'The write was refused by a trigger.'), ERRCODE = 'triggered_action_exception'; END $fn$;
END IF; END $do$`

// PostgreSQL's ALTER TABLE changes columns in place. Its constraints and indexes are named after
// their table and column (ddl.ts), and renamed with them so a table is exactly what its config would
// create under its name (the error mapping finds a violated column by its constraint's name).
const migration: MigrationSyntax = {
  renamesConstraints: true,
  foreignKeyTakesReferencedType: true,
  foreignKeyNeedsTable: true,
  rebuildsTables: false,
  addsColumnInPlace: () => true,
  search: searchStatements,
  searchFormat: POSTGRES_SEARCH_FORMAT,
  dropSearch: dropSearchStatements,
  renameSearch: (table, renamed) => [`ALTER INDEX IF EXISTS ${quote(searchIndexName(table))} RENAME TO ${quote(searchIndexName(renamed.table))}`],
  dropTrigger: (table, name) => [`DROP TRIGGER IF EXISTS ${quote(name)} ON ${quote(table)}`, `DROP FUNCTION IF EXISTS ${quote(name)}()`],
  // The search index goes with the table; trigger functions outlive it.
  dropTable: (table) => [`DROP TABLE ${quote(table.name)}`, ...triggersOf(table, 'postgres').map((tr) => `DROP FUNCTION IF EXISTS ${quote(triggerName(table.name, tr))}()`)]
}

export const postgresDdl: SchemaDialect = {
  name: 'postgres',
  createTable: (table, tables, omitForeignKeys) => createTableStatements(table, tables, syntax, 'postgres', omitForeignKeys),
  columnDefault: (field) => field.default === undefined ? undefined : defaultSql(field, field.default, syntax),
  columnType,
  schemaLock: () => [LIFT_STATEMENT_TIMEOUT, schemaLockSql("coalesce(current_schema(), '')")],
  functions: [CREATE_RAISE],
  tablesSql: 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()',
  schemaChangeTransaction: {},
  longWork: [LIFT_STATEMENT_TIMEOUT],
  migration
}
