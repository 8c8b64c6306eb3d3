// fastbase's own tables, all of them: each concern's, declared beside its code (auth state in
// lib/auth/stores/store-tables.ts, rate limits in lib/auth/stores/rate-limit-store.ts, realtime interest in
// lib/realtime/interest.ts), and those for running in production, declared here: which instances
// are alive (a restore refuses while one is) and which scheduled job ran when (one instance of a fleet
// claims each run). Times are epoch seconds of the writer's clock.
import type { DatabaseSettings, TableData } from '../../schemas/config.js'
import { dialectFor, type DialectName } from '../dialects/index.js'
import { authStoreTables } from '../auth/stores/store-tables.js'
import { rateLimitTable } from '../auth/stores/rate-limit-store.js'
import { realtimeInterestTable } from '../realtime/interest.js'
import { epoch, text } from '../db/internal-columns.js'

export const INSTANCES_TABLE = '_fastbase_instances'
export const JOBS_TABLE = '_fastbase_jobs'

export const operationsTables: TableData[] = [
  {
    // One row per running instance, refreshed every few seconds and removed on a clean stop.
    name: INSTANCES_TABLE,
    fields: [text('id', { primary: true, notNull: true }), text('host', { notNull: true }), epoch('pid'), epoch('started_at'), epoch('seen_at')]
  },
  {
    // One row per job: the last schedule slot an instance claimed, and when the job last succeeded.
    name: JOBS_TABLE,
    fields: [text('name', { primary: true, notNull: true }), text('slot', { notNull: true }), text('instance', { notNull: true }), epoch('claimed_at'), epoch('succeeded_at', false)]
  }
]

/** The auth state's tables, where some table of `config` has the auth extension or admin sign-in needs a second factor (decision D118). */
export function authTablesFor (config: Pick<DatabaseSettings, 'tables' | 'admin'>): TableData[] {
  return config.tables.some((t) => t.extensions?.some((e) => e.name === 'auth')) || config.admin?.requireMfa === true ? authStoreTables : []
}

/**
 * fastbase's own tables a database holds for `config`: the auth state where some table has the auth
 * extension; where several instances share the database (PostgreSQL), the rate-limit counters they
 * all count in (unless `rateLimit: false`; else each process counts in memory) and the realtime
 * interest; always, the operations tables.
 */
export function internalTablesFor (config: DatabaseSettings, dialect: DialectName): TableData[] {
  const shared = dialectFor(dialect).sharedByInstances
  const auth = authTablesFor(config)
  const counters = shared && config.rateLimit !== false ? [rateLimitTable] : []
  const realtime = shared && config.realtime?.enabled !== false ? [realtimeInterestTable] : []
  return [...auth, ...counters, ...realtime, ...operationsTables]
}
