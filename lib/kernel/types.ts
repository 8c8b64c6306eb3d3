// What the kernel (lib/kernel/index.ts) takes and what it builds, free of Fastify: the HTTP layer
// (app.ts, plugins/) adds request-facing functions to it and serves it as the sealed `app.fastbase`.
import type { Knex } from 'knex'
import type { DatabaseSettings } from '../../schemas/config.js'
import type { Dialect } from '../dialects/types.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import type { CompiledAction, RunOptions } from '../actions/run.js'
import type { CodeAction } from '../actions/code.js'
import type { HoldableStorage } from '../files/storage/deletion-hold.js'
import type { Thumbnails } from '../files/thumbnails.js'
import type { BackupService } from '../backup/service.js'
import type { Limits } from '../limits.js'
import type { Executor } from '../crud/context.js'
import type { MailMessage, SendResult } from '../auth/mailer.js'
import type { TableApi } from '../api/tables.js'
import type { RecordHooks } from '../crud/record-hooks.js'
import type { MigrateMode, MigrateOptions, MigrateResult, MigrationStatus } from '../db/migrations.js'
import type { RealtimeHub } from '../realtime/hub.js'
import type { PgBus } from '../realtime/pg-bus.js'
import type { Metrics } from '../metrics/registry.js'
import type { ProvenCallers } from '../auth/proven-callers.js'
import type { AuthTable, TokenKey } from '../auth/types.js'
import type { OtpServices } from '../auth/email/otp-flows.js'
import type { AdminSecrets } from '../auth/tokens/admin-tokens.js'
import type { AdminRole } from '../auth-context.js'
import type { RemoteKeySets } from '../auth/oauth/key-sets.js'
import type { OAuthProviders } from '../auth/oauth/oauth-providers.js'
import type { IdTokenVerifier } from '../auth/oauth/id-tokens.js'
import type { OneTimeTokens } from '../auth/stores/one-time-tokens.js'
import type { Mailer } from '../auth/mailer.js'
import type { DatabaseRateLimitStore } from '../auth/stores/rate-limit-store.js'
import type { AuthCookie } from '../auth/sessions/auth-cookie.js'

/** A logger as pino's (Fastify's) is: an object and a message, or a message alone. */
export interface KernelLog {
  info (obj: object, msg?: string): void
  info (msg: string): void
  warn (obj: object, msg?: string): void
  warn (msg: string): void
  error (obj: object, msg?: string): void
  error (msg: string): void
  debug (obj: object, msg?: string): void
  debug (msg: string): void
}

/** The options of the fastbase plugin the services are built from (plugins/types.ts FastbaseOptions adds the HTTP ones). */
export interface KernelOptions {
  /**
   * The project config, or a path to a `.json`, `.js`/`.mjs` or `.ts` config. Default: env FASTBASE_CONFIG,
   * then `fastbase.config.*` in the working directory; none found is a ConfigError (fastbase's own server
   * serves its bundled example instead).
   */
  config?: DatabaseSettings | string
  /** `sqlite:<file>`, a plain file path, or `postgres://...`. Default: env DATABASE_URL, then `<dataDir>/fastbase.sqlite`. */
  databaseUrl?: string
  /**
   * Behind a transaction-mode pooler (`?pooler=transaction` in `databaseUrl`): a direct URL of the same
   * database, for realtime's LISTEN connection. Default: env DATABASE_DIRECT_URL.
   */
  databaseDirectUrl?: string
  /** Default: env FASTBASE_DATA_DIR, then `./data`. */
  dataDir?: string
  /** Default: env ADMIN_SERVICE_TOKEN. */
  adminServiceToken?: string
  /** Where `$NAME` secrets in the config are read from. Default: process.env. */
  env?: Record<string, string | undefined>
}

export interface KernelInput {
  options: KernelOptions
  /** No config named or found means the bundled example: fastbase's own server only (plugins/standalone.ts). */
  bundledExampleAllowed: boolean
  /** Actions written in code (`defineAction`). */
  codeActions: ReadonlyArray<CodeAction<any, any, any>>
  log: KernelLog
}

export interface FastbaseRuntimeOptions {
  /** Directory for the SQLite file, outbox, uploaded files. */
  dataDir: string
  /** `sqlite:<file>`, a plain path, or `postgres://...` */
  databaseUrl: string
  /** A direct connection to the same PostgreSQL database, for what a transaction-mode pooler cannot carry (realtime's LISTEN). */
  databaseDirectUrl?: string
  /** Bearer token that makes a request superadmin; unset disables service-token access. */
  adminServiceToken?: string
  /** Env ADMIN_JWT_SECRET: the admin half of the admin-token key (derived from jwtSecret when unset). */
  adminJwtSecret?: string
  /** Env SMTP_URL: used when the config's `email.smtp` is not set. */
  smtpUrl?: string
  /**
   * Other origins whose pages may use the API from a browser: CORS answers them and the auth cookie
   * writes from them (config `cors.origins` and `allowedOrigins`, env FASTBASE_CORS_ORIGINS and
   * FASTBASE_ALLOWED_ORIGINS; decision D97), serialized, validated.
   */
  origins: string[]
  /** true outside production: 5xx messages are shown to callers. */
  exposeErrors: boolean
  /** Set when the config is the bundled example: its page is served at `/` too (decision D130). */
  bundledExample?: true
}

export interface SchemaService {
  /** `allow` (mode `apply` only): destructive steps, and a plan that drops every table the config recorded. */
  migrate: (mode: MigrateMode, allow?: Pick<MigrateOptions, 'allowDestructive' | 'allowDropAll'>) => Promise<MigrateResult>
  status: () => Promise<MigrationStatus>
}

/** The tables of the in-process API, any columns (plugins/types.ts types them per table). */
export type UntypedTables = Record<string, TableApi>

/** Every service of one fastbase instance, built once, in dependency order, and never changed after. */
export interface KernelServices {
  config: DatabaseSettings
  options: FastbaseRuntimeOptions
  /** Bounds on one request (config `limits`, `maxLimit`, `maxUploadSize`). */
  limits: Limits
  db: Knex
  dialect: Dialect
  /** The schema following the config (lib/db/migrations.ts): run on start, by `/setup-db` and `/migrations`. */
  schema: SchemaService
  /** Where table operations run (lib/crud/context.ts#crudContext). */
  executor: Executor
  /** Every table's compiled descriptor (lib/table/descriptor.ts), by name. */
  descriptors: Map<string, TableDescriptor>
  auth: AuthServices
  actions: Map<string, CompiledAction>
  runAction: (name: string, params?: unknown, options?: RunOptions) => Promise<unknown>
  /** Where uploaded files live (local disk or S3); a backup holds its deletions while it copies them. */
  storage: HoldableStorage
  /** Thumbnails of stored images (`?thumb=`), made on first request within `limits`' bounds, then stored beside the original. */
  thumbnails: Thumbnails
  /** Backups of this database (lib/backup/service.ts): on demand, on schedule, listed and read. */
  backups: BackupService
  tables: UntypedTables
  tablesWithin: (trx: Knex.Transaction) => UntypedTables
  transaction: <T>(work: (tx: { tables: UntypedTables, db: Knex.Transaction }) => Promise<T>) => Promise<T>
  /** Sends an email as the auth flows do: over `email.smtp` / SMTP_URL, else as an .eml file in `<dataDir>/outbox`. */
  sendEmail: (message: MailMessage) => Promise<SendResult>
  /** Record hooks (lib/crud/record-hooks.ts). */
  hooks: RecordHooks
  /** The caller a user of auth table `table` is (no session needed); 404 when there is no such user. */
  callerFor: (table: string, userId: string | number) => Promise<AuthContext>
  /** The callers `authenticate` proved for a host's requests (plugins/host-auth.ts), read by the table API's `as`. */
  callers: ProvenCallers
  /** Realtime subscriptions; unset when the config says `realtime: { enabled: false }`. */
  realtime?: RealtimeHub
  /** The PostgreSQL bus between instances (tests break its connection). */
  realtimeBus?: PgBus
  /** Prometheus metrics, when the config turns them on (plugins/metrics.ts serves them). */
  metrics?: Metrics
}

/** The auth services (lib/kernel/auth.ts builds them). */
export interface AuthServices extends OtpServices {
  tables: Map<string, AuthTable>
  /** Who signs in as which admin role (lib/auth/tokens/admin-tokens.ts). */
  adminSecrets: AdminSecrets
  /** Admin tokens' keys (admin tokens carry no `cid`), one per role with a secret, derived from it. */
  adminKeys: ReadonlyMap<AdminRole, TokenKey>
  /** Identity providers' public keys, one cache per URL for every flow (lib/auth/oauth/key-sets.ts). */
  keySets: RemoteKeySets
  /** The redirect flow's providers (`authProviders`), their discovery documents shared by every auth table; made on first use. */
  oauthProviders: () => OAuthProviders
  /** The verifier of external ID tokens (one-tap, `authProviders` with an issuer), its key sets shared by every auth table; made on first use. */
  idTokens: () => Promise<IdTokenVerifier>
  oneTimeTokens: OneTimeTokens
  /** Created on first use: most requests never send mail. */
  mailer: () => Mailer
  /** The auth cookie's name and attributes (`__Host-` under https), when `authCookie` is configured. */
  cookie: AuthCookie | undefined
  /** The store of the routes' rate limits where instances share the database (counted there), as @fastify/rate-limit constructs it; undefined: counted in memory, or limits off. */
  rateLimitStore: (new () => DatabaseRateLimitStore) | undefined
  /** Route config for @fastify/rate-limit, or false when limits are off (decision D24). */
  rateLimit: (maxPerWindow?: number) => false | { max: number, timeWindow: number }
}
