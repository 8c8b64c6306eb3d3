// fastbase's own tables for auth state. They live in the database (not in process memory) so every
// instance sharing it sees the same sessions, one-time tokens and (PostgreSQL) rate-limit counters.
// Times are epoch seconds, except the rate limits' database-clock timestamps.
import type { TableData } from '../../schemas/config.js'
import { INTEREST_TABLE } from '../realtime/interest.js'

export const SESSIONS = '_fastbase_sessions'
export const REFRESH_TOKENS = '_fastbase_refresh_tokens'
export const ONE_TIME_TOKENS = '_fastbase_tokens'
export const RATE_LIMITS = '_fastbase_rate_limits'
export const IDENTITIES = '_fastbase_identities'
export const OAUTH_STATES = '_fastbase_oauth_states'

/** Columns of fastbase's own tables: text, and epoch seconds. */
export const text = (name: string, extra: object = {}) => ({ name, type: 'text' as const, sqlType: 'text' as const, ...extra })
export const epoch = (name: string, notNull = true) => ({ name, type: 'integer' as const, sqlType: 'integer' as const, notNull })

export const authStoreTables: TableData[] = [
  {
    name: SESSIONS,
    fields: [
      text('id', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('user_id', { notNull: true }),
      { name: 'refresh_count', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
      epoch('created_at'),
      epoch('expires_at'),
      epoch('revoked_at', false)
    ],
    // expires_at: the purge finds expired sessions without a full scan.
    indexes: [{ fields: ['table_name', 'user_id'] }, { fields: ['expires_at'] }]
  },
  {
    // Every refresh token ever issued, by hash: a used one presented again is a replay, and revokes its session.
    name: REFRESH_TOKENS,
    fields: [
      text('hash', { primary: true, notNull: true }),
      text('session_id', { notNull: true, foreignKey: { table: SESSIONS, column: 'id', onDelete: 'CASCADE' } }),
      epoch('created_at'),
      epoch('used_at', false)
    ],
    indexes: [{ fields: ['session_id'] }]
  },
  {
    // Email verification and password reset tokens, stored hashed, single use.
    name: ONE_TIME_TOKENS,
    fields: [
      text('hash', { primary: true, notNull: true }),
      text('kind', { notNull: true }),
      text('table_name', { notNull: true }),
      text('user_id', { notNull: true }),
      text('email'),
      epoch('created_at'),
      epoch('expires_at')
    ],
    indexes: [{ fields: ['kind', 'table_name', 'user_id'] }, { fields: ['expires_at'] }]
  },
  {
    // Which external account (provider, subject) is which user: the same account always signs in as
    // the same user, whatever its email does later (decision D34).
    name: IDENTITIES,
    fields: [
      text('id', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('provider', { notNull: true }),
      text('subject', { notNull: true }),
      text('user_id', { notNull: true }),
      text('email'),
      text('data'),
      epoch('created_at'),
      epoch('last_used_at')
    ],
    indexes: [{ fields: ['table_name', 'provider', 'subject'], unique: true }, { fields: ['table_name', 'user_id'] }]
  },
  {
    // OAuth states already used (lib/auth/oauth-used-states.ts). A state is signed and carries its own
    // expiry, so only its id is kept, until the purge.
    name: OAUTH_STATES,
    fields: [text('id', { primary: true, notNull: true }), epoch('expires_at')],
    indexes: [{ fields: ['expires_at'] }]
  }
]

/**
 * Rate-limit counters, one row per route and caller (lib/auth/rate-limit-store.ts). PostgreSQL only:
 * a SQLite file has one process, which counts in memory. Created by plugins/auth.ts, whether or not a
 * table has the auth extension (admin sign-in is limited too).
 */
export const rateLimitTable: TableData = {
  name: RATE_LIMITS,
  fields: [
    text('key', { primary: true, notNull: true }),
    { name: 'hits', type: 'integer', sqlType: 'integer', notNull: true },
    { name: 'reset_at', type: 'date', sqlType: 'timestamp', notNull: true }
  ],
  indexes: [{ fields: ['reset_at'] }]
}

/**
 * Which instance has realtime subscribers for which table (lib/realtime/interest.ts). PostgreSQL
 * only: instances send changes to each other only for tables someone subscribes to.
 */
export const realtimeInterestTable: TableData = {
  name: INTEREST_TABLE,
  fields: [
    text('key', { primary: true, notNull: true }),
    text('instance', { notNull: true }),
    text('table_name', { notNull: true }),
    { name: 'expires_at', type: 'date', sqlType: 'timestamp', notNull: true }
  ],
  indexes: [{ fields: ['table_name'] }]
}
