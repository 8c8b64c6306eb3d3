// Makes the database follow the config on start (decisions D21, D32): registered after every plugin
// that compiles part of the config (tables and their rules, auth, actions, files), so a config with
// a bad rule or action fails before any DDL runs.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'

const schema: FastifyPluginAsync = async (app) => {
  try {
    await app.fastbase.schema.migrate('start')
  } catch (err) {
    // The app never becomes ready, so onClose would not release the pool.
    await app.fastbase.schema.closeDatabase()
    throw err
  }
}

export default fp(schema, {
  fastify: '5.x',
  name: 'fastbase-schema',
  dependencies: ['fastbase-database', 'fastbase-tables', 'fastbase-auth', 'fastbase-actions', 'fastbase-files']
})
