// What a SQLite database file holds, for a backup's manifest and a restore's checks: its integrity,
// its schema version (fastbase's migration record) and its rows per table. Synchronous (better-sqlite3):
// run in the snapshot thread, or by a restore, which has the process to itself.
import type { Database } from 'better-sqlite3'
import { MIGRATIONS_TABLE } from '../db/migrations.js'

export interface DatabaseFacts {
  schema: { migrations: number, last: string | null }
  tables: Record<string, number>
}

/** `PRAGMA integrity_check`'s problems (empty when the file is sound). */
export function integrityProblems (db: Database): string[] {
  const rows = db.prepare<[], string>('PRAGMA integrity_check').pluck().all()
  return rows.length === 1 && rows[0] === 'ok' ? [] : rows.slice(0, 10)
}

export function sqliteFacts (db: Database): DatabaseFacts {
  // Ordinary tables only: FTS5's shadow tables are counted through the tables they index.
  const names = db.prepare<[], string>("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all()
  const tables: Record<string, number> = {}
  for (const name of names) tables[name] = Number(db.prepare(`SELECT count(*) FROM "${name.replace(/"/g, '""')}"`).pluck().get())
  const schema = names.includes(MIGRATIONS_TABLE)
    ? db.prepare<[], DatabaseFacts['schema']>(`SELECT count(*) AS migrations, (SELECT name FROM "${MIGRATIONS_TABLE}" ORDER BY id DESC LIMIT 1) AS last FROM "${MIGRATIONS_TABLE}"`).get()
    : undefined
  return { schema: { migrations: Number(schema?.migrations ?? 0), last: schema?.last ?? null }, tables }
}
