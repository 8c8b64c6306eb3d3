// Auth services shared by the auth-context hook and the auth routes: one JWT namespace per auth table
// (key = global jwtSecret + table jwtSecret) and one for admin tokens, sessions and one-time tokens in
// the database, the mailer, cookies and rate limits.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { JWT } from '@fastify/jwt'
import fastifyJwt from '@fastify/jwt'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import cookiePlugin from './external/cookie.js'
import rateLimitPlugin from './external/rate-limit.js'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { authFieldsOf } from '../lib/auth/fields.js'
import type { AccountServices, AuthTable, TokenKey } from '../lib/auth/types.js'
import { actionEmailSender } from '../lib/auth/action-emails.js'
import { RemoteKeySets } from '../lib/auth/key-sets.js'
import { ownIssuerOf } from '../lib/auth/id-tokens.js'
import { passwordWriteHooks } from '../lib/auth/password-writes.js'
import { SessionStore, sha256 } from '../lib/auth/sessions.js'
import { OneTimeTokens } from '../lib/auth/one-time-tokens.js'
import { createMailer, type Mailer } from '../lib/auth/mailer.js'
import { databaseRateLimitStore } from '../lib/auth/rate-limit-store.js'
import { schedulePurge } from '../lib/auth/purge-schedule.js'
import { adminRoleKeyMaterial, configuredAdminSecrets, type AdminSecrets } from '../lib/auth/admin-tokens.js'
import type { AdminRole } from '../lib/auth-context.js'

import { authCookieOf, type AuthCookie } from '../lib/auth/auth-cookie.js'
import { FILE_TOKEN_KEY_SUFFIX } from '../lib/auth/file-tokens.js'

export type { AuthTable } from '../lib/auth/types.js'

export interface AuthServices extends AccountServices {
  tables: Map<string, AuthTable>
  /** Who signs in as which admin role (lib/auth/admin-tokens.ts). */
  adminSecrets: AdminSecrets
  /** Admin tokens' keys (admin tokens carry no `cid`), one per role with a secret, derived from it. */
  adminKeys: ReadonlyMap<AdminRole, TokenKey>
  /** Identity providers' public keys, one cache per URL for every flow (lib/auth/key-sets.ts). */
  keySets: RemoteKeySets
  oneTimeTokens: OneTimeTokens
  /** Created on first use: most requests never send mail. */
  mailer: () => Mailer
  /** The auth cookie's name and attributes (`__Host-` under https), when `authCookie` is configured. */
  cookie: AuthCookie | undefined
  /** Route config for @fastify/rate-limit, or false when limits are off (decision D24). */
  rateLimit: (maxPerWindow?: number) => false | { max: number, timeWindow: number }
}

const DEFAULT_TOKEN_DURATION = 3600
const DEFAULT_RATE_MAX = 20
const DEFAULT_RATE_WINDOW_MS = 60_000

async function auth (app: FastifyInstance): Promise<void> {
  const { config, options, db } = app.fastbase
  await app.register(cookiePlugin)
  const limits = config.rateLimit
  await app.register(rateLimitPlugin, limits !== false && app.fastbase.dialect.sharedByInstances ? { store: sharedRateLimits(app) } : {})

  // Tokens are signed with one algorithm and only that one verifies: a token re-signed with another
  // HMAC (HS512 with the same key) is refused, whatever its header claims.
  const algorithm = config.jwtAlgorithm ?? 'HS256'
  const jwtOptions = (secret: string, namespace: string) => ({ secret, namespace, sign: { algorithm }, verify: { algorithms: [algorithm] } })
  const keyOf = (namespace: string): TokenKey => {
    const jwt = (app.jwt as unknown as Record<string, JWT>)[namespace]
    return {
      sign: (claims, expiresIn) => jwt.sign(claims, expiresIn === undefined ? { algorithm } : { expiresIn, algorithm }),
      // Options given to verify() replace the namespace's, algorithm pin included: say it again.
      verify: (token, options) => options?.allowExpired === true
        ? jwt.verify<Record<string, unknown>>(token, { ignoreExpiration: true, algorithms: [algorithm] })
        : jwt.verify<Record<string, unknown>>(token)
    }
  }
  const tables = new Map<string, AuthTable>()
  const sessions = new SessionStore(db)
  for (const table of app.fastbase.descriptors.values()) {
    if (table.auth === undefined) continue
    const namespace = `fbTable_${table.name}`
    await app.register(fastifyJwt, jwtOptions(config.jwtSecret + table.auth.jwtSecret, namespace))
    // File tokens get a key of their own: neither kind of token verifies as the other (decision D252).
    await app.register(fastifyJwt, jwtOptions(config.jwtSecret + table.auth.jwtSecret + FILE_TOKEN_KEY_SUFFIX, `${namespace}_files`))
    const fields = authFieldsOf(table.data, table.auth)
    // Table writes (insert/update/edit, and sign-up through insert) hash passwords from now on, and a
    // password changed by one ends the user's other sessions.
    table.writeHooks = passwordWriteHooks(table.name, fields, sessions)
    tables.set(table.name, {
      table,
      ext: table.auth,
      fields,
      key: keyOf(namespace),
      fileKey: keyOf(`${namespace}_files`),
      tokenDuration: table.auth.jwtTokenDuration ?? DEFAULT_TOKEN_DURATION
    })
  }
  // Admin tokens have no `cid`; their key never equals a table's (the suffix differs), so neither verifies as the other.
  // With an empty jwtSecret (allowed when no table signs users in) a suffix derived from it would be
  // public: admin tokens then use a random per-process key instead, and a warning says so.
  if (options.adminJwtSecret === undefined && config.jwtSecret === '') {
    app.log.warn('jwtSecret is empty: admin panel tokens are signed with a random per-process key (they end with a restart and are not shared by other instances); set jwtSecret or ADMIN_JWT_SECRET')
  }
  const adminSuffix = options.adminJwtSecret ?? (config.jwtSecret === '' ? randomBytes(32).toString('base64url') : sha256(`fastbase-admin:${config.jwtSecret}`))
  const adminSecrets: AdminSecrets = { superadmin: options.adminServiceToken, editor: config.admin?.editorPassword, viewer: config.admin?.viewerPassword }
  const adminKeys = new Map<AdminRole, TokenKey>()
  for (const [role, secret] of configuredAdminSecrets(adminSecrets)) {
    await app.register(fastifyJwt, jwtOptions(config.jwtSecret + adminSuffix + adminRoleKeyMaterial(role, secret), `fbAdmin_${role}`))
    adminKeys.set(role, keyOf(`fbAdmin_${role}`))
  }

  let mailer: Mailer | undefined
  const mailerOnce = (): Mailer => (mailer ??= createMailer({
    smtpUrl: config.email?.smtp ?? options.smtpUrl,
    outboxDir: join(options.dataDir, 'outbox'),
    from: config.email?.from ?? `${config.appName ?? 'fastbase'} <no-reply@${new URL(config.appUrl).hostname}>`,
    log: app.log
  }))
  const settings = typeof limits === 'object' ? limits as { max?: number, timeWindow?: number } : {}
  const cookie = authCookieOf(config.appUrl, config.authCookie)
  app.fastbase.auth = {
    tables,
    db,
    dialect: app.fastbase.dialect,
    issuer: ownIssuerOf(config),
    adminSecrets,
    adminKeys,
    keySets: new RemoteKeySets(),
    sessions,
    // Read at each write: the realtime plugin, registered later, sets the executor's sink.
    changes: () => app.fastbase.executor.changes,
    hooks: app.fastbase.executor.hooks,
    oneTimeTokens: new OneTimeTokens(db),
    mailer: mailerOnce,
    sendActionEmail: actionEmailSender({ appName: config.appName ?? 'fastbase', appUrl: config.appUrl, mailer: mailerOnce }),
    cookie,
    rateLimit: (max) => (limits === false ? false : { max: settings.max ?? max ?? DEFAULT_RATE_MAX, timeWindow: settings.timeWindow ?? DEFAULT_RATE_WINDOW_MS })
  }
  // Server code (a hook, a host route) sends mail the way the auth flows do: SMTP, or the outbox folder.
  app.fastbase.sendEmail = async (message) => await mailerOnce().send(message)
  // Started once the app is ready: an app that fails to start has nothing to purge with.
  let stopPurge: (() => Promise<void>) | undefined
  app.addHook('onReady', async () => {
    stopPurge = schedulePurge(db, (err) => app.log.warn({ err }, 'purging expired auth rows failed'))
  })
  app.addHook('onClose', async () => {
    mailer?.close()
    await stopPurge?.()
  })
}

/**
 * Rate-limit counters in the database (lib/internal/tables.ts#internalTablesFor), so every instance
 * on it counts the same hits.
 */
function sharedRateLimits (app: FastifyInstance): FastifyRateLimitStoreCtor {
  const { db } = app.fastbase
  const store = databaseRateLimitStore(db, (err) => app.log.warn({ err }, 'rate limit store failed'))
  // The plugin's typings say child() gets the route's options; it gets the merged limit settings with
  // the route under `routeInfo` (@fastify/rate-limit index.js), which is what the store reads.
  return store as unknown as FastifyRateLimitStoreCtor
}

export default fp(auth, { name: 'fastbase-auth', dependencies: ['fastbase-tables', 'fastbase-hooks'] })
