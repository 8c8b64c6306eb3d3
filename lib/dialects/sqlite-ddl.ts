// SQLite DDL: teenybase's upper-cased sqlType names (SQLite applies its own affinity rules to them).
import { createTableStatements, isCurrentTimestamp, type DdlSyntax, type SchemaDialect, type TriggerParts } from './ddl.js'
import type { TableField } from '../../schemas/config.js'
import { dropFtsStatements, ftsStatements } from './sqlite-fts.js'

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

export const sqliteDdl: SchemaDialect = {
  createTable: (table, tables, omitForeignKeys) => createTableStatements(table, tables, syntax, 'sqlite', omitForeignKeys),
  columnType,
  // A write as the first statement of a transaction takes SQLite's write lock up front (like
  // BEGIN IMMEDIATE, which Knex cannot issue), waiting up to busy_timeout for another writer.
  // The table never outlives the transaction.
  schemaLock: () => ['CREATE TABLE "_fastbase_lock" ("id" INTEGER)', 'DROP TABLE "_fastbase_lock"'],
  // Registered on each connection instead (sqlite-connection.ts).
  functions: [],
  tablesSql: "SELECT name FROM sqlite_master WHERE type = 'table'",
  schemaChangeTransaction: { enforceForeignCheck: false },
  // The FTS5 table is the only layout SQLite has had.
  searchFormat: 1,
  dropSearch: dropFtsStatements
}
