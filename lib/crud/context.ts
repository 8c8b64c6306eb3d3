// What every table operation needs: the connection (or transaction), the table, the caller.
import type { Knex } from 'knex'
import type { Dialect, Fragment } from '../dialects/types.js'
import type { TableDescriptor, RuleName } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import { authGlobals } from '../auth-context.js'
import { compile, compileCondition, toCondition, parse, ExpressionError, type Compiled, type Condition, type Scope } from '../expr/index.js'
import { errors } from '../errors.js'
import type { FileTracker } from '../files/tracker.js'
import type { DirectRunner } from '../dialects/connection.js'
import type { Limits } from '../limits.js'
import { ExpressionBudget } from '../expr/budget.js'
import type { Trace } from '../expr/trace.js'
import { expressionHops } from '../expr/relations.js'
import type { ChangeSink } from './changes-port.js'
import type { AuthSource, RecordHooks } from './record-hooks.js'

export interface CrudContext {
  /** The connection, or the transaction the work is part of (a Knex.Transaction is a Knex; lib/db/after-commit.ts isTransaction tells them apart). */
  db: Knex
  dialect: Dialect
  table: TableDescriptor
  auth: AuthContext
  /**
   * Extra expression globals (`request`, `params`), or what makes them when first read: a route's
   * `request.*` is built only for a plan that reads it (decision D106).
   */
  globals?: Record<string, unknown> | (() => Record<string, unknown>)
  /** Bounds on one request: page size, columns, answer size (decisions D7, D38). */
  limits: Limits
  /** false for action steps with applyTableRules: false. */
  applyRules: boolean
  /** Files uploaded by this request, and file values its writes release (files plugin). */
  files?: FileTracker
  /** The dialect's fast path for single statements outside transactions; absent inside one. */
  direct?: DirectRunner
  /** Set while a plan is compiled for reuse (lib/crud/read-plans.ts). */
  trace?: Trace
  /** Where committed writes are reported (realtime, lib/crud/changes-port.ts); unset: nobody listens. */
  changes?: ChangeSink
  /** Record hooks (lib/crud/record-hooks.ts); unset: none. */
  hooks?: RecordHooks
  /** The request this work is for (in the logs of failing after-hooks). */
  requestId?: string
  /** What the request's caller text may still ask, and whether its statements are costly (decision D85); shared by every context made from this one. */
  budget: ExpressionBudget
  /** The auth flow this write is part of (record hooks' `event.source`): sign-up comes through the table's insert. */
  source?: AuthSource
}

export type { Condition } from '../expr/index.js'

/**
 * Where table operations run, shared by every request of an app: the connection, its dialect, the
 * SQLite fast paths, the bounds. Nothing else decides whether a statement takes a fast path.
 */
export interface Executor {
  db: Knex
  dialect: Dialect
  limits: Limits
  direct?: DirectRunner
  /** Every write made through this executor is reported here after its commit: the record hooks, and the realtime hub when realtime is on (lib/kernel/index.ts). */
  changes?: ChangeSink
  /** Record hooks, run around every write made through this executor. */
  hooks?: RecordHooks
}

/** The one way a CrudContext is made: routes, actions and server code all come here. */
export function crudContext (executor: Executor, table: TableDescriptor, auth: AuthContext, extra: Pick<Partial<CrudContext>, 'globals' | 'files' | 'applyRules' | 'requestId'> = {}): CrudContext {
  // Every field written out (no spread): one object shape for every context, made on every request.
  return {
    db: executor.db,
    dialect: executor.dialect,
    limits: executor.limits,
    direct: executor.direct,
    changes: executor.changes,
    hooks: executor.hooks,
    table,
    auth,
    applyRules: extra.applyRules ?? true,
    globals: extra.globals,
    files: extra.files,
    requestId: extra.requestId,
    budget: new ExpressionBudget(executor.limits)
  }
}

/** The executor of a transaction: its statements go through it, never a fast path beside it. */
export function withinTransaction (executor: Executor, trx: Knex.Transaction): Executor {
  return { db: trx, dialect: executor.dialect, limits: executor.limits, changes: executor.changes, hooks: executor.hooks }
}

const globalsCache = new WeakMap<CrudContext, Record<string, unknown>>()

/** What expressions read as `auth.*`, `request.*`, `params.*`: built once per context. */
export function globalsOf (ctx: CrudContext): Record<string, unknown> {
  let globals = globalsCache.get(ctx)
  if (globals === undefined) {
    const extra = typeof ctx.globals === 'function' ? ctx.globals() : ctx.globals
    globals = { request: {}, params: {}, ...extra, auth: authGlobals(ctx.auth) }
    globalsCache.set(ctx, globals)
  }
  return globals
}

/** Did this operation's expressions follow a relation? (realtime evaluates those on the database itself) */
export const followsRelations = (ctx: CrudContext): boolean => ctx.budget.hops.used > 0

/** The scope of the caller's own text: a path reads related rows as the caller sees them (admins: as they are). */
export function scopeOf (ctx: CrudContext, extra: Partial<Scope> = {}): Scope {
  return {
    dialect: ctx.dialect,
    table: ctx.table,
    globals: globalsOf(ctx),
    seesHidden: ctx.auth.admin,
    trace: ctx.trace,
    budget: ctx.budget,
    callerReads: ctx.auth.admin ? undefined : true,
    readsFieldRules: ctx.auth.superadmin ? undefined : true,
    expressionHops: expressionHops(),
    requestHops: ctx.budget.hops,
    ...extra
  }
}

/** The scope of a rule: the developer's own text, which may read hidden columns and reads related rows as they are. */
export function ruleScope (ctx: CrudContext, extra: Partial<Scope> = {}): Scope {
  return scopeOf(ctx, { seesHidden: true, trusted: true, callerReads: undefined, readsFieldRules: undefined, ...extra })
}

/** Caller text longer than `limits.expressionLength` is refused before anything reads it. */
export function checkLength (ctx: CrudContext, what: string, src: string): void {
  if (src.length > ctx.limits.expressionLength) throw errors.expression(what, `longer than ${ctx.limits.expressionLength} characters`)
}

/** Compiles caller text; expression errors become a 400 naming what was wrong. */
export function compileCaller (ctx: CrudContext, what: string, src: string, extra: Partial<Scope> = {}, compiler = compile): Compiled {
  checkLength(ctx, what, src)
  try {
    return compiler(parse(src), scopeOf(ctx, extra))
  } catch (error) {
    if (error instanceof ExpressionError) throw errors.expression(what, error.message)
    throw error
  }
}

/** The rule condition for this caller: admins and rule-less action steps pass; a missing rule is 403. */
export function ruleCondition (ctx: CrudContext, rule: RuleName, extra: Partial<Scope> = {}): Condition {
  if (ctx.auth.admin || !ctx.applyRules) return true
  const expr = ctx.table.rules[rule]
  if (expr === null) throw errors.forbidden()
  // Rules are the developer's own text: they may read hidden columns, read related rows as they are, and are not held to the caller's budget.
  return toCondition(compileCondition(expr, ruleScope(ctx, extra)), ctx.trace)
}

/** With a fragment among them the conjunction is never `true`. */
export function and (first: Fragment, ...rest: Condition[]): Fragment | false
export function and (...conditions: Condition[]): Condition
export function and (...conditions: Condition[]): Condition {
  if (conditions.some((c) => c === false)) return false
  const parts = conditions.filter((c): c is Fragment => c !== true)
  if (parts.length === 0) return true
  if (parts.length === 1) return parts[0]
  return { sql: parts.map((p) => `(${p.sql})`).join(' AND '), bindings: parts.flatMap((p) => p.bindings) }
}

/**
 * The caller's condition under a rule, tested only on rows the rule lets through (decision D38).
 * In `rule AND where` the planner picks the order, and may test the caller's condition on a hidden
 * row first: an error it raises there (malformed JSON, a failed cast) or the time it takes would
 * tell the caller that the hidden row exists. CASE runs its branch only when its WHEN holds, on
 * both databases; the rule is also kept outside the CASE, where its indexes still serve.
 */
export function ruleFirst (rule: Condition, caller: Condition): Condition {
  if (rule === false || caller === false) return false
  if (rule === true) return caller
  if (caller === true) return rule
  // Plain comparisons with bound constants cannot fail and cost the same on every row: any order will do.
  if (caller.safe === true) return and(rule, caller)
  return {
    sql: `(${rule.sql}) AND (CASE WHEN (${rule.sql}) THEN (${caller.sql}) ELSE FALSE END)`,
    bindings: [...rule.bindings, ...rule.bindings, ...caller.bindings]
  }
}

export function whereOf (ctx: CrudContext, where: string | undefined, extra: Partial<Scope> = {}): Condition {
  if (where === undefined || where.trim() === '') return true
  return toCondition(compileCaller(ctx, 'where', where, extra, compileCondition), ctx.trace)
}

export function applyCondition<T extends Knex.QueryBuilder> (query: T, condition: Fragment | true): T {
  return condition === true ? query : query.whereRaw(condition.sql, condition.bindings) as T
}

/** Where a planned statement binds the record id (no expression can name it). */
export const ID_SLOT = '$id'

/** The id as a value of the uid column; an id that cannot be one matches nothing: 404. */
export function idValue (ctx: CrudContext, id: string): string | number {
  const uid = ctx.table.uid
  // No stored id holds a NUL byte (PostgreSQL text cannot).
  if (uid === undefined || id.includes('\0')) throw errors.recordNotFound()
  const numeric = uid.type === 'integer' || uid.type === 'number'
  if (!numeric) return id
  const value = Number(id)
  // Beyond 64 bits no row can have it.
  if (!/^-?\d+(\.\d+)?$/.test(id) || Math.abs(value) >= 2 ** 63) throw errors.recordNotFound()
  return value
}

/** `uid = :id` (bound per run when a plan is being built). */
export function idCondition (ctx: CrudContext, id: string): Fragment {
  const uid = ctx.table.uid
  // What idValue answers for a table without a uid, before anything reads it.
  if (uid === undefined) throw errors.recordNotFound()
  const literal = ctx.dialect.literal(idValue(ctx, id), uid)
  const bindings = ctx.trace === undefined ? literal.bindings : [ctx.trace.token({ path: ID_SLOT, field: uid })]
  return { sql: `${ctx.table.quoted}.${ctx.dialect.quote(uid.name)} = ${literal.sql}`, bindings }
}
