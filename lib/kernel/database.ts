// The kernel's database: one Knex instance per app (better-sqlite3 by default, pg for postgres://),
// the dialect, and the schema service that makes the database follow the config (lib/db/migrations.ts;
// the kernel runs it once everything is compiled). Knex is destroyed when the app closes.
import type { Knex } from 'knex'
import { migrate, migrationStatus, projectOf, type MigrationDatabase } from '../db/migrations.js'
import { connect, dialectFor, schemaDialect } from '../dialects/index.js'
import type { Connection } from '../dialects/connection.js'
import type { Dialect } from '../dialects/types.js'
import { internalTablesFor } from '../internal/internal-tables.js'
import { poolerTimeoutWarning } from '../dialects/postgres-connection.js'
import { liveInstances } from '../backup/liveness.js'
import type { Lifecycle } from './lifecycle.js'
import type { LoadedConfig } from './config.js'
import type { KernelLog, SchemaService } from './types.js'

export interface Database {
  connection: Connection
  dialect: Dialect
  schema: SchemaService
}

export async function openDatabase ({ config, options, limits }: LoadedConfig, log: KernelLog, life: Lifecycle): Promise<Database> {
  const { databaseUrl, dataDir } = options
  const connection = connect(databaseUrl, dataDir, { statementTimeout: limits.statementTimeout })
  life.onClose(connection.close)
  await connection.prepare()
  const warning = await poolerTimeoutWarning(connection, databaseUrl)
  if (warning !== undefined) log.warn(warning)
  const { knex, dialectName } = connection
  const target: MigrationDatabase = { knex, ddl: schemaDialect(dialectName), dialect: dialectName, log }
  const tables = () => [...internalTablesFor(config, dialectName), ...config.tables]
  // Read under the schema lock, before this instance's own heartbeat starts (lib/kernel/backups.ts).
  const instancesAlive = async (db: Knex.Transaction): Promise<boolean> => (await liveInstances(db)).length > 0
  const schema: SchemaService = {
    migrate: async (mode, allow = {}) => await migrate(target, tables(), { mode, autoMigrate: config.autoMigrate, project: projectOf(config), instancesAlive, ...allow }),
    status: async () => await migrationStatus(target, tables(), projectOf(config))
  }
  return { connection, dialect: dialectFor(dialectName), schema }
}
