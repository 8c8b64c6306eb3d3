// Dialect-neutral DDL: turns a config table into CREATE TABLE / CREATE INDEX / trigger statements.
// Each dialect (lib/dialects/*-ddl.ts) supplies only the pieces that differ (`DdlSyntax`); the shape
// of the statements, the constraint names and the rendering of `{q}` / `{l}` values live here once.
import type { DdlDialect, DialectName } from './types.js'
import type { SqlValue, TableData, TableField, TableIndex, TableTrigger } from '../../schemas/config.js'
import { quote } from './common.js'
import { searchIndexOf, type SearchIndex } from '../search/fts.js'

/** DDL side of a dialect plus what a schema sync needs. */
export interface SchemaDialect extends DdlDialect {
  readonly name: DialectName
  /** The SQL of `field`'s default as its column definition writes it; undefined without one. */
  columnDefault(field: TableField): string | undefined
  /**
   * Statements run first inside the schema-change transaction so that two instances starting at once
   * on one database wait for each other instead of both creating the same tables.
   */
  schemaLock(): string[]
  /**
   * Statements (idempotent, changing nothing when already done) that create the SQL functions
   * fastbase's own SQL calls where the dialect does not have them; run with every schema sync.
   */
  functions: string[]
  /** Query answering one row `{ name }` per table of the current schema. */
  tablesSql: string
  /**
   * Knex transaction options for a schema change. SQLite turns foreign keys off around it (its table
   * rebuild drops a table others reference; Knex checks `foreign_key_check` before committing).
   */
  schemaChangeTransaction: { enforceForeignCheck?: boolean }
  /**
   * Statements run first in a transaction of fastbase's own long work (schema changes, the purge), so
   * that the statement timeout callers run under does not cancel it.
   */
  longWork: string[]
  /** How the migration planner changes tables that exist. */
  migration: MigrationSyntax
}

/**
 * What differs when a table that exists changes (lib/db/migration-plan.ts): which changes ALTER TABLE
 * makes in place, and the statements that are not pieces of a CREATE.
 */
export interface MigrationSyntax {
  /**
   * Constraints and indexes can be renamed: when their table or column is renamed, they are renamed
   * to the names `constraintName` and `indexName` give (else indexes are dropped and made anew, and
   * constraints have no names to follow).
   */
  renamesConstraints: boolean
  /** A foreign key column has the type of the column it references, so it changes type with it. */
  foreignKeyTakesReferencedType: boolean
  /**
   * A foreign key needs the table it references to exist: a cycle's keys are added once every table
   * exists, and a key still pointing at a table being dropped is dropped first.
   */
  foreignKeyNeedsTable: boolean
  /**
   * ALTER TABLE cannot change a kept column (type, constraints, default, primary key): all such
   * changes of a table, and the added columns `addsColumnInPlace` refuses, become one rebuild of it.
   */
  rebuildsTables: boolean
  /** ADD COLUMN can add `field`, whose default renders as `defaultSql` (`NULL` without one). */
  addsColumnInPlace(field: TableField, defaultSql: string): boolean
  /** Statements that make the full-text index (the table's own CREATE statements end with them). */
  search(index: SearchIndex): string[]
  /**
   * Layout of the search index `search` makes (decision D71). The schema model records the layout
   * each table's index was made with; a table made with another is given a new one.
   */
  searchFormat: number
  /** Statements that remove the full-text index of table `table`, of any layout this dialect ever made. */
  dropSearch(table: string): string[]
  /** Statements that move the full-text index of `table` to the table `renamed` now names (already renamed). */
  renameSearch(table: string, renamed: SearchIndex): string[]
  /** Statements that remove the trigger `name` of `table`. */
  dropTrigger(table: string, name: string): string[]
  /** Statements that drop `table` with what belongs to it (foreign keys pointing at it excepted). */
  dropTable(table: TableData): string[]
}

/** The parts of DDL that differ between dialects. */
export interface DdlSyntax {
  /** Column type of `field`; `tables` lets a foreign key take the type of the column it references. */
  columnType(field: TableField, tables: TableData[]): string
  /** Clauses after the type of an autoIncrement column (it is always the primary key). */
  autoIncrement: string
  /** A boolean literal stored in `field` (or in an expression when `field` is undefined). */
  bool(value: boolean, field: TableField | undefined): string
  /**
   * `COLLATE ...` clause for a column of SQL type `type` (undefined when not known): the collation
   * named in the config, or the dialect's implicit one when `name` is undefined. undefined = none.
   */
  collate(name: string | undefined, type: string | undefined): string | undefined
  /** Default value of `field` where the dialect must deviate from the raw SQL, else undefined. */
  specialDefault(field: TableField, sql: string): string | undefined
  /** Statements that create what the table's DDL relies on (e.g. a collation), run before it. */
  prerequisites(table: TableData): string[]
  /** Statements that create one trigger; `body` is a list of statements without trailing `;`. */
  trigger(parts: TriggerParts): string[]
  /** Statements that create the table's full-text index and keep it in step with writes. */
  search(index: SearchIndex): string[]
}

export interface TriggerParts {
  /** Quoted trigger name, `"tgr_<table>_<name>"`. */
  name: string
  /** Quoted table name. */
  table: string
  seq: 'BEFORE' | 'AFTER' | 'INSTEAD OF'
  event: 'INSERT' | 'UPDATE' | 'DELETE'
  /** Quoted column names for `UPDATE OF`, empty when not restricted. */
  updateOf: string[]
  when: string | undefined
  body: string[]
}

/** PostgreSQL truncates identifiers to 63 bytes; names are computed the same way so errors map back. */
const MAX_IDENTIFIER = 63

export function quoteString (value: string): string {
  return `'${value.replace(/'/g, "''")}'`
}

export type ConstraintSuffix = 'key' | 'check' | 'fkey'

/**
 * Name of a column constraint, as PostgreSQL would choose it (`<table>_<column>_key|check|fkey`).
 * The errors mapping uses it to find the column a violated constraint belongs to.
 */
export function constraintName (table: string, column: string, suffix: ConstraintSuffix): string {
  return `${table}_${column}_${suffix}`.slice(0, MAX_IDENTIFIER)
}

export function indexName (table: string, index: TableIndex): string {
  const name = index.name ?? parseIndexColumns(index).map((c) => c.namePart).join('_')
  return `idx_${table}_${name}`.slice(0, MAX_IDENTIFIER)
}

export function triggerName (table: string, trigger: TableTrigger): string {
  return `tgr_${table}_${trigger.name}`.slice(0, MAX_IDENTIFIER)
}

// ---- values ----

/** A literal (`{l}`) rendered as SQL. Strings are single-quoted; objects and arrays become JSON text. */
export function renderLiteral (value: unknown, syntax: DdlSyntax, field?: TableField): string {
  if (value === null || value === undefined) return 'NULL'
  if (field?.type === 'json') return quoteString(jsonText(value))
  if (typeof value === 'boolean') return syntax.bool(value, field)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`Cannot use ${value} as an SQL literal`)
    // A 0/1 default on a boolean column: PostgreSQL refuses integers there, SQLite stores 0/1 anyway.
    if (field?.type === 'bool' && (value === 0 || value === 1)) return syntax.bool(value === 1, field)
    return String(value)
  }
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'string') return quoteString(value)
  return quoteString(JSON.stringify(value))
}

/** JSON text of a literal stored in a json field: a string that already is JSON text is kept (decision D1). */
function jsonText (value: unknown): string {
  if (typeof value === 'string') {
    try {
      JSON.parse(value)
      return value
    } catch {
      return JSON.stringify(value)
    }
  }
  return JSON.stringify(value)
}

/**
 * SQL of a config value: `{q}` verbatim (with `{:name}` parameters inlined as literals, since DDL
 * cannot bind), `{l}` as a literal, a bare string as raw SQL.
 */
export function renderSqlValue (value: SqlValue, syntax: DdlSyntax, field?: TableField): string {
  if (typeof value === 'string') return value
  if ('l' in value) return renderLiteral(value.l, syntax, field)
  const params = value.p ?? {}
  return value.q.replace(/\{:([a-zA-Z_][a-zA-Z0-9_]*)\}/g, (_match, name: string) => {
    if (!(name in params)) throw new Error(`SQL parameter {:${name}} has no value in ${JSON.stringify(value.q)}`)
    return renderLiteral(params[name], syntax)
  })
}

// ---- columns ----

function isSinglePrimaryKey (table: TableData): boolean {
  return table.fields.filter(isPrimary).length === 1
}

function isPrimary (field: TableField): boolean {
  return field.primary === true || field.autoIncrement === true
}

function columnDefinition (table: TableData, field: TableField, tables: TableData[], syntax: DdlSyntax, omitForeignKeys: ReadonlySet<string>): string {
  const type = syntax.columnType(field, tables)
  const parts = [quote(field.name), type]
  // PostgreSQL wants COLLATE right after the type; SQLite accepts it anywhere.
  const collate = syntax.collate(field.collate, type)
  if (collate) parts.push(collate)
  if (field.autoIncrement) parts.push(syntax.autoIncrement)
  else if (field.primary && isSinglePrimaryKey(table)) parts.push('PRIMARY KEY')
  if (field.unique) parts.push(`CONSTRAINT ${quote(constraintName(table.name, field.name, 'key'))} UNIQUE`)
  if (field.notNull) parts.push('NOT NULL')
  if (field.default !== undefined) parts.push(`DEFAULT ${defaultSql(field, field.default, syntax)}`)
  if (field.check !== undefined) {
    parts.push(`CONSTRAINT ${quote(constraintName(table.name, field.name, 'check'))} CHECK (${renderSqlValue(field.check, syntax, field)})`)
  }
  if (field.foreignKey && !omitForeignKeys.has(field.name)) parts.push(foreignKeyClause(table.name, field))
  return parts.join(' ')
}

/** The SQL of a column's default, as its DDL writes it. */
export function defaultSql (field: TableField, value: SqlValue, syntax: DdlSyntax): string {
  const sql = renderSqlValue(value, syntax, field)
  return syntax.specialDefault(field, sql) ?? sql
}

function foreignKeyClause (table: string, field: TableField): string {
  const fk = field.foreignKey!
  let sql = `CONSTRAINT ${quote(constraintName(table, field.name, 'fkey'))} REFERENCES ${quote(fk.table)} (${quote(fk.column)})`
  if (fk.onUpdate) sql += ` ON UPDATE ${fk.onUpdate}`
  if (fk.onDelete) sql += ` ON DELETE ${fk.onDelete}`
  return sql
}

/** The field a foreign key points at, if the config declares it. */
export function referencedField (field: TableField, tables: TableData[]): TableField | undefined {
  const fk = field.foreignKey
  if (!fk) return undefined
  return tables.find((t) => t.name === fk.table)?.fields.find((f) => f.name === fk.column)
}

/** True when the value is (case-insensitively) the bare `CURRENT_TIMESTAMP` keyword. */
export function isCurrentTimestamp (sql: string): boolean {
  return sql.trim().toUpperCase() === 'CURRENT_TIMESTAMP'
}

// ---- indexes ----

interface IndexColumn {
  /** The entry as written in the config. */
  raw: string
  /** Part of the default index name contributed by this entry. */
  namePart: string
  /** Set when the entry is a plain column (optionally with COLLATE / ASC / DESC); unset for expressions. */
  column?: string
  collation?: string
  order?: string
}

// `name`, `"name"`, `name COLLATE NOCASE`, `name DESC`, `name COLLATE NOCASE ASC`
const INDEX_COLUMN = /^"?([a-zA-Z_][a-zA-Z0-9_]*)"?(?:\s+COLLATE\s+"?([a-zA-Z_][a-zA-Z0-9_]*)"?)?(?:\s+(ASC|DESC))?$/i

/** A string `fields` is split on commas; each entry may carry COLLATE / ASC / DESC (teenybase). */
function parseIndexColumns (index: TableIndex): IndexColumn[] {
  const fields = typeof index.fields === 'string' ? index.fields.split(',') : index.fields
  return fields.map((entry) => {
    const raw = entry.trim()
    const namePart = (raw.split(/[\s(]/)[0] ?? raw).toLowerCase().replace(/[^a-z0-9]/g, '_')
    const match = INDEX_COLUMN.exec(raw)
    if (!match) return { raw, namePart }
    return { raw, namePart, column: match[1], collation: match[2], order: match[3]?.toUpperCase() }
  })
}

function renderIndexColumn (c: IndexColumn, table: TableData, tables: TableData[], syntax: DdlSyntax): string {
  // An expression is the developer's raw SQL and is passed as written.
  if (c.column === undefined) return c.raw
  const field = table.fields.find((f) => f.name === c.column)
  const collate = c.collation === undefined ? undefined : syntax.collate(c.collation, field && syntax.columnType(field, tables))
  return [quote(c.column), collate, c.order].filter(Boolean).join(' ')
}

function createIndex (table: TableData, index: TableIndex, tables: TableData[], syntax: DdlSyntax): string {
  const columns = parseIndexColumns(index).map((c) => renderIndexColumn(c, table, tables, syntax)).join(', ')
  const where = index.where ? ` WHERE ${renderSqlValue(index.where, syntax)}` : ''
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quote(indexName(table.name, index))} ON ${quote(table.name)} (${columns})${where}`
}

// ---- triggers ----

// Scaffold token teenybase puts in trigger bodies for the table name.
const TABLE_REF = '\u0000TABLEREF\u0000'

function triggerStatements (table: TableData, trigger: TableTrigger, syntax: DdlSyntax): string[] {
  const bodies = Array.isArray(trigger.body) ? trigger.body : [trigger.body]
  const body = bodies
    .map((b) => renderSqlValue(b, syntax).split(TABLE_REF).join(quote(table.name)).trim().replace(/;+$/, ''))
    .filter((s) => s.length > 0)
  const updateOf = trigger.event === 'UPDATE' && trigger.updateOf !== undefined
    ? (Array.isArray(trigger.updateOf) ? trigger.updateOf : [trigger.updateOf]).map(quote)
    : []
  return syntax.trigger({
    name: quote(triggerName(table.name, trigger)),
    table: quote(table.name),
    seq: trigger.seq ?? 'BEFORE',
    event: trigger.event,
    updateOf,
    when: trigger.when === undefined ? undefined : renderSqlValue(trigger.when, syntax),
    body
  })
}

// ---- tables ----

/**
 * Ordered statements that create `table` with its indexes and triggers in `dialect`. The foreign keys
 * of the fields named in `omitForeignKeys` are left out (added later with `addForeignKeySql`).
 */
export function createTableStatements (table: TableData, tables: TableData[], syntax: DdlSyntax, dialect: DialectName, omitForeignKeys: ReadonlySet<string> = new Set()): string[] {
  const columns = table.fields.map((f) => columnDefinition(table, f, tables, syntax, omitForeignKeys))
  const primaries = table.fields.filter(isPrimary)
  // Several `primary` fields make one composite key (teenybase would emit an invalid second PRIMARY KEY).
  if (primaries.length > 1) columns.push(`PRIMARY KEY (${primaries.map((f) => quote(f.name)).join(', ')})`)
  const create = `CREATE TABLE ${quote(table.name)} (\n  ${columns.join(',\n  ')}\n)`
  const indexes = (table.indexes ?? []).map((i) => createIndex(table, i, tables, syntax))
  const triggers = triggersOf(table, dialect).flatMap((t) => triggerStatements(table, t, syntax))
  const index = searchIndexOf(table)
  return [...syntax.prerequisites(table), create, ...indexes, ...triggers, ...(index === undefined ? [] : syntax.search(index))]
}

/** The triggers of `table` a database of kind `dialect` gets (those of no dialect and its own). */
export function triggersOf (table: TableData, dialect: DialectName): TableTrigger[] {
  return (table.triggers ?? []).filter((t) => t.dialect === undefined || t.dialect === dialect)
}

/** Every collation name used by a table's fields and index columns. */
export function collationsOf (table: TableData): string[] {
  const fromFields = table.fields.flatMap((f) => (f.collate ? [f.collate] : []))
  const fromIndexes = (table.indexes ?? []).flatMap((i) => parseIndexColumns(i).flatMap((c) => (c.collation ? [c.collation] : [])))
  return [...fromFields, ...fromIndexes]
}

/**
 * `tables` ordered so that every table comes after the tables its foreign keys reference, as far as
 * a cycle allows (PostgreSQL checks references at CREATE TABLE). References to tables outside the
 * list and self-references are fine. Foreign keys in a cycle (`a -> b -> a`) are legal on both
 * dialects: the table that closes the cycle comes first, and `forwardReferences` names the keys that
 * point at a table created after it.
 */
export function sortByDependencies (tables: TableData[]): TableData[] {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const sorted: TableData[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (table: TableData): void => {
    // 'visiting' again: an edge that closes a cycle; the key becomes a forward reference.
    if (state.has(table.name)) return
    state.set(table.name, 'visiting')
    for (const field of table.fields) {
      const target = field.foreignKey && field.foreignKey.table !== table.name ? byName.get(field.foreignKey.table) : undefined
      if (target) visit(target)
    }
    state.set(table.name, 'done')
    sorted.push(table)
  }
  for (const table of tables) visit(table)
  return sorted
}

/**
 * Fields of `table` whose foreign key references a table of `ordered` that comes after it: created
 * in that order, PostgreSQL adds these keys once every table exists (`addForeignKeySql`).
 */
export function forwardReferences (table: TableData, ordered: TableData[]): TableField[] {
  const position = new Map(ordered.map((t, i) => [t.name, i]))
  const own = position.get(table.name) ?? -1
  return table.fields.filter((f) => f.foreignKey !== undefined && (position.get(f.foreignKey.table) ?? -1) > own)
}

/** `ALTER TABLE ... ADD CONSTRAINT` with the foreign key `field` of `table` declares (same name and clauses as inline). */
export function addForeignKeySql (table: string, field: TableField): string {
  const inline = foreignKeyClause(table, field)
  const references = inline.slice(inline.indexOf(' REFERENCES '))
  return `ALTER TABLE ${quote(table)} ADD CONSTRAINT ${quote(constraintName(table, field.name, 'fkey'))} FOREIGN KEY (${quote(field.name)})${references}`
}
