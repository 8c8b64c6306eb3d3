// What a backup needs of a database, per kind (sqlite-engine.ts, postgres-engine.ts implement it):
// a consistent snapshot into one file of the archive, and a restore that checks the new database
// before it takes the old one's place and keeps the old one.
import type { Knex } from 'knex'
import type { Manifest } from './manifest.js'
import type { DatabaseFacts } from './sqlite-inspect.js'

export interface EngineTarget {
  databaseUrl: string
  /** An open connection to the database (the server's own, or the command's). */
  knex: Knex
}

export interface Snapshot extends DatabaseFacts {
  /** PostgreSQL: the schema dumped. */
  schemaName?: string
}

export interface RestoredDatabase {
  /** Where the database it replaced is kept (a file, or a PostgreSQL schema); undefined when there was none. */
  keptAt: string | undefined
  /** Puts the replaced database back (the new one is discarded). */
  rollback: () => Promise<void>
}

export interface DatabaseEngine {
  /** The database's name inside the archive. */
  entry: string
  snapshot: (target: EngineTarget, file: string) => Promise<Snapshot>
  /**
   * Puts the database of `file` in the target's place once it passes its checks (integrity, schema
   * version and rows as the manifest says, then `verify` on a connection to it); the target's own is
   * kept aside, never deleted. Throws, with the target untouched, when a check fails.
   */
  restore: (target: EngineTarget, file: string, manifest: Manifest, verify: (knex: Knex) => Promise<void>) => Promise<RestoredDatabase>
}

/** Differences between what a database holds and what its manifest says (empty when they agree). */
export function factsMismatch (facts: DatabaseFacts, manifest: Manifest): string[] {
  const problems: string[] = []
  if (facts.schema.migrations !== manifest.schema.migrations || facts.schema.last !== manifest.schema.last) {
    problems.push(`schema version: the database has ${facts.schema.migrations} migrations (last ${facts.schema.last ?? 'none'}), the manifest says ${manifest.schema.migrations} (last ${manifest.schema.last ?? 'none'})`)
  }
  const names = new Set([...Object.keys(facts.tables), ...Object.keys(manifest.tables)])
  for (const name of [...names].sort()) {
    if (facts.tables[name] !== manifest.tables[name]) problems.push(`table ${name}: ${facts.tables[name] ?? 'missing'} rows, the manifest says ${manifest.tables[name] ?? 'no such table'}`)
  }
  return problems.slice(0, 10)
}
