// Compiles every table's descriptor once at start-up; bad rules stop the start with their paths (and
// what is worth a warning was said by the config's checks, lib/config/warnings.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { describeTables } from '../lib/table/descriptor.js'

async function tables (app: FastifyInstance): Promise<void> {
  app.fastbase.descriptors = describeTables(app.fastbase.config.tables, app.fastbase.dialect)
}

export default fp(tables, { name: 'fastbase-tables', dependencies: ['fastbase-database'] })
