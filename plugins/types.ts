// Decorations every fastbase plugin shares. Declared once, here.
import type { Knex } from 'knex'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FileTracker } from '../lib/files/tracker.js'
import type { DatabaseSettings } from '../schemas/config.js'
import type { Dialect } from '../lib/dialects/types.js'
import type { TableDescriptor } from '../lib/table/descriptor.js'
import type { AuthContext } from '../lib/auth-context.js'
import type { AuthServices } from './auth.js'
import type { CompiledAction, RunOptions } from '../lib/actions/run.js'
import type { HoldableStorage } from '../lib/storage/deletion-hold.js'
import type { BackupService } from '../lib/backup/service.js'
import type { Limits } from '../lib/limits.js'
import type { Executor } from '../lib/crud/context.js'
import type { HostAuthentication } from './host-auth.js'
import type { CodeAction } from '../lib/actions/code.js'
import type { MailMessage, SendResult } from '../lib/auth/mailer.js'
import type { AnyTable, TableApi, TableShape } from '../lib/api/tables.js'
import type { AfterEvent, AfterWriteEvent, AuthEvent, AuthHookEvent, BeforeDeleteEvent, BeforeInsertEvent, BeforeUpdateEvent } from '../lib/crud/record-hooks.js'
import type { MigrateMode, MigrateOptions, MigrateResult, MigrationStatus } from '../lib/db/migrations.js'

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
}

export interface SchemaService {
  /** `allow` (mode `apply` only): destructive steps, and a plan that drops every table the config recorded. */
  migrate: (mode: MigrateMode, allow?: Pick<MigrateOptions, 'allowDestructive' | 'allowDropAll'>) => Promise<MigrateResult>
  status: () => Promise<MigrationStatus>
  /** Releases the database connection (for a start that fails after connecting). */
  closeDatabase: () => Promise<void>
}

export interface Fastbase {
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
  /**
   * Runs an action from server code with the HTTP route's validation, guard and execution: a config
   * action answers one array of rows per query or step, a code action what its handler returns.
   */
  runAction: <N extends string>(name: N, params?: N extends keyof FastbaseActions ? FastbaseActions[N] extends { params: infer P } ? P : Record<string, unknown> : Record<string, unknown>, options?: RunOptions) => Promise<unknown>
  /** Where uploaded files live (local disk or S3); a backup holds its deletions while it copies them. */
  storage: HoldableStorage
  /** Route hooks for table writes with files. */
  fileHooks: FileHooks
  /** Backups of this database (plugins/backups.ts): on demand, on schedule, listed and read. */
  backups: BackupService
  /**
   * A preHandler for the host's own routes: authenticates the request as fastbase's routes do and
   * sets `request.fastbaseAuth` (plugins/host-auth.ts).
   */
  authenticate: HostAuthentication['authenticate']
  /** The caller this instance's `authenticate` proved for a host request. */
  callerOf: HostAuthentication['callerOf']
  /** The in-process API: `tables.posts.list(args, { as })` (lib/api/tables.ts, plugins/table-api.ts). */
  tables: Tables
  /** The same API inside a Knex transaction of this instance's database. */
  tablesWithin: (trx: Knex.Transaction) => Tables
  /** Runs `work` in one transaction: every call through its `tables` commits or rolls back together. */
  transaction: <T>(work: (tx: Transaction<Tables>) => Promise<T>) => Promise<T>
  /** Sends an email as the auth flows do: over `email.smtp` / SMTP_URL, else as an .eml file in `<dataDir>/outbox`. */
  sendEmail: (message: MailMessage) => Promise<SendResult>
  /** Record hooks: `hooks.on('posts', 'beforeInsert', fn)` (lib/crud/record-hooks.ts). */
  hooks: Hooks
  /** The caller a user of auth table `table` is (no session needed); 404 when there is no such user. */
  callerFor: (table: string, userId: string | number) => Promise<AuthContext>
}

/**
 * One entry per table, `{ row, insert, update }`: written by `fastbase types` (a module augmentation
 * of this interface). Empty, every table takes any columns.
 */
// biome-ignore lint/suspicious/noEmptyInterface: an interface, so `fastbase types` can augment it
export interface FastbaseTables {}

/** `app.fastbase.transaction`'s argument. */
export interface Transaction<Tables> {
  /** The tables, every call inside this transaction. */
  tables: Tables
  db: Knex.Transaction
}

/** One entry per config action, `{ params }`: written by `fastbase types`; types `runAction`'s params. */
// biome-ignore lint/suspicious/noEmptyInterface: an interface, so `fastbase types` can augment it
export interface FastbaseActions {}

/** Who an in-process call runs as: a request `authenticate` ran on, a caller, or 'system' (no rules). */
export type As = FastifyRequest | AuthContext | 'system'

/** Each table's shapes: from `fastbase types` once it has described them, else any columns. */
export type TableMap = [keyof FastbaseTables] extends [never]
  ? Record<string, AnyTable>
  : { [K in keyof FastbaseTables]: FastbaseTables[K] extends TableShape ? FastbaseTables[K] : AnyTable }

/** `app.fastbase.tables`. */
export type Tables = { readonly [K in keyof TableMap]: TableApi<TableMap[K], As> }

type TableName = keyof TableMap & string
type Unhook = () => void

/** `app.fastbase.hooks`: each event's argument typed for its table. */
export interface Hooks {
  on: (<N extends TableName>(table: N, event: 'beforeInsert', hook: (event: BeforeInsertEvent<TableMap[N]['insert'], Tables>) => unknown) => Unhook) &
  (<N extends TableName>(table: N, event: 'beforeUpdate', hook: (event: BeforeUpdateEvent<TableMap[N]['update'], Tables>) => unknown) => Unhook) &
  (<N extends TableName>(table: N, event: 'beforeDelete', hook: (event: BeforeDeleteEvent<Tables>) => unknown) => Unhook) &
  (<N extends TableName>(table: N, event: AfterEvent, hook: (event: AfterWriteEvent<TableMap[N]['row']>) => unknown) => Unhook) &
  (<N extends TableName>(table: N, event: AuthEvent, hook: (event: AuthHookEvent) => unknown) => Unhook)
}


/** Route hooks for a table write that may carry files (plugins/files.ts). */
export type FileHooks = (table: TableDescriptor, authorize: (request: FastifyRequest) => void) => {
  preValidation: (request: FastifyRequest) => Promise<void>
  /** Only for a table with file fields. */
  onSend?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
}

/** Options of the fastbase plugin (`app.register(fastbase, options)`); app.ts re-exports it. */
export interface FastbaseOptions {
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
  /** URL prefix of the API (and of its document at `<prefix>/doc`). Default `/api/v1`. */
  prefix?: string
  /** URL prefix of the admin panel. Default `/panel`; `false` serves no panel. */
  panelPrefix?: string | false
  /**
   * Name under which the host app gets this instance (`app.fastbase`): give each instance its own
   * when registering several, or `false` for none. Default `fastbase`.
   */
  decorator?: string | false
  /**
   * fastbase is the whole server, not part of a host app: its JSON 404 answers every unknown path
   * (not only those under `prefix`) and every answer carries the request id. The `options` export sets
   * it, so `npm start` and `fastify start --options dist/app.js` run this way; a host leaves it unset
   * and keeps its own 404 handler.
   */
  standalone?: boolean
  /**
   * Actions written in code (`defineAction`): served at `<prefix>/action/<name>`, documented and
   * guarded as the config's actions are.
   */
  actions?: ReadonlyArray<CodeAction<any, any, Tables>>
}

// Every module augmentation of fastbase, in this one place.
declare module 'fastify' {
  interface FastifyInstance {
    fastbase: Fastbase
  }
  interface FastifyRequest {
    /**
     * Who the caller is, as fastbase's rules see it: set on fastbase's routes, and on a host's routes
     * by `app.fastbase.authenticate()`; undefined anywhere else (a host route without that preHandler,
     * hooks that run before it). fastbase's routes read it through `callerOf`.
     */
    fastbaseAuth?: AuthContext
    /** Set on table writes: what this request uploaded and released. */
    fileTracker?: FileTracker
  }
  interface FastifyContextConfig {
    /** The route accepts an expired (but genuine) access token: refresh-token and logout. */
    allowExpiredToken?: boolean
    /**
     * The route signs the caller in with a credential another party issued and reads it itself
     * (login-token's bearer JWT, one-tap): the auth context reads no token there, and the request stays anonymous.
     */
    externalCredential?: boolean
    /** An admin second-factor route: reachable by an admin credential without one under `admin.requireMfa` (decision D245). */
    adminMfa?: boolean
  }
}
