// The database engine of each dialect (database-engine.ts says what one does): the one place
// backups branch on the dialect.
import type { DialectName } from '../dialects/types.js'
import type { DatabaseEngine } from './database-engine.js'
import { sqliteEngine } from './sqlite-engine.js'
import { postgresEngine } from './postgres-engine.js'

export type { DatabaseEngine, EngineTarget, RestoredDatabase, Snapshot } from './database-engine.js'

const engines: Record<DialectName, DatabaseEngine> = { sqlite: sqliteEngine, postgres: postgresEngine }

export function engineFor (dialect: DialectName): DatabaseEngine {
  return engines[dialect]
}
