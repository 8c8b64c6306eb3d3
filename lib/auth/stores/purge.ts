// Deletes auth rows nothing can use any more: expired sessions with their refresh tokens, expired
// one-time tokens (used ones are deleted when used), used OAuth states, and rate-limit counters whose window has passed.
// In batches, so no statement holds its locks for long. Safe from several instances at once: each batch
// re-checks its condition on the rows it deletes, so a row another instance changed meanwhile (a hit
// starting a new rate-limit window) is left alone, and a row another instance deleted counts once.
import type { Knex } from 'knex'
import { SESSIONS, REFRESH_TOKENS, ONE_TIME_TOKENS, OAUTH_STATES, EMAIL_CODES, MFA_CHALLENGES } from './store-tables.js'
import { RATE_LIMITS } from './rate-limit-store.js'
import { nowSeconds } from './sessions.js'
import { schemaDialectOf } from '../../dialects/index.js'

/**
 * How long sessions and one-time tokens are kept past their expiry. Nothing accepts them then, but
 * the resend gap of verification and reset emails reads the last token's created_at, and instances'
 * clocks may differ a little: a day covers both.
 */
export const KEEP_EXPIRED_FOR = 24 * 3600

export const PURGE_BATCH = 1000

type Condition = (query: Knex.QueryBuilder) => Knex.QueryBuilder

interface Purge { table: string, key: string, expired: Condition }

function purges (knex: Knex): Purge[] {
  const cutoff = nowSeconds() - KEEP_EXPIRED_FOR
  const expiredSessions: Condition = (q) => q.where('expires_at', '<=', cutoff)
  return [
    // A session's expires_at is also its refresh deadline (every refresh moves it), so an expired
    // session can neither be used nor refreshed. Its refresh tokens go first, in batches of their
    // own, rather than all at once through ON DELETE CASCADE.
    { table: REFRESH_TOKENS, key: 'hash', expired: (q) => q.whereIn('session_id', expiredSessions(knex(SESSIONS).select('id'))) },
    // Revoked sessions too: they are kept until their expiry like the others.
    { table: SESSIONS, key: 'id', expired: expiredSessions },
    { table: ONE_TIME_TOKENS, key: 'hash', expired: (q) => q.where('expires_at', '<=', cutoff) },
    // A used OAuth state is refused by its own signed expiry once past it; the margin covers clock skew.
    { table: OAUTH_STATES, key: 'id', expired: (q) => q.where('expires_at', '<=', cutoff) },
    // Email codes' created_at is the resend gap's too (lib/auth/email/email-codes.ts); a challenge is only its expiry.
    { table: EMAIL_CODES, key: 'hash', expired: (q) => q.where('expires_at', '<=', cutoff) },
    { table: MFA_CHALLENGES, key: 'hash', expired: (q) => q.where('expires_at', '<=', cutoff) },
    // The database's clock, as the counters use it (PostgreSQL only: the table exists nowhere else).
    { table: RATE_LIMITS, key: 'key', expired: (q) => q.where('reset_at', '<=', knex.raw('CURRENT_TIMESTAMP')) }
  ]
}

async function deleteInBatches (knex: Knex, { table, key, expired }: Purge, batch: number): Promise<number> {
  // Each batch lifts the statement timeout callers run under (where there is one): a slow database
  // delays the purge, it must not cancel it.
  const { longWork } = schemaDialectOf(knex)
  let total = 0
  for (;;) {
    const deleted = await knex.transaction(async (trx): Promise<number> => {
      for (const statement of longWork) await trx.raw(statement)
      return await expired(trx(table)).whereIn(key, expired(trx(table).select(key)).limit(batch)).del()
    })
    total += deleted
    if (deleted < batch) return total
  }
}

/** Rows deleted per table; tables this database does not have (no auth table, SQLite) are skipped. */
export async function purgeExpired (knex: Knex, batch = PURGE_BATCH): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {}
  for (const purge of purges(knex)) {
    if (await knex.schema.hasTable(purge.table)) deleted[purge.table] = await deleteInBatches(knex, purge, batch)
  }
  return deleted
}
