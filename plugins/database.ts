// The database plugin: one Knex instance per app (better-sqlite3 by default, pg for postgres://),
// the dialect helpers, and the schema service that makes the database follow the config
// (lib/db/migrations.ts; run once everything is validated, by plugins/schema.ts). Knex is destroyed
// when the app closes.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import type { Knex } from 'knex'
import { migrate, migrationStatus, projectOf, type MigrationDatabase } from '../lib/db/migrations.js'
import { connect, dialectFor, schemaDialect } from '../lib/dialects/index.js'
import { internalTablesFor } from '../lib/internal/tables.js'
import { poolerTimeoutWarning } from '../lib/dialects/postgres-connection.js'
import { liveInstances } from '../lib/backup/liveness.js'

const database: FastifyPluginAsync = async (app) => {
  const { databaseUrl, dataDir } = app.fastbase.options
  const connection = connect(databaseUrl, dataDir, { statementTimeout: app.fastbase.limits.statementTimeout })
  const { knex, dialectName } = connection
  try {
    await connection.prepare()
  } catch (err) {
    // The app never becomes ready, so onClose would not release the pool.
    await connection.close()
    throw err
  }
  const warning = await poolerTimeoutWarning(connection, databaseUrl)
  if (warning !== undefined) app.log.warn(warning)
  const { config } = app.fastbase
  const target: MigrationDatabase = { knex, ddl: schemaDialect(dialectName), dialect: dialectName, log: app.log }
  const tables = () => [...internalTablesFor(config, dialectName), ...config.tables]
  // Read under the schema lock, before this instance's own heartbeat starts (plugins/backups.ts).
  const instancesAlive = async (db: Knex.Transaction): Promise<boolean> => (await liveInstances(db)).length > 0
  app.fastbase.schema = {
    migrate: async (mode, allow = {}) => await migrate(target, tables(), { mode, autoMigrate: config.autoMigrate, project: projectOf(config), instancesAlive, ...allow }),
    status: async () => await migrationStatus(target, tables(), projectOf(config)),
    closeDatabase: connection.close
  }
  app.fastbase.db = knex
  app.fastbase.dialect = dialectFor(dialectName)
  app.fastbase.executor = { db: knex, dialect: app.fastbase.dialect, limits: app.fastbase.limits, direct: connection.direct }
  app.addHook('onClose', connection.close)
}

export default fp(database, { fastify: '5.x', name: 'fastbase-database', dependencies: ['fastbase-config'] })
