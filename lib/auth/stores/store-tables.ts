// fastbase's own tables for auth state. They live in the database (not in process memory) so every
// instance sharing it sees the same sessions and one-time tokens. Times are epoch seconds.
import type { TableData } from '../../../schemas/config.js'
import { epoch, text } from '../../db/internal-columns.js'

export const SESSIONS = '_fastbase_sessions'
export const REFRESH_TOKENS = '_fastbase_refresh_tokens'
export const ONE_TIME_TOKENS = '_fastbase_tokens'
export const IDENTITIES = '_fastbase_identities'
export const OAUTH_STATES = '_fastbase_oauth_states'
export const EMAIL_CODES = '_fastbase_email_codes'
export const MFA_FACTORS = '_fastbase_mfa_factors'
export const MFA_RECOVERY_CODES = '_fastbase_mfa_recovery_codes'
export const MFA_CHALLENGES = '_fastbase_mfa_challenges'

/** The `table_name` of the panel's admins in the MFA tables (their `user_id` is the role): no table's name starts with `_`. */
export const ADMIN_PRINCIPALS = '_admin'

export const authStoreTables: TableData[] = [
  {
    name: SESSIONS,
    fields: [
      text('id', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('user_id', { notNull: true }),
      { name: 'refresh_count', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
      // Authenticator assurance level (decision D116): 1 signed in with one factor, 2 with a second one too.
      { name: 'aal', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 1 } },
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
    // OAuth states already used (lib/auth/oauth/oauth-used-states.ts). A state is signed and carries its own
    // expiry, so only its id is kept, until the purge.
    name: OAUTH_STATES,
    fields: [text('id', { primary: true, notNull: true }), epoch('expires_at')],
    indexes: [{ fields: ['expires_at'] }]
  },
  {
    // Email sign-in codes and links (lib/auth/email/email-codes.ts): one live row per address, keyed by the
    // link token's hash; the code is kept as an HMAC, with the attempts spent on it.
    name: EMAIL_CODES,
    fields: [
      text('hash', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('email', { notNull: true }),
      text('code_hash', { notNull: true }),
      { name: 'attempts', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
      epoch('created_at'),
      epoch('expires_at')
    ],
    indexes: [{ fields: ['table_name', 'email'] }, { fields: ['expires_at'] }]
  },
  {
    // A user's (or an admin role's) TOTP secret (lib/auth/mfa/mfa-store.ts): on once enabled_at is set;
    // last_step is the last time step a code was accepted for, so no code works twice.
    name: MFA_FACTORS,
    fields: [
      text('id', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('user_id', { notNull: true }),
      text('secret', { notNull: true }),
      epoch('enabled_at', false),
      epoch('last_step', false),
      epoch('created_at')
    ],
    indexes: [{ fields: ['table_name', 'user_id'], unique: true }]
  },
  {
    // One-time recovery codes, by hash; a used one is deleted.
    name: MFA_RECOVERY_CODES,
    fields: [text('hash', { primary: true, notNull: true }), text('table_name', { notNull: true }), text('user_id', { notNull: true }), epoch('created_at')],
    indexes: [{ fields: ['table_name', 'user_id'] }]
  },
  {
    // A sign-in waiting for its second factor (mfa/verify), by the challenge's hash: single use, short-lived, a few attempts.
    name: MFA_CHALLENGES,
    fields: [
      text('hash', { primary: true, notNull: true }),
      text('table_name', { notNull: true }),
      text('user_id', { notNull: true }),
      { name: 'attempts', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
      epoch('created_at'),
      epoch('expires_at')
    ],
    indexes: [{ fields: ['expires_at'] }]
  }
]
