// The composition root: every service of one fastbase instance, built here once, in the order their
// dependencies declare, and returned sealed. The HTTP layer (app.ts, plugins/, routes/) serves what
// this returns and never changes it; lib/ stays free of Fastify, so the same services can be built
// and tested without an app. The order, and why:
//   1. config: loaded and checked (nothing is opened before it passes);
//   2. database: the connection, the dialect, the schema service;
//   3. the session store, then descriptors (an auth table's with its password hooks over that
//      store), record hooks, actions, storage: compiled from the config, so a bad rule or action
//      stops the start before any DDL runs;
//   4. migrations on start (decisions D21, D32);
//   5. backups, then metrics (they report the last backup), then the realtime hub and bus (the bus
//      reads tables the migrations made);
//   6. the executor: the connection (with metrics' timing) plus the record hooks and the realtime
//      port as its change sink; then auth, actions' runner and the in-process API over it.
import { describeTables } from '../table/descriptor.js'
import { RecordHooks, bothSinks } from '../crud/record-hooks.js'
import type { Executor } from '../crud/context.js'
import { compileActions, compileCodeActionsWith, runAction as runCompiled, sqlWritesOf, type CompiledAction, type RunOptions } from '../actions/run.js'
import { createStorage } from '../files/storage/index.js'
import { withDeletionHold } from '../files/storage/deletion-hold.js'
import { freezePlain } from '../plain.js'
import { Thumbnails } from '../files/thumbnails.js'
import { withVariantCleanup } from '../files/variants.js'
import { ProvenCallers } from '../auth/proven-callers.js'
import { SessionStore } from '../auth/stores/sessions.js'
import { passwordWriteHooks } from '../auth/passwords/password-writes.js'
import { authFieldsOf } from '../auth/fields.js'
import { errors } from '../errors.js'
import { Lifecycle } from './lifecycle.js'
import { loadConfig } from './config.js'
import { openDatabase } from './database.js'
import { authServices } from './auth.js'
import { backupService } from './backups.js'
import { realtimePort, type Realtime } from './realtime.js'
import { serverApi, type ServerApi } from './table-api.js'
import type { KernelInput, KernelServices } from './types.js'

export type { AuthServices, KernelInput, KernelLog, KernelOptions, KernelServices, FastbaseRuntimeOptions, SchemaService, UntypedTables } from './types.js'
export { Lifecycle } from './lifecycle.js'

export interface Kernel {
  /** Every service, frozen: nothing is added or replaced after the build. */
  services: Readonly<KernelServices>
  /** What the app's start and close must run (app.ts hands it to Fastify's hooks). */
  lifecycle: Lifecycle
}

/** Builds every service; a failure releases what was opened and throws (a ConfigError for a bad config). */
export async function buildKernel (input: KernelInput): Promise<Kernel> {
  const life = new Lifecycle()
  try {
    return { services: Object.freeze(await build(input, life)), lifecycle: life }
  } catch (error) {
    await life.abandon()
    throw error
  }
}

async function build ({ options: given, bundledExampleAllowed, codeActions, log }: KernelInput, life: Lifecycle): Promise<KernelServices> {
  const loaded = await loadConfig({ options: given, bundledExampleAllowed, log })
  const { config, options, limits } = loaded
  // The config and the limits every service reads: read-only from here on, for the services and the host.
  freezePlain(config)
  freezePlain(limits)
  const { connection, dialect, schema } = await openDatabase(loaded, log, life)
  const db = connection.knex

  // Compiled from the config: every failure here comes before any DDL. An auth table's writes
  // (insert/update/edit, and sign-up through insert) hash passwords, and a password changed by one
  // ends the user's other sessions: its hooks are given here, with the table, never set later.
  const sessions = new SessionStore(db)
  const descriptors = describeTables(config.tables, dialect, (table, ext) => passwordWriteHooks(table.name, authFieldsOf(table, ext), sessions))
  const authTables = new Set([...descriptors.values()].filter((d) => d.auth !== undefined).map((d) => d.name))
  // Before-hooks get the in-process API of their transaction; it is built below, over the executor these hooks are part of.
  let api: ServerApi | undefined
  const hooks = new RecordHooks(new Set(descriptors.keys()), authTables, log, (trx) => api?.tablesWithin(trx))
  const fromConfig = compileActions(config.actions ?? [], descriptors, dialect)
  const actions: Map<string, CompiledAction> = new Map([...fromConfig, ...compileCodeActionsWith(codeActions, fromConfig, dialect)])
  // Before any host code can register a hook: `hooks.on` refuses a before-hook these could not run (decision D69).
  hooks.writtenBySql(sqlWritesOf(fromConfig))
  // A file's thumbnails go with it, whichever way it is deleted (decision D123).
  const storage = withDeletionHold(withVariantCleanup(await createStorage(config.storage, options.dataDir)))
  life.onClose(async () => { await storage.close() })
  const thumbnails = new Thumbnails(storage, {
    concurrency: limits.thumbnails,
    queue: limits.thumbnailQueue,
    pixels: limits.thumbnailPixels,
    bytes: limits.uploadSize,
    timeout: limits.thumbnailTimeout
  })

  await schema.migrate('start')

  const backups = await backupService({ config, options, db, dialect, storage, log }, life)
  let realtime: Realtime | undefined
  const metrics = config.metrics !== undefined && config.metrics.enabled !== false
    // prom-client is loaded only here: a server without metrics never loads it.
    ? (await import('../metrics/registry.js')).createMetrics({
        knex: db,
        held: connection.direct.held,
        realtime: () => realtime?.hub.load() ?? { streams: 0, classes: 0, queuedBytes: 0, pendingChanges: 0 },
        lastBackup: async () => await backups.lastSuccess()
      })
    : undefined
  const direct = metrics === undefined ? connection.direct : metrics.timedRunner(connection.direct)
  const reader: Executor = { db, dialect, limits, direct }
  realtime = await realtimePort({ config, options, reader, descriptors, log }, life)
  // Every write made through the executor meets the record hooks and, after its commit, is heard by
  // the hooks' after-hooks and the realtime hub.
  const executor: Executor = Object.freeze({ ...reader, hooks, changes: realtime === undefined ? hooks : bothSinks(hooks, realtime.hub) })

  const auth = authServices({ config, options, db, dialect, descriptors, executor, sessions, log }, life)
  if (realtime !== undefined) {
    const { hub, bus } = realtime
    if (bus !== undefined) auth.sessions.onRevoked((revoked) => bus.publishRevoked(revoked))
    auth.sessions.onRevoked((revoked) => hub.sessionsRevoked(revoked))
  }
  const callers = new ProvenCallers()
  api = serverApi({ appUrl: config.appUrl, executor, descriptors, storage, db, limits, auth, callers, log })
  const tablesWithin = api.tablesWithin
  const runAction = async (name: string, params: unknown = {}, runOptions: RunOptions = {}): Promise<unknown> => {
    const action = actions.get(name)
    if (action === undefined) throw errors.actionNotFound(name)
    return await runCompiled({ executor, storage, tables: descriptors, tablesWithin }, action, params, runOptions)
  }
  return {
    config,
    options,
    limits,
    db,
    dialect,
    schema,
    executor,
    descriptors,
    auth,
    actions,
    runAction,
    storage,
    thumbnails,
    backups,
    ...api,
    sendEmail: async (message) => await auth.mailer().send(message),
    hooks,
    callers,
    realtime: realtime?.hub,
    realtimeBus: realtime?.bus,
    metrics
  }
}

