// SQLite DDL: teenybase's upper-cased sqlType names (SQLite applies its own affinity rules to them).
import { createTableStatements, defaultSql, isCurrentTimestamp, type DdlSyntax, type MigrationSyntax, type SchemaDialect, type TriggerParts } from './ddl.js'
import type { TableField } from '../../schemas/config.js'
import { dropFtsStatements, ftsStatements } from './sqlite-fts.js'
import { quote } from './common.js'
import { searchIndexOf } from '../search/fts.js'

// `date` columns store `YYYY-MM-DD HH:MM:SS.SSS` UTC, the format the app writes; a bare
// CURRENT_TIMESTAMP default would store `YYYY-MM-DD HH:MM:SS` and sort/compare differently.
const NOW_MILLIS = "(strftime('%Y-%m-%d %H:%M:%f', 'now'))"

function columnType (field: TableField): string {
  // AUTOINCREMENT is only allowed on an `INTEGER PRIMARY KEY` column.
  return field.autoIncrement ? 'INTEGER' : field.sqlType.toUpperCase()
}

function trigger (p: TriggerParts): string[] {
  const of = p.updateOf.length > 0 ? ` OF ${p.updateOf.join(', ')}` : ''
  const when = p.when === undefined ? '' : ` WHEN ${p.when}`
  const body = p.body.map((s) => `  ${s};\n`).join('')
  return [`CREATE TRIGGER ${p.name} ${p.seq} ${p.event}${of} ON ${p.table} FOR EACH ROW${when} BEGIN\n${body}END`]
}

const syntax: DdlSyntax = {
  columnType,
  autoIncrement: 'PRIMARY KEY AUTOINCREMENT',
  bool: (value) => (value ? '1' : '0'),
  collate: (name) => (name === undefined ? undefined : `COLLATE ${name}`),
  specialDefault: (field, sql) => (field.type === 'date' && isCurrentTimestamp(sql) ? NOW_MILLIS : undefined),
  prerequisites: () => [],
  trigger,
  search: ftsStatements
}

// A constant SQLite may take as the default of an added column: a number, a string, NULL, TRUE/FALSE.
const CONSTANT = /^(?:[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?|'(?:[^']|'')*'|NULL|TRUE|FALSE)$/i

// SQLite's ALTER TABLE renames a table or a column and adds a plain column; anything else rebuilds the
// table (lib/db/migration-plan.ts#rebuildSql). Constraints have no names of their own to follow a
// rename, and an index or a virtual table's shadow tables cannot be renamed: they are made anew.
const migration: MigrationSyntax = {
  renamesConstraints: false,
  foreignKeyTakesReferencedType: false,
  foreignKeyNeedsTable: false,
  rebuildsTables: true,
  // ADD COLUMN refuses a PRIMARY KEY or UNIQUE column, a non-constant default and NOT NULL without a default.
  addsColumnInPlace: (field, defaultSql) =>
    !(field.primary === true || field.autoIncrement === true || field.unique === true || (field.notNull === true && field.default === undefined) || !CONSTANT.test(defaultSql.trim())),
  search: ftsStatements,
  // The FTS5 table is the only layout SQLite has had.
  searchFormat: 1,
  dropSearch: dropFtsStatements,
  renameSearch: (table, renamed) => [...dropFtsStatements(table), ...ftsStatements(renamed)],
  dropTrigger: (_table, name) => [`DROP TRIGGER IF EXISTS ${quote(name)}`],
  dropTable: (table) => [...(searchIndexOf(table) !== undefined ? dropFtsStatements(table.name) : []), `DROP TABLE ${quote(table.name)}`]
}

export const sqliteDdl: SchemaDialect = {
  name: 'sqlite',
  createTable: (table, tables, omitForeignKeys) => createTableStatements(table, tables, syntax, 'sqlite', omitForeignKeys),
  columnDefault: (field) => field.default === undefined ? undefined : defaultSql(field, field.default, syntax),
  columnType,
  // A write as the first statement of a transaction takes SQLite's write lock up front (like
  // BEGIN IMMEDIATE, which Knex cannot issue), waiting up to busy_timeout for another writer.
  // The table never outlives the transaction.
  schemaLock: () => ['CREATE TABLE "_fastbase_lock" ("id" INTEGER)', 'DROP TABLE "_fastbase_lock"'],
  // Registered on each connection instead (sqlite-connection.ts).
  functions: [],
  tablesSql: "SELECT name FROM sqlite_master WHERE type = 'table'",
  schemaChangeTransaction: { enforceForeignCheck: false },
  // No statement timeout to lift: a SQLite statement runs to its end.
  longWork: [],
  migration
}
