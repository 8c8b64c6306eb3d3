// The in-process table API: `app.fastbase.tables.<name>.list(args, { as })` and the other operations,
// for server code (host routes, record hooks, code actions). Each call is the HTTP route's work
// without HTTP: its arguments are checked with the route's own schemas, it runs through the one
// CrudContext factory and lib/crud (compiled plans, limits, record hooks, realtime events), and it
// fails with the same FastbaseErrors. Who it runs as is never implied: `as` is a caller, or 'system'.
import type { Knex } from 'knex'
import { Type, type TSchema } from '@sinclair/typebox'
import type { TableDescriptor } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import { crudContext, type CrudContext, type Executor } from '../crud/context.js'
import { select, list, view, type ReadParams } from '../crud/read.js'
import { insert, update, edit, remove, type Conflict } from '../crud/write.js'
import type { ListSpec } from '../crud/columns.js'
import { databaseError } from '../crud/db-errors.js'
import { afterCommit } from '../db/after-commit.js'
import { FileTracker, fileFields, type FileLog, type FileStorage } from '../files/tracker.js'
import { errors, FastbaseError } from '../errors.js'
import type { Limits } from '../limits.js'
import { compileValidator, validationError } from '../validation.js'
import { IdParamsSchema, querySchemas, tableSchemas } from '../../schemas/http/table-routes.js'

type Row = Record<string, unknown>

/** What one table's rows look like to the API: as read, as inserted, as updated (`fastbase types` writes these). */
export interface TableShape { row: object, insert: object, update: object }
/** A table nothing has described: any columns. */
export interface AnyTable { row: Row, insert: Row, update: Row }

/**
 * Values the call's expressions read as `{:name}`, bound as SQL parameters with their JSON types,
 * never spliced into the text (decision D88): `where: 'id == {:id}', params: { id }`.
 */
export type Params = Record<string, string | number | boolean | null>
/** The operations whose expressions may read `{:name}` parameters. */
export interface Bound { params?: Params }

export type ReadArgs = ReadParams & Bound
export interface ViewArgs extends Bound { id: string, select?: ListSpec, where?: string }
export interface InsertArgs<T extends TableShape> { values: T['insert'] | Array<T['insert']>, returning?: ListSpec, or?: Conflict }
export interface UpdateArgs<T extends TableShape> extends Bound { where: string, setValues?: T['update'], set?: Record<string, string>, returning?: ListSpec, or?: Conflict }
export interface EditArgs<T extends TableShape> { id: string, values: T['update'], returning?: ListSpec, or?: Conflict | 'INSERT' }
export interface DeleteArgs extends Bound { where: string, returning?: ListSpec }

/** `as` is required on every call: nobody runs as the system (past every rule) by leaving it out. */
export interface CallOptions<As> { as: As }

/**
 * One table's operations. Rows come back as the HTTP API answers them: with `select` / `returning`,
 * only the columns asked for (and relations as nested objects).
 */
export interface TableApi<T extends TableShape = AnyTable, As = unknown> {
  list: (args: ReadArgs, options: CallOptions<As>) => Promise<{ items: Array<T['row']>, total: number }>
  select: (args: ReadArgs, options: CallOptions<As>) => Promise<Array<T['row']>>
  view: (args: ViewArgs, options: CallOptions<As>) => Promise<T['row']>
  insert: (args: InsertArgs<T>, options: CallOptions<As>) => Promise<Array<T['row']>>
  update: (args: UpdateArgs<T>, options: CallOptions<As>) => Promise<Array<T['row']>>
  edit: (args: EditArgs<T>, options: CallOptions<As>) => Promise<T['row']>
  delete: (args: DeleteArgs, options: CallOptions<As>) => Promise<Array<T['row']>>
}

// Names as `{:name}` spells them; at most 256 of them, each a string, a finite number, a boolean or null.
const ParamsArg = Type.Object({
  params: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { maxProperties: 256, additionalProperties: false }))
})

/** Who a call runs as, once `as` is resolved: the caller rules see, whether rules apply, `request.*`. */
export interface ActingCaller { auth: AuthContext, applyRules: boolean, request?: Row, requestId?: string }

export interface TableApiRuntime {
  executor: Executor
  descriptors: ReadonlyMap<string, TableDescriptor>
  /** Turns an `as` into the caller; throws (an Error: a bug in the server code) for anything else. */
  resolve: (as: unknown) => ActingCaller
  /** Files a write releases are removed after its commit, as after an HTTP write. */
  storage: FileStorage
  /** The app's own connection (outside any transaction), for settling files. */
  root: Knex
  log: FileLog
}

type Validate = (value: unknown) => void

/** A validator of `schema` as the routes check bodies (as sent, no conversion), compiled on first use. */
function lazyValidator (schema: () => TSchema): Validate {
  let check: ReturnType<typeof compileValidator> | undefined
  return (value) => {
    const result = (check ??= compileValidator(schema(), false))(value)
    if (result !== true && result.error !== undefined) throw validationError(result.error.map((e) => ({ path: e.instancePath, message: e.message })))
  }
}

/**
 * The arguments of an operation must be an object: server code passing nothing (plain JavaScript
 * is not held to the declared type) gets a 400, not a crash. The schemas check the rest.
 */
function objectArgs<A extends object> (args: A): A {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw errors.badRequest('Invalid arguments: expected an object')
  return args
}

/**
 * Every table's API over an executor: the app's, or a transaction's (`withinTransaction`). The
 * argument checks are compiled once per table, on first use, and shared by every executor.
 */
export function tablesApi (runtime: Omit<TableApiRuntime, 'executor'>, limits: Limits): (executor: Executor) => Record<string, TableApi> {
  const reads = querySchemas(limits)
  const shared: SharedChecks = {
    checkRead: lazyValidator(() => reads.read),
    checkView: lazyValidator(() => reads.view),
    checkEditQuery: lazyValidator(() => reads.edit),
    checkId: lazyValidator(() => IdParamsSchema),
    checkParams: lazyValidator(() => ParamsArg)
  }
  const checks = new Map([...runtime.descriptors.values()].map((table) => [table, tableChecks(table, limits, shared)]))
  return (executor) => {
    const api: Record<string, TableApi> = Object.create(null)
    for (const [table, check] of checks) {
      let made: TableApi | undefined
      // Made on first use: a transaction that touches two tables of a hundred builds two.
      Object.defineProperty(api, table.name, { enumerable: true, get: () => (made ??= tableApi({ ...runtime, executor }, table, check)) })
    }
    return Object.freeze(api)
  }
}

interface SharedChecks { checkRead: Validate, checkView: Validate, checkEditQuery: Validate, checkId: Validate, checkParams: Validate }
interface TableChecks extends SharedChecks { checkInsert: Validate, checkUpdate: Validate, checkEdit: Validate, checkDelete: Validate }

function tableChecks (table: TableDescriptor, limits: Limits, shared: SharedChecks): TableChecks {
  let schemas: ReturnType<typeof tableSchemas> | undefined
  const schemasOf = () => (schemas ??= tableSchemas(table.data, limits))
  return {
    ...shared,
    checkInsert: lazyValidator(() => schemasOf().insertBody),
    checkUpdate: lazyValidator(() => schemasOf().updateBody),
    checkEdit: lazyValidator(() => schemasOf().editBody),
    checkDelete: lazyValidator(() => schemasOf().deleteBody)
  }
}

function tableApi (runtime: TableApiRuntime, table: TableDescriptor, checks: TableChecks): TableApi {
  const { executor } = runtime
  const { checkInsert, checkUpdate, checkEdit, checkDelete } = checks
  const shared = checks
  const hasFiles = fileFields(table).length > 0

  /** Runs `work` as `as`; database errors become the FastbaseErrors the HTTP API answers. */
  async function run<T> (as: unknown, write: boolean, params: Params | undefined, work: (ctx: CrudContext) => Promise<T>): Promise<T> {
    const caller = runtime.resolve(as)
    // A viewer admin reads and never writes, as on HTTP.
    if (write && caller.auth.adminRole === 'viewer') throw errors.forbidden()
    const files = write && hasFiles ? new FileTracker(runtime.storage, runtime.log) : undefined
    const ctx = crudContext(executor, table, caller.auth, { globals: { request: caller.request ?? {}, params: params ?? {} }, applyRules: caller.applyRules, files, requestId: caller.requestId })
    try {
      const result = await work(ctx)
      if (files !== undefined) settleAfterCommit(runtime, files)
      return result
    } catch (error) {
      if (error instanceof FastbaseError) throw error
      throw databaseError(executor.dialect, error) ?? error
    }
  }

  return {
    list: async (args, { as }) => {
      const { params, ...query } = objectArgs(args)
      shared.checkParams({ params })
      shared.checkRead(query)
      return await run(as, false, params, async (ctx) => await list(ctx, query))
    },
    select: async (args, { as }) => {
      const { params, ...query } = objectArgs(args)
      shared.checkParams({ params })
      shared.checkRead(query)
      return await run(as, false, params, async (ctx) => await select(ctx, query))
    },
    view: async (args, { as }) => {
      const { id, params, ...query } = objectArgs(args)
      shared.checkId({ id })
      shared.checkParams({ params })
      shared.checkView(query)
      return await run(as, false, params, async (ctx) => await view(ctx, id, query))
    },
    insert: async (args, { as }) => {
      checkInsert(objectArgs(args))
      return await run(as, true, undefined, async (ctx) => await insert(ctx, args))
    },
    update: async (args, { as }) => {
      const { params, ...body } = objectArgs(args)
      shared.checkParams({ params })
      checkUpdate(body)
      return await run(as, true, params, async (ctx) => await update(ctx, body))
    },
    edit: async (args, { as }) => {
      const { id, values, ...query } = objectArgs(args)
      shared.checkId({ id })
      checkEdit(values)
      shared.checkEditQuery(query)
      return await run(as, true, undefined, async (ctx) => await edit(ctx, id, values, query))
    },
    delete: async (args, { as }) => {
      const { params, ...body } = objectArgs(args)
      shared.checkParams({ params })
      checkDelete(body)
      return await run(as, true, params, async (ctx) => await remove(ctx, body))
    }
  }
}

/** The files a write released are removed once it is committed (at once outside a transaction). */
function settleAfterCommit (runtime: TableApiRuntime, files: FileTracker): void {
  afterCommit(runtime.executor.db, () => {
    files.settle(runtime.root, true).catch((error: unknown) => runtime.log.error({ err: error }, 'could not settle released files'))
  })
}
