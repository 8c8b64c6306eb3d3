// select, list and view.
import type { Knex } from 'knex'
import { errors } from '../errors.js'
import { rowsFor } from '../limits.js'
import { and, applyCondition, ruleCondition, ruleFirst, whereOf, idCondition, readRows, type CrudContext, type Condition } from './context.js'
import { outputColumns, selectList, decodeRow, orderSql, groupSql, type OutputColumn, type ListSpec } from './columns.js'

export interface ReadParams {
  where?: string
  order?: ListSpec
  sort?: ListSpec
  select?: ListSpec
  group?: ListSpec
  limit?: number
  offset?: number
  distinct?: boolean
}

type Row = Record<string, unknown>

interface Plan {
  columns: OutputColumn[]
  condition: Condition
  group?: string
  order?: string
}

function plan (ctx: CrudContext, params: ReadParams): Plan {
  const condition = ruleFirst(ruleCondition(ctx, 'listRule'), whereOf(ctx, params.where))
  const columns = outputColumns(ctx, 'select', params.select)
  const group = groupSql(ctx, params.group)
  return { columns, condition, group, order: orderSql(ctx, params.order ?? params.sort, columns) ?? defaultOrder(ctx, params, columns, group) }
}

/** Deterministic order on both dialects (DECISIONS 8): primary key, else what the rows are made of. */
function defaultOrder (ctx: CrudContext, params: ReadParams, columns: OutputColumn[], group?: string): string | undefined {
  if (group !== undefined) return group
  if (columns.some((c) => c.aggregate)) return undefined
  if (params.distinct === true || ctx.table.key.length === 0) return columns.map((_, i) => String(i + 1)).join(', ')
  return ctx.table.key.map((f) => `${ctx.table.quoted}.${ctx.dialect.quote(f.name)}`).join(', ')
}

function baseQuery (ctx: CrudContext, p: Plan, distinct: boolean): Knex.QueryBuilder {
  const db = ctx.db as Knex
  const list = selectList(db, ctx, p.columns)
  let query = db.from(ctx.table.name)
  query = distinct ? query.distinct(list) : query.select(list)
  query = applyCondition(query, p.condition as Exclude<Condition, false>)
  if (p.group !== undefined) query = query.groupByRaw(p.group)
  return query
}

/** Rows of one page: `limit`, capped by maxLimit and by the cells one answer may hold (DECISIONS 7, 38). */
function limitOf (ctx: CrudContext, limit: number | undefined, columns: number): number {
  return Math.min(limit ?? ctx.limits.maxLimit, ctx.limits.maxLimit, rowsFor(ctx.limits, columns))
}

export async function select (ctx: CrudContext, params: ReadParams): Promise<Row[]> {
  return await runSelect(ctx, plan(ctx, params), params)
}

async function runSelect (ctx: CrudContext, p: Plan, params: ReadParams): Promise<Row[]> {
  if (p.condition === false) return []
  let query = baseQuery(ctx, p, params.distinct === true)
  if (p.order !== undefined) query = query.orderByRaw(p.order)
  query = query.limit(limitOf(ctx, params.limit, p.columns.length))
  if (params.offset !== undefined && params.offset > 0) query = query.offset(params.offset)
  const rows = await readRows(ctx, query)
  return rows.map((row) => decodeRow(ctx, p.columns, row))
}

/** `{ items, total }`: total counts every matching row (groups, when grouped), ignoring limit and offset. */
export async function list (ctx: CrudContext, params: ReadParams): Promise<{ items: Row[], total: number }> {
  const p = plan(ctx, params)
  if (p.condition === false) return { items: [], total: 0 }
  const db = ctx.db as Knex
  const counted = params.group !== undefined || params.distinct === true
    ? db.count({ total: '*' }).from(baseQuery(ctx, p, params.distinct === true).as('fb_counted'))
    : applyCondition(db.from(ctx.table.name).count({ total: '*' }), p.condition as Exclude<Condition, false>)
  const [items, totals] = await Promise.all([runSelect(ctx, p, params), readRows(ctx, counted as Knex.QueryBuilder)])
  return { items, total: Number(totals[0].total) }
}

/** One record by uid, or 404 (missing, or hidden by the viewRule). */
export async function view (ctx: CrudContext, id: string, params: Pick<ReadParams, 'select' | 'where'>): Promise<Row> {
  const byId = idCondition(ctx, id)
  const condition = and(byId, ruleFirst(ruleCondition(ctx, 'viewRule'), whereOf(ctx, params.where)))
  if (condition === false) throw errors.recordNotFound()
  const columns = outputColumns(ctx, 'select', params.select)
  const db = ctx.db as Knex
  const rows = await readRows(ctx, applyCondition(db.from(ctx.table.name).select(selectList(db, ctx, columns)), condition).limit(1))
  if (rows.length === 0) throw errors.recordNotFound()
  return decodeRow(ctx, columns, rows[0])
}
