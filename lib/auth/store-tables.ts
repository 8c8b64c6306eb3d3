// fastbase's own tables for auth state. They live in the database (not in process memory) so every
// instance sharing it sees the same sessions and one-time tokens. Times are epoch seconds.
import type { TableData } from '../../schemas/config.js'
import { epoch, text } from '../db/internal-columns.js'

export const SESSIONS = '_fastbase_sessions'
export const REFRESH_TOKENS = '_fastbase_refresh_tokens'
export const ONE_TIME_TOKENS = '_fastbase_tokens'
export const IDENTITIES = '_fastbase_identities'
export const OAUTH_STATES = '_fastbase_oauth_states'

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
