// The database plugin: one Knex instance per app (better-sqlite3 by default, pg for postgres://),
// the dialect helpers, and the start-up schema sync. Knex is destroyed when the app closes.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { syncSchema } from '../lib/db/schema-sync.js'
import { connect, dialectFor, schemaDialect } from '../lib/dialects/index.js'
import { authStoreTables } from '../lib/auth/store-tables.js'

const database: FastifyPluginAsync = async (app) => {
  const { databaseUrl, dataDir } = app.fastbase.options
  const connection = connect(databaseUrl, dataDir)
  const { knex, dialectName } = connection
  try {
    await connection.prepare()
    // Session and one-time-token tables exist only where some table has the auth extension.
    const needsAuthStore = app.fastbase.config.tables.some((t) => t.extensions?.some((e) => e.name === 'auth'))
    // Also run by `POST /setup-db` (routes/admin.ts), which recreates tables dropped since.
    app.fastbase.syncSchema = async () => await syncSchema(knex, schemaDialect(dialectName), app.fastbase.config, app.log, { internalTables: needsAuthStore ? authStoreTables : [] })
    await app.fastbase.syncSchema()
  } catch (err) {
    // The app never becomes ready, so onClose would not release the pool.
    await connection.close()
    throw err
  }
  app.fastbase.db = knex
  app.fastbase.dialect = dialectFor(dialectName)
  app.fastbase.executor = { db: knex, dialect: app.fastbase.dialect, limits: app.fastbase.limits, direct: connection.direct }
  app.addHook('onClose', connection.close)
}

export default fp(database, { fastify: '5.x', name: 'fastbase-database', dependencies: ['fastbase-config'] })
