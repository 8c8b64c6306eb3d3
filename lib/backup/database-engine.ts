// What a backup needs of a database, per kind (sqlite-engine.ts, postgres-engine.ts implement it):
// a consistent snapshot into one file of the archive, and a restore that loads the archive's rows
// into a database fastbase makes from the config (decision D86), checks it, and only then lets it take
// the old one's place, keeping the old one.
import type { Knex } from 'knex'
import type { TableData } from '../../schemas/config.js'
import type { DialectName } from '../dialects/types.js'
import { schemaDialect } from '../dialects/index.js'
import { migrate } from '../db/migrations.js'
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
   * Makes a new database from `schema`, loads the rows of `file` into it as data, and puts it in the
   * target's place once its rows and schema version are the manifest's; the target's own is kept
   * aside, never deleted. Throws, with the target untouched, when a check fails.
   */
  restore: (target: EngineTarget, file: string, manifest: Manifest, schema: RestoreSchema) => Promise<RestoredDatabase>
  /** Holds off every other restore of the target's database until the answer is called; FB_ERR_RESTORE_REFUSED while one runs. */
  lock: (target: EngineTarget) => Promise<() => Promise<void>>
}

/** What a restore makes the new database from: the config's tables and fastbase's own, and the config's project. */
export interface RestoreSchema { tables: TableData[], project: string }

/** Makes the schema of `schema` in the empty database of `knex`, as a first start would. */
export async function makeSchema (knex: Knex, dialect: DialectName, schema: RestoreSchema): Promise<void> {
  const log = { info: () => {}, warn: () => {} }
  await migrate({ knex, ddl: schemaDialect(dialect), dialect, log }, schema.tables, { mode: 'setup', project: schema.project })
}

