// fastbase's own tables for auth state. They live in the database (not in process memory) so every
// instance sharing it sees the same sessions and one-time tokens. Times are epoch seconds.
import type { TableData } from '../../schemas/config.js'

export const SESSIONS = '_fastbase_sessions'
export const REFRESH_TOKENS = '_fastbase_refresh_tokens'
export const ONE_TIME_TOKENS = '_fastbase_tokens'

const text = (name: string, extra: object = {}) => ({ name, type: 'text' as const, sqlType: 'text' as const, ...extra })
const epoch = (name: string, notNull = true) => ({ name, type: 'integer' as const, sqlType: 'integer' as const, notNull })

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
    indexes: [{ fields: ['table_name', 'user_id'] }]
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
    indexes: [{ fields: ['kind', 'table_name', 'user_id'] }]
  }
]
