// Record hooks (lib/crud/record-hooks.ts): `app.fastbase.hooks.on(table, event, fn)`. The registry is the
// executor's change sink (realtime, when on, shares it: plugins/realtime.ts) and its hook list, so
// every write made through the executor meets its hooks; the auth flows report sign-ups and
// sign-ins to it (plugins/auth.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { RecordHooks } from '../lib/crud/record-hooks.js'
import type { Hooks } from './types.js'

async function hooks (app: FastifyInstance): Promise<void> {
  const { descriptors, executor } = app.fastbase
  const tables = new Set(descriptors.keys())
  const authTables = new Set([...descriptors.values()].filter((d) => d.auth !== undefined).map((d) => d.name))
  const registry = new RecordHooks(tables, authTables, app.log)
  executor.hooks = registry
  executor.changes = registry
  // The registry takes any hook; the declared type checks each event's argument for its table.
  app.fastbase.hooks = registry as unknown as Hooks
}

export default fp(hooks, { name: 'fastbase-hooks', dependencies: ['fastbase-tables'] })
