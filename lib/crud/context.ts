// What every table operation needs: the connection (or transaction), the table, the caller.
import type { Knex } from 'knex'
import type { Dialect, Fragment } from '../dialects/types.js'
import type { TableDescriptor, RuleName } from '../table.js'
import type { AuthContext } from '../auth-context.js'
import { authGlobals } from '../auth-context.js'
import { compile, toCondition, parse, ExpressionError, type Compiled, type Scope } from '../expr/index.js'
import { errors } from '../errors.js'
import type { FileTracker } from '../files/tracker.js'
import type { DirectWriter, Reader } from '../db/connect.js'
import { runRead } from '../db/read.js'

export interface CrudContext {
  db: Knex | Knex.Transaction
  dialect: Dialect
  table: TableDescriptor
  auth: AuthContext
  /** Extra expression globals (`request`, `params`). */
  globals?: Record<string, unknown>
  /** Cap of `limit` (DECISIONS 7). */
  maxLimit: number
  /** false for action steps with applyTableRules: false. */
  applyRules: boolean
  /** Files uploaded by this request, and file values its writes release (files plugin). */
  files?: FileTracker
  /** Direct reads outside transactions, where the dialect offers them (SQLite). */
  reader?: Reader
  /** Direct single-statement writes outside transactions, where the dialect offers them (SQLite). */
  writer?: DirectWriter
}

export async function readRows (ctx: CrudContext, query: Knex.QueryBuilder): Promise<Array<Record<string, unknown>>> {
  return await runRead(ctx.reader, ctx.db, query)
}

export type Condition = Fragment | boolean

export function scopeOf (ctx: CrudContext, extra: Partial<Scope> = {}): Scope {
  return {
    dialect: ctx.dialect,
    table: ctx.table,
    globals: { request: {}, params: {}, ...ctx.globals, auth: authGlobals(ctx.auth) },
    seesHidden: ctx.auth.admin,
    ...extra
  }
}

/** Compiles caller text; expression errors become a 400 naming what was wrong. */
export function compileCaller (ctx: CrudContext, what: string, src: string, extra: Partial<Scope> = {}): Compiled {
  try {
    return compile(parse(src), scopeOf(ctx, extra))
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
  // Rules are the developer's own text: they may read hidden columns.
  return toCondition(compile(expr, scopeOf(ctx, { seesHidden: true, ...extra })))
}

export function and (...conditions: Condition[]): Condition {
  if (conditions.some((c) => c === false)) return false
  const parts = conditions.filter((c): c is Fragment => c !== true)
  if (parts.length === 0) return true
  if (parts.length === 1) return parts[0]
  return { sql: parts.map((p) => `(${p.sql})`).join(' AND '), bindings: parts.flatMap((p) => p.bindings) }
}

export function whereOf (ctx: CrudContext, where: string | undefined, extra: Partial<Scope> = {}): Condition {
  if (where === undefined || where.trim() === '') return true
  return toCondition(compileCaller(ctx, 'where', where, extra))
}

export function applyCondition<T extends Knex.QueryBuilder> (query: T, condition: Fragment | true): T {
  return condition === true ? query : query.whereRaw(condition.sql, condition.bindings as Knex.RawBinding[]) as T
}

/** `uid = :id`; an id that cannot be a value of the uid column matches nothing: 404. */
export function idCondition (ctx: CrudContext, id: string): Fragment {
  const uid = ctx.table.uid
  if (uid === undefined) throw errors.recordNotFound()
  const numeric = uid.type === 'integer' || uid.type === 'number'
  if (numeric && !/^-?\d+(\.\d+)?$/.test(id)) throw errors.recordNotFound()
  const literal = ctx.dialect.literal(numeric ? Number(id) : id, uid)
  return { sql: `${ctx.table.quoted}.${ctx.dialect.quote(uid.name)} = ${literal.sql}`, bindings: literal.bindings }
}
