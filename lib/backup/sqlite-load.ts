// Loading a SQLite archive's rows into the database fastbase made from the config (decision D86).
// The archive is attached, never opened as the database: its triggers, views and defaults never run,
// and with `trusted_schema` off whatever its schema computes on a read may call no function with side
// effects. Rows go in table by table with the config's triggers set aside (they ran when the rows were
// first written; the search index's stay, so it is rebuilt from the rows), foreign keys are checked
// once every row is in.
import Database from 'better-sqlite3'
import { MIGRATIONS_TABLE } from '../db/migrations.js'
import { errors } from '../errors.js'
import { columnsToLoad, tablesToLoad, type MadeTable } from './copy-plan.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

/** Ordinary tables of one attached database (FTS5's shadow tables are not ordinary). */
function tablesOf (db: Database.Database, schema: string): string[] {
  return db.prepare<[string], string>("SELECT name FROM pragma_table_list WHERE schema = ? AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all(schema)
}

/** A table's columns; `hidden` 2 and 3 are generated, 1 a virtual table's hidden column. */
function columnsOf (db: Database.Database, schema: string, table: string): MadeTable {
  const rows = db.prepare<[string, string], { name: string, hidden: number }>('SELECT name, hidden FROM pragma_table_xinfo(?, ?)').all(table, schema)
  return { columns: rows.filter((r) => r.hidden !== 1).map((r) => r.name), generated: rows.filter((r) => r.hidden >= 2).map((r) => r.name) }
}

/**
 * Loads the rows of `archiveFile` into the database at `made`; answers the rows loaded per table.
 * `declared`: the tables the config makes; `configTriggers`: the names of the triggers it makes.
 */
export function loadSqliteRows (made: string, archiveFile: string, declared: string[], configTriggers: Set<string>): Record<string, number> {
  const db = new Database(made, { fileMustExist: true })
  try {
    db.pragma('trusted_schema = OFF')
    db.pragma('foreign_keys = OFF')
    db.prepare('ATTACH DATABASE ? AS archive').run(archiveFile)
    const load = tablesToLoad(tablesOf(db, 'archive'), declared, new Set(tablesOf(db, 'main')))
    const triggers = db.prepare<[], { name: string, sql: string }>("SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger'").all().filter((t) => configTriggers.has(t.name))
    const loaded: Record<string, number> = {}
    db.transaction(() => {
      for (const trigger of triggers) db.exec(`DROP TRIGGER main.${quote(trigger.name)}`)
      for (const table of load) {
        const columns = columnsToLoad(table, columnsOf(db, 'archive', table).columns, columnsOf(db, 'main', table)).map(quote).join(', ')
        // The new database recorded its own first migration; the archive's record is the history of its rows.
        if (table === MIGRATIONS_TABLE) db.exec(`DELETE FROM main.${quote(table)}`)
        loaded[table] = db.prepare(`INSERT INTO main.${quote(table)} (${columns}) SELECT ${columns} FROM archive.${quote(table)}`).run().changes
      }
      for (const trigger of triggers) db.exec(trigger.sql)
      const broken = db.prepare<[], { table: string, rowid: number }>('PRAGMA main.foreign_key_check').all()
      if (broken.length > 0) throw errors.badArchive(`${broken.length} row(s) reference a missing row (first: table ${broken[0].table}, rowid ${broken[0].rowid})`)
    })()
    db.exec('DETACH DATABASE archive')
    return loaded
  } finally {
    db.close()
  }
}
