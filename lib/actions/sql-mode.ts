// SQL-mode queries: the developer's own SQL from the config, with `{:param}` placeholders bound as
// values (never spliced). Table rules do not apply; `*` and a SELECT without `selects` still hide
// `noSelect` fields from non-admins (decision D19).
import type { Knex } from 'knex'
import type { ActionSqlQuery, SqlQuery } from '../../schemas/config.js'
import type { Binding, Fragment } from '../dialects/types.js'
import type { CrudContext } from '../crud/context.js'
import { applyCondition } from '../crud/context.js'
import { selectList, decodeRow, type OutputColumn } from '../crud/columns.js'
import { raw, insertStatement, statementBatches, updateStatement, deleteStatement } from '../crud/statements.js'
import { errors } from '../errors.js'
import { rewriteRaise } from './raise.js'

type Row = Record<string, unknown>
type Value = SqlQuery | { l: unknown } | string | number | boolean | null

const PLACEHOLDER = /\{:([A-Za-z_][A-Za-z0-9_]*)\}/g

function paramValue (action: string, name: string, params: Row, local?: Record<string, unknown>): unknown {
  if (Object.hasOwn(params, name)) return params[name]
  if (local !== undefined && Object.hasOwn(local, name)) return local[name]
  throw errors.actionConfig(action, `missing parameter ${name}`)
}

/** Raw SQL with its `{:name}` placeholders turned into bound values. */
export function template (ctx: CrudContext, action: string, query: SqlQuery | string, params: Row): Fragment {
  const text = rewriteRaise(typeof query === 'string' ? query : query.q)
  const local = typeof query === 'string' ? undefined : query.p
  const bindings: Binding[] = []
  const sql = text.replace(PLACEHOLDER, (_m, name: string) => {
    const bound = ctx.dialect.literal(paramValue(action, name, params, local))
    bindings.push(...bound.bindings)
    return bound.sql
  })
  return { sql, bindings }
}

/** A `set` / `values` entry: `{q}` is SQL, anything else a value (a string may embed `{:param}`s). */
function valueFragment (ctx: CrudContext, action: string, column: string, value: Value, params: Row): Fragment {
  const field = ctx.table.fields.get(column)
  if (field === undefined) throw errors.actionConfig(action, `unknown column ${column} in ${ctx.table.name}`)
  if (value !== null && typeof value === 'object' && 'q' in value) {
    const f = template(ctx, action, value, params)
    return { sql: `(${f.sql})`, bindings: f.bindings }
  }
  let literal = value !== null && typeof value === 'object' && 'l' in value ? value.l : value
  if (typeof literal === 'string') {
    const whole = /^\{:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(literal)
    literal = whole !== null ? paramValue(action, whole[1], params) : literal.replace(PLACEHOLDER, (_m, name: string) => String(paramValue(action, name, params)))
  }
  return ctx.dialect.literal(literal ?? null, field)
}

/** `selects` / `returning`: `*` (visible fields), a column or SQL expression string, or `{ q, as }`. */
function columns (ctx: CrudContext, action: string, list: Array<string | { q: string, as: string }> | undefined, params: Row): OutputColumn[] {
  const visible = ctx.table.visibleFields(ctx.auth.admin)
  const column = (name: string): OutputColumn => ({ key: name, fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(name)}`, bindings: [] }, field: ctx.table.fields.get(name), aggregate: false })
  return (list ?? ['*']).flatMap((item) => {
    if (item === '*') return visible.map((f) => column(f.name))
    if (typeof item === 'string') return [ctx.table.fields.has(item) ? column(item) : { key: item, fragment: template(ctx, action, item, params), aggregate: false }]
    return [{ key: item.as, fragment: template(ctx, action, item, params), aggregate: false }]
  })
}

function whereOf (ctx: CrudContext, action: string, where: SqlQuery | string | undefined, params: Row): Fragment | true {
  return where === undefined ? true : template(ctx, action, where, params)
}

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

export async function runSqlQuery (ctx: CrudContext, trx: Knex.Transaction, action: string, query: ActionSqlQuery, callerParams: Row): Promise<Row[]> {
  const params = query.params === undefined ? callerParams : { ...query.params, ...callerParams }
  const where = whereOf(ctx, action, query.where, params)
  switch (query.type) {
    case 'SELECT': {
      const out = columns(ctx, action, query.selects, params)
      const list_ = selectList(trx, ctx, out)
      let q = trx.from(ctx.table.name)
      q = query.distinct === true ? q.distinct(list_) : q.select(list_)
      q = applyCondition(q, where)
      for (const g of query.groupBy ?? []) q = q.groupByRaw(rewriteRaise(g))
      for (const o of list(query.orderBy)) q = q.orderByRaw(rewriteRaise(o))
      if (query.limit !== undefined) q = q.limit(query.limit)
      if (query.offset !== undefined) q = q.offset(query.offset)
      // Knex types an untyped table's rows `any`: they are plain row objects.
      const rows: Row[] = await q
      return rows.map((row) => decodeRow(ctx, out, row))
    }
    case 'INSERT': {
      const out = query.returning === undefined ? [] : columns(ctx, action, query.returning, params)
      const values = query.values === undefined ? [] : Array.isArray(query.values) ? query.values : [query.values]
      const rows = values.map((v) => Object.fromEntries(Object.entries(v).map(([c, value]) => [c, raw(trx, valueFragment(ctx, action, c, value, params))])))
      const result: Row[] = []
      for (const batch of statementBatches(rows)) result.push(...await insertStatement(ctx, trx, batch, query.or, out))
      return result.map((row) => decodeRow(ctx, out, row))
    }
    case 'UPDATE': {
      const out = query.returning === undefined ? [] : columns(ctx, action, query.returning, params)
      const set = new Map(Object.entries(query.set ?? {}).map(([c, value]) => [c, valueFragment(ctx, action, c, value, params)]))
      if (set.size === 0) throw errors.actionConfig(action, 'UPDATE needs set')
      return (await updateStatement(ctx, trx, set, where, out, query.or)).map((row) => decodeRow(ctx, out, row))
    }
    case 'DELETE': {
      const out = query.returning === undefined ? [] : columns(ctx, action, query.returning, params)
      return (await deleteStatement(ctx, trx, where, out)).map((row) => decodeRow(ctx, out, row))
    }
  }
}
