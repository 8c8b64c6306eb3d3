// The kernel's auth services, shared by the auth-context hook and the auth routes: one token key per
// auth table (global jwtSecret + table jwtSecret) and one per admin role, sessions and one-time
// tokens in the database, the mailer, the cookie's settings and the rate limits' settings. The
// tables' password write hooks are not set here: lib/kernel/index.ts gives them to describeTables
// with each auth table, over the session store it builds first and passes in.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { Knex } from 'knex'
import type { DatabaseSettings } from '../../schemas/config.js'
import type { Dialect } from '../dialects/types.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { Executor } from '../crud/context.js'
import { authFieldsOf } from '../auth/fields.js'
import type { AuthTable, TokenKey } from '../auth/types.js'
import { actionEmailSender } from '../auth/email/action-emails.js'
import { RemoteKeySets } from '../auth/oauth/key-sets.js'
import { IdTokenVerifier, ownIssuerOf, providerEntries } from '../auth/oauth/id-tokens.js'
import { OAuthProviders } from '../auth/oauth/oauth-providers.js'
import { sha256, type SessionStore } from '../auth/stores/sessions.js'
import { OneTimeTokens } from '../auth/stores/one-time-tokens.js'
import { MfaStore } from '../auth/mfa/mfa-store.js'
import { EmailCodes } from '../auth/email/email-codes.js'
import { DatabaseRateLimitStore, databaseRateLimitStore } from '../auth/stores/rate-limit-store.js'
import { memoryAddressLimit, sharedAddressLimit, unlimited } from '../auth/stores/address-limit.js'
import { createMailer, type Mailer } from '../auth/mailer.js'
import { FILE_TOKEN_KEY_SUFFIX } from '../auth/tokens/file-tokens.js'
import { schedulePurge } from '../auth/stores/purge-schedule.js'
import { adminRoleKeyMaterial, configuredAdminSecrets, type AdminSecrets } from '../auth/tokens/admin-tokens.js'
import { tokenKey } from '../auth/tokens/token-keys.js'
import type { AdminRole } from '../auth-context.js'
import { authCookieOf } from '../auth/sessions/auth-cookie.js'
import type { Lifecycle } from './lifecycle.js'
import type { AuthServices, FastbaseRuntimeOptions, KernelLog } from './types.js'

const DEFAULT_TOKEN_DURATION = 3600
const DEFAULT_RATE_MAX = 20
const DEFAULT_RATE_WINDOW_MS = 60_000

interface AuthInput {
  config: DatabaseSettings
  options: FastbaseRuntimeOptions
  db: Knex
  dialect: Dialect
  descriptors: ReadonlyMap<string, TableDescriptor>
  /** The executor writes go through: its change sink and record hooks hear the flows' own writes. */
  executor: Executor
  /** The session store the auth tables' write hooks were given (lib/kernel/index.ts builds both). */
  sessions: SessionStore
  log: KernelLog
}

export function authServices ({ config, options, db, dialect, descriptors, executor, sessions, log }: AuthInput, life: Lifecycle): AuthServices {
  const algorithm = config.jwtAlgorithm ?? 'HS256'
  const tables = new Map<string, AuthTable>()
  for (const table of descriptors.values()) {
    if (table.auth === undefined) continue
    const fields = authFieldsOf(table.data, table.auth)
    tables.set(table.name, {
      table,
      ext: table.auth,
      fields,
      key: tokenKey(config.jwtSecret + table.auth.jwtSecret, algorithm),
      // File tokens get a key of their own: neither kind of token verifies as the other (decision D124).
      fileKey: tokenKey(config.jwtSecret + table.auth.jwtSecret + FILE_TOKEN_KEY_SUFFIX, algorithm),
      tokenDuration: table.auth.jwtTokenDuration ?? DEFAULT_TOKEN_DURATION
    })
  }
  // Admin tokens have no `cid`; their key never equals a table's (the suffix differs), so neither verifies as the other.
  // With an empty jwtSecret (allowed when no table signs users in) a suffix derived from it would be
  // public: admin tokens then use a random per-process key instead, and a warning says so.
  if (options.adminJwtSecret === undefined && config.jwtSecret === '') {
    log.warn('jwtSecret is empty: admin panel tokens are signed with a random per-process key (they end with a restart and are not shared by other instances); set jwtSecret or ADMIN_JWT_SECRET')
  }
  const adminSuffix = options.adminJwtSecret ?? (config.jwtSecret === '' ? randomBytes(32).toString('base64url') : sha256(`fastbase-admin:${config.jwtSecret}`))
  const adminSecrets: AdminSecrets = { superadmin: options.adminServiceToken, editor: config.admin?.editorPassword, viewer: config.admin?.viewerPassword }
  const adminKeys = new Map<AdminRole, TokenKey>()
  for (const [role, secret] of configuredAdminSecrets(adminSecrets)) {
    adminKeys.set(role, tokenKey(config.jwtSecret + adminSuffix + adminRoleKeyMaterial(role, secret), algorithm))
  }

  let mailer: Mailer | undefined
  const mailerOnce = (): Mailer => (mailer ??= createMailer({
    smtpUrl: config.email?.smtp ?? options.smtpUrl,
    outboxDir: join(options.dataDir, 'outbox'),
    from: config.email?.from ?? `${config.appName ?? 'fastbase'} <no-reply@${new URL(config.appUrl).hostname}>`,
    log
  }))
  // One of each per app, made on first use (only auth tables' routes use them): the providers'
  // discovery documents and key sets then serve every auth table. Their refusals and warnings were
  // reported before the database opened (lib/config/startup-checks.ts).
  const keySets = new RemoteKeySets()
  const issuer = ownIssuerOf(config)
  let providers: OAuthProviders | undefined
  let verifier: Promise<IdTokenVerifier> | undefined
  const limits = config.rateLimit
  const settings = typeof limits === 'object' ? limits as { max?: number, timeWindow?: number } : {}
  // Counted in the database where instances share it, so every instance counts the same hits: the
  // routes' limits, and the per-address counters of the email-code flows (decision D113).
  const onStoreError = (err: unknown): void => { log.warn({ err }, 'rate limit store failed') }
  const shared = limits !== false && dialect.sharedByInstances
  const addressLimit = limits === false
    ? unlimited
    : shared ? sharedAddressLimit(new DatabaseRateLimitStore(db, onStoreError, 'address ')) : memoryAddressLimit()
  // Started once the app is ready: an app that fails to start has nothing to purge with.
  let stopPurge: (() => Promise<void>) | undefined
  life.onReady(() => { stopPurge = schedulePurge(db, (err) => log.warn({ err }, 'purging expired auth rows failed')) })
  life.onClose(async () => {
    mailer?.close()
    await stopPurge?.()
  })
  return {
    tables,
    db,
    dialect,
    issuer,
    adminSecrets,
    adminKeys,
    keySets,
    oauthProviders: () => (providers ??= new OAuthProviders(config.authProviders ?? [], keySets)),
    idTokens: () => (verifier ??= IdTokenVerifier.create(providerEntries(config), { ownIssuer: issuer, keySets })),
    sessions,
    executor,
    oneTimeTokens: new OneTimeTokens(db),
    mfa: new MfaStore(db),
    // A table's email codes are hashed with its token secret: a copy of the database alone cannot test guesses.
    emailCodes: new EmailCodes(db, (name) => sha256(`fastbase-email-code:${config.jwtSecret}${tables.get(name)?.ext.jwtSecret ?? ''}`)),
    addressLimit,
    mailer: mailerOnce,
    sendActionEmail: actionEmailSender({ appName: config.appName ?? 'fastbase', appUrl: config.appUrl, mailer: mailerOnce }),
    cookie: authCookieOf(config.appUrl, config.authCookie),
    rateLimitStore: shared ? databaseRateLimitStore(db, onStoreError) : undefined,
    rateLimit: (max) => (limits === false ? false : { max: settings.max ?? max ?? DEFAULT_RATE_MAX, timeWindow: settings.timeWindow ?? DEFAULT_RATE_WINDOW_MS })
  }
}
