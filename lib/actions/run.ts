// Named server-side actions: compiled once at start-up, run by HTTP and by server code alike.
// Order (decision D19): requireAuth -> guard -> params -> execution, all queries or steps in one
// transaction; a guard that needs the database runs first inside it and adds no result.
import type { Knex } from 'knex'
import type { ActionData, ActionSqlQuery, ActionStep } from '../../schemas/config.js'
import type { Dialect } from '../dialects/types.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import { authGlobals, ANONYMOUS } from '../auth-context.js'
import { compile, parse, toCondition, ExpressionError, type Expr, type ColumnResolver } from '../expr/index.js'
import { ConfigError, errors } from '../errors.js'
import { translateDbError } from '../crud/db-errors.js'
import { crudContext, withinTransaction, type Executor } from '../crud/context.js'
import { paramsSchema, paramsValidator } from './params.js'
import { compileCodeActions, type CodeAction, type CompiledCode } from './code.js'
import type { TObject } from '@sinclair/typebox'
import { runSqlQuery } from './sql-mode.js'
import { runStep } from './steps-mode.js'
import { assertAssurance } from '../crud/write-gate.js'
import { FileTracker, type FileStorage } from '../files/tracker.js'
import { isObject } from '../plain.js'
import type { SqlWrite } from '../crud/record-hooks.js'

type Row = Record<string, unknown>

export interface CompiledAction {
  data: ActionData
  /** The params' schema, as the API document shows it. */
  schema: TObject
  validate: (input: unknown) => Row
  guard?: Expr
  /** Each a SQL-mode query or a step, never both. */
  statements: Array<{ table: TableDescriptor, sql: ActionSqlQuery, step?: undefined } | { table: TableDescriptor, sql?: undefined, step: ActionStep }>
  /** An action written in code (lib/actions/code.ts): its handler instead of statements. */
  code?: Pick<CompiledCode, 'handler' | 'result'>
}

export interface ActionRuntime {
  /** Where the action's statements run (lib/crud/context.ts). */
  executor: Executor
  /** Files released by steps (a cleared or deleted file field) are removed after the commit. */
  storage: FileStorage
  tables: Map<string, TableDescriptor>
  /** The in-process table API inside a transaction, for code actions. */
  tablesWithin?: (trx: Knex.Transaction) => unknown
}

export interface RunOptions {
  auth?: AuthContext
  /** `request.*` for expressions (the HTTP route passes method, headers, ...). */
  request?: Record<string, unknown>
  /** The request it runs for (in the logs of failing after-hooks). */
  requestId?: string
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

/** A table with no columns: guards may use auth, params, request and functions, never columns. */
function guardTable (dialect: Dialect): ColumnResolver {
  return { name: '_guard', quoted: dialect.quote('_guard'), fields: new Map() }
}

/** Every expression of a step, with its config path, for the start-up check. */
function stepExpressions (step: ActionStep): Array<[string, string, boolean]> {
  const out: Array<[string, string, boolean]> = []
  if (step.where !== undefined) out.push(['where', step.where, step.type === 'UPDATE'])
  for (const [k, v] of Object.entries(step.set ?? {})) out.push([`set.${k}`, v, false])
  for (const [k, v] of Object.entries(step.expr ?? {})) out.push([`expr.${k}`, v, false])
  return out
}

/**
 * The globals an action's expressions are checked with at start: an anonymous caller, and each
 * declared param as null, so `{:name}` of a param the action does not declare stops the start.
 */
function startGlobals (action: ActionData): Row {
  return { auth: authGlobals(ANONYMOUS), params: Object.fromEntries(Object.keys(action.params ?? {}).map((name) => [name, null])), request: {} }
}

/** A guard parsed and compiled once for an anonymous caller, so a bad one stops the start; problems are pushed under `at`. */
function compileGuard (action: ActionData, dialect: Dialect, at: string, problems: string[]): Expr | undefined {
  const text = action.guard
  if (text === undefined) return undefined
  try {
    const guard = parse(text)
    compile(guard, { dialect, table: guardTable(dialect), globals: startGlobals(action), seesHidden: true })
    return guard
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error
    problems.push(`${at}: ${error.message}`)
    return undefined
  }
}

/** Compiles every action; throws ConfigError naming the action for each bad guard, step or column. */
export function compileActions (actions: ActionData[], tables: Map<string, TableDescriptor>, dialect: Dialect): Map<string, CompiledAction> {
  const problems: string[] = []
  const compiled = new Map<string, CompiledAction>()
  for (const action of actions) {
    const at = `actions.${action.name}`
    const anonymous = startGlobals(action)
    const guard = compileGuard(action, dialect, `${at}.guard`, problems)
    const statements: CompiledAction['statements'] = []
    const entries = [...list(action.sql).map((sql, i) => ({ sql, path: `${at}.sql[${i}]` })), ...list(action.steps).map((step, i) => ({ step, path: `${at}.steps[${i}]` }))]
    for (const entry of entries) {
      const spec = 'sql' in entry ? entry.sql : entry.step
      const table = tables.get(spec.table)
      if (table === undefined) { problems.push(`${entry.path}.table: unknown table "${spec.table}"`); continue }
      if ('sql' in entry) {
        for (const column of [...Object.keys(entry.sql.set ?? {}), ...list(entry.sql.values).flatMap((v) => Object.keys(v))]) {
          const field = table.fields.get(column)
          if (field === undefined) problems.push(`${entry.path}: unknown column "${column}" in table "${table.name}"`)
          // SQL mode writes values as given: a password would be stored unhashed (and never sign in).
          else if (table.auth !== undefined && field.usage === 'auth_password') problems.push(`${entry.path}: SQL mode cannot write the password column "${column}" (it would be stored unhashed); write it in a steps-mode action`)
        }
        statements.push({ table, sql: entry.sql })
        continue
      }
      const step = entry.step
      if ((step.type === 'UPDATE' || step.type === 'DELETE') && (step.where === undefined || step.where.trim() === '')) problems.push(`${entry.path}.where: ${step.type} steps need a where (use 'true' for every row)`)
      for (const [key, text, updating] of stepExpressions(step)) {
        try {
          compile(parse(text), { dialect, table, globals: anonymous, seesHidden: true, newValues: updating ? 'row' : undefined })
        } catch (error) {
          if (!(error instanceof ExpressionError)) throw error
          problems.push(`${entry.path}.${key}: ${error.message}`)
        }
      }
      statements.push({ table, step })
    }
    compiled.set(action.name, { data: action, schema: paramsSchema(action), validate: paramsValidator(action), guard, statements })
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return compiled
}

/** A guard that cannot be evaluated for these params (say, arithmetic on a string) denies. */
function guardCondition (runtime: ActionRuntime, guard: Expr, globals: Row): ReturnType<typeof toCondition> {
  try {
    const { dialect } = runtime.executor
    return toCondition(compile(guard, { dialect, table: guardTable(dialect), globals, seesHidden: true }))
  } catch (error) {
    if (error instanceof ExpressionError) return false
    throw error
  }
}

/** Runs an action as `auth` (anonymous by default) with the same validation, guard and execution as HTTP. */
export async function runAction (runtime: ActionRuntime, action: CompiledAction, input: unknown, options: RunOptions = {}): Promise<unknown> {
  const auth = options.auth ?? ANONYMOUS
  const { data } = action
  if (data.requireAuth === true && auth.uid === null) throw errors.unauthorized()
  const raw: Row = isObject(input) ? input : {}
  const globals = (params: Row) => ({ auth: authGlobals(auth), params, request: options.request ?? {} })
  // A guard that folds to a constant is decided now, before anything runs (it sees the params as sent).
  const guard = action.guard === undefined ? true : guardCondition(runtime, action.guard, globals(raw))
  if (guard === false) throw errors.forbidden()
  const params = action.validate(input ?? {})
  const checkGuard = async (trx: Knex.Transaction): Promise<void> => {
    if (guard === true) return
    const rows = runtime.executor.dialect.rawRows(await trx.raw(`SELECT CASE WHEN ${guard.sql} THEN 1 ELSE 0 END AS ok`, guard.bindings))
    if (Number(rows[0]?.ok) !== 1) throw errors.forbidden()
  }
  const code = action.code
  if (code !== undefined) {
    return await runtime.executor.db.transaction(async (trx) => {
      await checkGuard(trx)
      return await code.handler({ params, caller: auth, tables: runtime.tablesWithin?.(trx), db: trx, request: options.request ?? {} })
    })
  }
  const files = new FileTracker(runtime.storage)
  const work = async (trx: Knex.Transaction): Promise<Row[][]> => {
    await checkGuard(trx)
    const results: Row[][] = []
    for (const statement of action.statements) {
      const executor = trx.isTransaction === true ? withinTransaction(runtime.executor, trx) : runtime.executor
      const ctx = crudContext(executor, statement.table, auth, { globals: { params, request: options.request ?? {} }, applyRules: data.applyTableRules !== false, files, requestId: options.requestId })
      // SQL mode skips the rules, never a table's need for a second factor (decision D127); checked
      // before the try, which would report any error of the developer's SQL as a 500.
      if (statement.sql !== undefined && statement.sql.type !== 'SELECT') assertAssurance(ctx)
      try {
        results.push(statement.sql !== undefined
          ? await runSqlQuery({ ...ctx, applyRules: false }, trx, data.name, statement.sql, params)
          : await runStep(ctx, data.name, statement.step))
      } catch (error) {
        const written = statement.sql !== undefined ? list(statement.sql.values) : list(statement.step?.values)
        const translated = await translateDbError(ctx, error, written as Row[])
        // Other database errors in the developer's own SQL are misconfiguration: a 500, whatever the driver says.
        if (translated === error && statement.sql !== undefined) throw new Error(`Action ${data.name}: query ${results.length + 1} failed`, { cause: error })
        throw translated
      }
    }
    return results
  }
  // One statement with no database guard is atomic by itself (a table step opens its own
  // transaction where it needs one): no BEGIN/COMMIT around it.
  const results = guard === true && action.statements.length === 1 && atomicAlone(action.statements[0])
    ? await work(runtime.executor.db as Knex.Transaction)
    : await runtime.executor.db.transaction(work)
  await files.settle(runtime.executor.db, true)
  return results
}

/** A SQL-mode insert of several rows may take several statements; everything else is one, or manages its own. */
function atomicAlone (statement: CompiledAction['statements'][number]): boolean {
  return statement.sql === undefined || statement.sql.type !== 'INSERT' || list(statement.sql.values).length <= 1
}

/** The writes of the SQL-mode statements, for the record hooks they cannot run (lib/crud/record-hooks.ts). */
export function sqlWritesOf (actions: Map<string, CompiledAction>): SqlWrite[] {
  const writes: SqlWrite[] = []
  for (const [name, action] of actions) {
    for (const { table, sql } of action.statements) {
      if (sql !== undefined && sql.type !== 'SELECT') writes.push({ action: name, table: table.name, statement: sql.type, or: sql.or })
    }
  }
  return writes
}

/** The code actions as compiled actions: guards checked like the config's, names unique across both. */
export function compileCodeActionsWith (code: ReadonlyArray<CodeAction<any, any, any>>, config: Map<string, CompiledAction>, dialect: Dialect): Map<string, CompiledAction> {
  const compiled = new Map<string, CompiledAction>()
  const problems: string[] = []
  for (const [name, action] of compileCodeActions(code, new Set(config.keys()))) {
    const guard = compileGuard(action.data, dialect, `actions option (${name}).guard`, problems)
    compiled.set(name, { data: action.data, schema: action.schema, validate: action.validate, guard, statements: [], code: { handler: action.handler, result: action.result } })
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return compiled
}
