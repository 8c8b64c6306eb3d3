// The kernel's realtime port: the hub (subscribers, delivery) and, on PostgreSQL, the bus between
// instances (LISTEN/NOTIFY) with the fleet's interest. Built after the migrations: the bus reads
// tables they create.
import { RealtimeHub } from '../realtime/hub.js'
import { PgBus } from '../realtime/pg-bus.js'
import { FleetInterest, RENEW_MS } from '../realtime/interest.js'
import { realtimeSettings } from '../realtime/settings.js'
import { postgresUrlParts } from '../dialects/postgres-connection.js'
import { ConfigError } from '../errors.js'
import type { Executor } from '../crud/context.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import type { Lifecycle } from './lifecycle.js'
import type { FastbaseRuntimeOptions, KernelLog } from './types.js'

export interface Realtime {
  hub: RealtimeHub
  bus?: PgBus
}

interface RealtimeInput {
  config: DatabaseSettings
  options: FastbaseRuntimeOptions
  /** Where the hub reads rows to evaluate rules and wheres (it never writes). */
  reader: Executor
  descriptors: Map<string, TableDescriptor>
  log: KernelLog
}

/** The hub and bus, or undefined when the config says `realtime: { enabled: false }`. */
export async function realtimePort ({ config, options, reader, descriptors, log }: RealtimeInput, life: Lifecycle): Promise<Realtime | undefined> {
  const { enabled, ...settings } = realtimeSettings(config.realtime)
  if (!enabled) return undefined
  const hub = new RealtimeHub(reader, descriptors, settings, log)
  // preClose, so `app.close()` never waits on a client.
  life.onPreClose(() => { hub.close() })
  if (!reader.dialect.sharedByInstances) return { hub }
  const bus = new PgBus(listenUrl(options.databaseUrl, options.databaseDirectUrl), { changes: (changes) => hub.enqueue(changes), gap: () => hub.gap(), revoked: (revoked) => hub.sessionsRevoked(revoked) }, log)
  await bus.start()
  life.onClose(async () => { await bus.close() })
  hub.forward = (changes) => bus.publish(changes)
  const interest = new FleetInterest(bus.origin, async (sql, params) => await bus.query(sql, params), async (sql, bindings) => reader.dialect.rawRows(await reader.db.raw(sql, bindings as never)), log)
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
  life.onClose(async () => {
    clearInterval(renew)
    await interest.withdraw()
  })
  return { hub, bus }
}

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
