// Decorations every fastbase plugin shares. Declared once, here.
import type { Knex } from 'knex'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FileTracker } from '../lib/files/tracker.js'
import type { CrudContext } from '../lib/crud/context.js'
import type { TableDescriptor } from '../lib/table/descriptor.js'
import type { AuthContext } from '../lib/auth-context.js'
import type { RunOptions } from '../lib/actions/run.js'
import type { HostAuthentication } from './host-auth.js'
import type { CodeAction } from '../lib/actions/code.js'
import type { AnyTable, TableApi, TableShape } from '../lib/api/tables.js'
import type { AfterEvent, AfterWriteEvent, AuthEvent, AuthHookEvent, BeforeDeleteEvent, BeforeInsertEvent, BeforeUpdateEvent } from '../lib/crud/record-hooks.js'
import type { KernelOptions, KernelServices } from '../lib/kernel/index.js'

export type { FastbaseRuntimeOptions, SchemaService } from '../lib/kernel/index.js'

/**
 * `app.fastbase`: every service the kernel built (lib/kernel/index.ts), with the in-process API and
 * the record hooks typed per table, and the request-facing functions the HTTP layer adds (app.ts).
 * Sealed: nothing changes it after the start.
 */
export interface Fastbase extends Omit<KernelServices, 'tables' | 'tablesWithin' | 'transaction' | 'hooks' | 'runAction'> {
  /**
   * Runs an action from server code with the HTTP route's validation, guard and execution: a config
   * action answers one array of rows per query or step, a code action what its handler returns.
   */
  runAction: <N extends string>(name: N, params?: N extends keyof FastbaseActions ? FastbaseActions[N] extends { params: infer P } ? P : Record<string, unknown> : Record<string, unknown>, options?: RunOptions) => Promise<unknown>
  /** Route hooks for table writes with files (plugins/files.ts). */
  fileHooks: FileHooks
  /**
   * A preHandler for the host's own routes: authenticates the request as fastbase's routes do and
   * sets `request.fastbaseAuth` (plugins/host-auth.ts).
   */
  authenticate: HostAuthentication['authenticate']
  /** The caller this instance's `authenticate` proved for a host request. */
  callerOf: HostAuthentication['callerOf']
  /**
   * The caller a request's credentials prove (plugins/auth-context.ts): anonymous without any, an
   * error for an invalid one. The auth-context hook and `authenticate` share it and its cache.
   */
  callerFrom: (request: FastifyRequest) => AuthContext | Promise<AuthContext>
  /** The in-process API: `tables.posts.list(args, { as })` (lib/api/tables.ts, lib/kernel/table-api.ts). */
  tables: Tables
  /** The same API inside a Knex transaction of this instance's database. */
  tablesWithin: (trx: Knex.Transaction) => Tables
  /** Runs `work` in one transaction: every call through its `tables` commits or rolls back together. */
  transaction: <T>(work: (tx: Transaction<Tables>) => Promise<T>) => Promise<T>
  /** Record hooks: `hooks.on('posts', 'beforeInsert', fn)` (lib/crud/record-hooks.ts). */
  hooks: Hooks
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
  /** Sets `request.fileTracker`, before anything reads it. Only for a table with file fields. */
  track?: (request: FastifyRequest) => void
  /** A multipart body read into a JSON one (storing its files); undefined at once for any other body. */
  readMultipart: (request: FastifyRequest) => Promise<void> | undefined
  /** Only for a table with file fields. */
  onSend?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
}

/** Options of the fastbase plugin (`app.register(fastbase, options)`); app.ts re-exports it. */
export interface FastbaseOptions extends KernelOptions {
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
    /** Set on table writes by their preValidation hook (routes/tables): the write's context, built once. */
    tableWriteContext?: CrudContext
  }
  interface FastifyContextConfig {
    /** The route accepts an expired (but genuine) access token: refresh-token and logout. */
    allowExpiredToken?: boolean
    /**
     * The route signs the caller in with a credential another party issued and reads it itself
     * (login-token's bearer JWT, one-tap): the auth context reads no token there, and the request stays anonymous.
     */
    externalCredential?: boolean
    /** An admin second-factor route: reachable by an admin credential without one under `admin.requireMfa` (decision D118). */
    adminMfa?: boolean
  }
}
