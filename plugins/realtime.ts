// Realtime subscriptions (docs/realtime.md): the hub (lib/realtime/hub.ts) is the executor's change
// sink, so every write made through fastbase is reported to it after its commit; on PostgreSQL a
// LISTEN/NOTIFY bus (lib/realtime/pg-bus.ts) carries changes between the instances sharing the
// database. app.ts registers its routes (routes/realtime.ts) when the hub is set. Streams end before
// the app closes (preClose), so `app.close()` never waits on a client.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import type {} from './types.js'
import { RealtimeHub } from '../lib/realtime/hub.js'
import { bothSinks } from '../lib/crud/record-hooks.js'
import { PgBus } from '../lib/realtime/pg-bus.js'
import { FleetInterest, RENEW_MS } from '../lib/realtime/interest.js'
import { realtimeSettings } from '../lib/realtime/settings.js'
import { postgresUrlParts } from '../lib/dialects/postgres-connection.js'
import { ConfigError } from '../lib/errors.js'

declare module './types.js' {
  interface Fastbase {
    /** Realtime subscriptions; unset when the config says `realtime: { enabled: false }`. */
    realtime?: RealtimeHub
    /** The PostgreSQL bus between instances (tests break its connection). */
    realtimeBus?: PgBus
  }
}

const realtime: FastifyPluginAsync = async (app) => {
  const { config, executor, descriptors: tables, options } = app.fastbase
  const { enabled, ...settings } = realtimeSettings(config.realtime)
  if (!enabled) return
  const hub = new RealtimeHub(executor, tables, settings, app.log)
  if (executor.dialect.sharedByInstances) {
    const bus = new PgBus(listenUrl(options.databaseUrl, options.databaseDirectUrl), { changes: (changes) => hub.enqueue(changes), gap: () => hub.gap(), revoked: (revoked) => hub.sessionsRevoked(revoked) }, app.log)
    await bus.start()
    hub.forward = (changes) => bus.publish(changes)
    const interest = new FleetInterest(bus.origin, async (sql, params) => await bus.query(sql, params), async (sql, bindings) => executor.dialect.rawRows(await executor.db.raw(sql, bindings as never)), app.log)
    bus.interest = interest
    hub.fleet = {
      mayWant: (table) => interest.mayWant(table),
      nobodyElse: (table) => interest.nobodyElse(table),
      missedBySomeone: async (table) => await interest.missedBySomeone(table),
      gap: () => bus.publishGap()
    }
    hub.announce = async (tables) => { await interest.announce(tables) }
    const renew = setInterval(() => { void interest.renewAll(hub.subscribedTables()) }, RENEW_MS)
    renew.unref()
    app.fastbase.auth.sessions.onRevoked((revoked) => bus.publishRevoked(revoked))
    app.fastbase.realtimeBus = bus
    app.addHook('onClose', async () => {
      clearInterval(renew)
      await interest.withdraw()
      await bus.close()
    })
  }
  // The record hooks' after-hooks hear the same committed changes.
  executor.changes = executor.changes === undefined ? hub : bothSinks(executor.changes, hub)
  app.fastbase.auth.sessions.onRevoked((revoked) => hub.sessionsRevoked(revoked))
  app.fastbase.realtime = hub
  app.addHook('preClose', (done) => { hub.close(); done() })
}

export default fp(realtime, { fastify: '5.x', name: 'fastbase-realtime', dependencies: ['fastbase-auth-context'] })

/**
 * The URL of the bus's LISTEN connection: the database's own, or behind a transaction-mode pooler,
 * which cannot carry a LISTEN (a session's), the direct one (decision D102).
 */
function listenUrl (databaseUrl: string, directUrl: string | undefined): string {
  if (directUrl !== undefined) {
    if (postgresUrlParts(directUrl).pooler) throw new ConfigError(['DATABASE_DIRECT_URL: the direct URL must not go through the pooler (remove ?pooler=transaction)'])
    return directUrl
  }
  if (!postgresUrlParts(databaseUrl).pooler) return databaseUrl
  throw new ConfigError(['realtime behind a transaction-mode pooler (?pooler=transaction in DATABASE_URL) needs DATABASE_DIRECT_URL: a direct URL of the same database, for the LISTEN connection between instances (a pooler cannot carry LISTEN); or turn realtime off with realtime: { enabled: false }'])
}
