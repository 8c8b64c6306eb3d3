// What the auth services work with, free of Fastify and of any JWT library's types: an auth table
// (its descriptor, extension config, columns by usage, signing key) and the services a flow needs.
import type { Knex } from 'knex'
import type { AuthExtension } from '../../schemas/config.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { Dialect } from '../dialects/types.js'
import type { AuthFields } from './fields.js'
import type { SessionStore } from './stores/sessions.js'
import type { OneTimeTokens } from './stores/one-time-tokens.js'
import type { MfaStore } from './mfa/mfa-store.js'
import type { ActionEmailKind } from './mailer.js'
import type { Executor } from '../crud/context.js'

export type Row = Record<string, unknown>

/** A signing key: tokens signed with it, and only those, verify with it (one pinned algorithm). */
export interface TokenKey {
  /** Signs the claims; with `expiresInSeconds` it sets `exp`, without it the claims' own `exp` (if any) stands. */
  sign: (claims: Row, expiresInSeconds?: number) => string
  /** The claims of a token this key signed; throws when the signature or (unless allowed) the expiry fails. */
  verify: (token: string, options?: { allowExpired?: boolean }) => Row
}

export interface AuthTable {
  table: TableDescriptor
  ext: AuthExtension
  fields: AuthFields
  key: TokenKey
  /** Signs and verifies the table's file tokens only (lib/auth/tokens/file-tokens.ts, decision D124). */
  fileKey: TokenKey
  /** Access-token lifetime, seconds. */
  tokenDuration: number
}

/** What opening a session needs (lib/auth/sessions/session-service.ts). */
export interface SessionServices {
  db: Knex
  dialect: Dialect
  sessions: SessionStore
  /** Second factors: a user with one on gets a challenge instead of a session (lib/auth/sessions/session-service.ts). */
  mfa: MfaStore
  /** `iss` of every token this deployment signs. */
  issuer: string
  /**
   * Where table writes run (lib/crud/context.ts): the flows' own writes to user rows go through it
   * (lib/auth/user-writes.ts), meeting its record hooks and reported to its change sink; sign-ups and
   * sign-ins are reported to its record hooks.
   */
  executor: Executor
}

/** What the password-reset and verification flows need besides sessions. */
export interface AccountServices extends SessionServices {
  oneTimeTokens: OneTimeTokens
  /** Renders the table's template for `kind` and sends it (lib/auth/email/action-emails.ts). */
  sendActionEmail: (at: AuthTable, kind: ActionEmailKind, to: string, token: string, code?: string) => Promise<void>
}
