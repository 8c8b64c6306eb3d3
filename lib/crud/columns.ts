// Select/returning lists, order and group: caller text -> checked SQL.
import type { Knex } from 'knex'
import type { TableField } from '../../schemas/config.js'
import type { Fragment } from '../dialects/types.js'
import { parseColumns, compile, toFragment, ExpressionError, AGGREGATES, type Expr, type ListItem } from '../expr/index.js'
import { errors } from '../errors.js'
import { scopeOf, checkLength, type CrudContext } from './context.js'

export interface OutputColumn {
  /** Key in the response object. */
  key: string
  fragment: Fragment
  /** Set when the column is a plain table column: used to decode its value. */
  field?: TableField
  aggregate: boolean
}

export type ListSpec = string | string[] | undefined

// PostgreSQL truncates longer identifiers, which would rename the response key.
const MAX_KEY_LENGTH = 63

function hasAggregate (expr: Expr): boolean {
  switch (expr.type) {
    case 'call': return AGGREGATES.has(expr.name) || expr.args.some(hasAggregate)
    case 'binary': return hasAggregate(expr.left) || hasAggregate(expr.right)
    case 'unary': return hasAggregate(expr.arg)
    case 'list': return expr.items.some(hasAggregate)
    default: return false
  }
}

function texts (spec: ListSpec): string[] {
  return spec === undefined ? [] : Array.isArray(spec) ? spec : [spec]
}

/** The caller's list items; `*` is one of them (a second `*` repeats every key and fails as a duplicate). */
function items (ctx: CrudContext, what: string, spec: ListSpec): ListItem[] {
  const list = texts(spec)
  if (list.length > ctx.limits.columns) throw tooManyColumns(ctx, what)
  const parsed: ListItem[] = []
  for (const text of list) {
    checkLength(ctx, what, text)
    try {
      parsed.push(...parseColumns(text))
    } catch (error) {
      if (error instanceof ExpressionError) throw errors.expression(what, error.message)
      throw error
    }
    if (parsed.length > ctx.limits.columns) throw tooManyColumns(ctx, what)
  }
  return parsed
}

function tooManyColumns (ctx: CrudContext, what: string) {
  return errors.expression(what, `more than ${ctx.limits.columns} columns`)
}

function fieldColumn (ctx: CrudContext, field: TableField): OutputColumn {
  return { key: field.name, fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(field.name)}`, bindings: [] }, field, aggregate: false }
}

/** The columns of a select (`select`) or of a write's `returning`; empty spec = every visible field. */
export function outputColumns (ctx: CrudContext, what: 'select' | 'returning', spec: ListSpec): OutputColumn[] {
  const list = items(ctx, what, spec)
  const visible = ctx.table.visibleFields(ctx.auth.admin)
  if (list.length === 0) return visible.map((f) => fieldColumn(ctx, f))
  const columns: OutputColumn[] = []
  for (const item of list) {
    if (item.expr === '*') {
      columns.push(...visible.map((f) => fieldColumn(ctx, f)))
      continue
    }
    let compiled
    try {
      compiled = compile(item.expr, scopeOf(ctx, { aggregates: what === 'select' }))
    } catch (error) {
      if (error instanceof ExpressionError) throw errors.expression(what, error.message)
      throw error
    }
    const key = item.alias ?? (compiled.kind === 'sql' && compiled.field !== undefined && item.expr.type === 'ident' ? compiled.field.name : item.source.replace(/\s+/g, ' '))
    if (key.includes('?') || key.length > MAX_KEY_LENGTH) throw errors.expression(what, `"${item.source}" needs an alias (expression as name)`)
    columns.push({
      key,
      fragment: toFragment(compiled, scopeOf(ctx)),
      field: item.alias === undefined && item.expr.type === 'ident' && compiled.kind === 'sql' ? compiled.field : undefined,
      aggregate: hasAggregate(item.expr)
    })
  }
  const seen = new Set<string>()
  for (const c of columns) {
    if (seen.has(c.key)) throw errors.expression(what, `duplicate column "${c.key}"`)
    seen.add(c.key)
  }
  return columns
}

export function selectList (db: Knex, ctx: CrudContext, columns: OutputColumn[]): Knex.Raw[] {
  return columns.map((c) => db.raw(`${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`, c.fragment.bindings as Knex.RawBinding[]))
}

export function decodeRow (ctx: CrudContext, columns: OutputColumn[], row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const c of columns) out[c.key] = ctx.dialect.decode(c.field, row[c.key])
  return out
}

function names (ctx: CrudContext, what: 'order' | 'group', spec: ListSpec): string[] {
  const out: string[] = []
  for (const text of texts(spec)) {
    checkLength(ctx, what, text)
    for (const part of text.split(',')) {
      const name = part.trim()
      if (name === '') continue
      if (out.length === ctx.limits.orderTerms) throw errors.expression(what, `more than ${ctx.limits.orderTerms} terms`)
      out.push(name)
    }
  }
  return out
}

const ORDER_ITEM = /^([+-])?\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?$/i

/** `-created, title`, `created DESC`, `['+a', 'b asc']` -> ORDER BY SQL. Names: visible columns or output keys. */
export function orderSql (ctx: CrudContext, spec: ListSpec, columns: OutputColumn[]): string | undefined {
  const parts = names(ctx, 'order', spec).map((item) => {
    const m = ORDER_ITEM.exec(item)
    if (m === null) throw errors.expression('order', `"${item}" is not a column name with an optional +, - or ASC/DESC`)
    const [, sign, name, direction] = m
    const known = columns.some((c) => c.key === name) || ctx.table.visibleFields(ctx.auth.admin).some((f) => f.name === name)
    if (!known) throw errors.expression('order', `Unknown column "${name}"`)
    const desc = sign === '-' || direction?.toLowerCase() === 'desc'
    return `${ctx.dialect.quote(name)} ${desc ? 'DESC' : 'ASC'}`
  })
  return parts.length > 0 ? parts.join(', ') : undefined
}

export function groupSql (ctx: CrudContext, spec: ListSpec): string | undefined {
  const parts = names(ctx, 'group', spec).map((name) => {
    if (!ctx.table.visibleFields(ctx.auth.admin).some((f) => f.name === name)) throw errors.expression('group', `Unknown column "${name}"`)
    return `${ctx.table.quoted}.${ctx.dialect.quote(name)}`
  })
  return parts.length > 0 ? parts.join(', ') : undefined
}
