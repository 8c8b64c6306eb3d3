// Select/returning lists, order and group: caller text -> checked SQL.
import type { Knex } from 'knex'
import type { TableField } from '../../schemas/config.js'
import type { Binding, Fragment } from '../dialects/types.js'
import { parseColumns, compile, toFragment, isFunction, rowidField, readField, fieldRuled, ExpressionError, AGGREGATES, type Expr, type ListItem } from '../expr/index.js'
import { errors } from '../errors.js'
import { scopeOf, checkLength, compileCaller, type CrudContext } from './context.js'
import { relationOf, expansionContext, expansionFragment, type Call, type Relation } from './expand.js'

export interface OutputColumn {
  /** Key in the response object. */
  key: string
  fragment: Fragment
  /** Set when the column is a plain table column: used to decode its value. */
  field?: TableField
  aggregate: boolean
  /** Set for an expanded relation (lib/crud/expand.ts): the columns of its nested object. */
  nested?: OutputColumn[]
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
  const scope = scopeOf(ctx)
  // A field with a field rule reads as null where the rule does not hold for this caller (decision D96).
  const fragment = fieldRuled(field.name, scope) ? toFragment(readField(field.name, scope), scope) : { sql: `${ctx.table.quoted}.${ctx.dialect.quote(field.name)}`, bindings: [] }
  return { key: field.name, fragment, field, aggregate: false }
}

/** The columns of a select (`select`) or of a write's `returning`; empty spec = every visible field. */
export function outputColumns (ctx: CrudContext, what: 'select' | 'returning', spec: ListSpec): OutputColumn[] {
  const list = items(ctx, what, spec)
  const visible = ctx.table.visibleFields(ctx.auth.admin)
  if (list.length === 0) return visible.map((f) => fieldColumn(ctx, f))
  const columns: OutputColumn[] = []
  try {
    for (const item of list) {
      if (item.expr === '*') columns.push(...visible.map((f) => fieldColumn(ctx, f)))
      else columns.push(listColumn(ctx, what, item, item.expr))
    }
  } catch (error) {
    if (error instanceof ExpressionError) throw errors.expression(what, error.message)
    throw error
  }
  const duplicate = duplicateKey(columns)
  if (duplicate !== undefined) throw errors.expression(what, `duplicate column "${duplicate}"`)
  // Each item counts as one column (a `*` too); an expansion adds the columns of its objects.
  const expanded = columns.reduce((n, c) => n + (c.nested === undefined ? 0 : columnWidth(c.nested)), 0)
  if (list.length + expanded > ctx.limits.columns) throw tooManyColumns(ctx, what)
  // Each one is a subquery run for every row of the answer: their number, not the columns they
  // yield, is what a list costs (`a(b(c(id)))` is one column and three subqueries).
  if (relationCount(columns) > ctx.limits.relations) throw errors.expression(what, `more than ${ctx.limits.relations} relations (limits.relations: each level of each expansion counts one)`)
  return columns
}

function relationCount (columns: OutputColumn[]): number {
  return columns.reduce((n, c) => n + (c.nested === undefined ? 0 : 1 + relationCount(c.nested)), 0)
}

/** Values per row: an expanded relation counts the values of its object. */
export function columnWidth (columns: OutputColumn[]): number {
  return columns.reduce((n, c) => n + (c.nested === undefined ? 1 : columnWidth(c.nested)), 0)
}

function duplicateKey (columns: OutputColumn[]): string | undefined {
  const seen = new Set<string>()
  for (const c of columns) {
    if (seen.has(c.key)) return c.key
    seen.add(c.key)
  }
  return undefined
}

function listColumn (ctx: CrudContext, what: 'select' | 'returning', item: ListItem, expr: Expr): OutputColumn {
  if (expr.type === 'call') {
    const relation = relationOf(ctx, expr)
    if (relation !== undefined) return topExpansion(ctx, expr, relation, item.alias)
    if (!isFunction(expr.name)) throw new ExpressionError(`Unknown function or relation "${expr.name}": ${ctx.table.name} has no foreign key field of that name, nor one referencing a table of that name`, expr.pos)
  }
  const compiled = compile(expr, scopeOf(ctx, { aggregates: what === 'select' }))
  // A relation path (`post_id.title`) is keyed by its text and decoded as the field it reads (decision D95).
  const path = expr.type === 'ident' && expr.path.length > (expr.path[0] === ctx.table.name ? 2 : 1)
  const key = item.alias ?? (compiled.kind === 'sql' && compiled.field !== undefined && expr.type === 'ident' && !path ? compiled.field.name : item.source.replace(/\s+/g, ' '))
  if (key.includes('?') || key.length > MAX_KEY_LENGTH) throw errors.expression(what, `"${item.source}" needs an alias (expression as name)`)
  return {
    key,
    fragment: toFragment(compiled, scopeOf(ctx)),
    field: (item.alias === undefined || path) && expr.type === 'ident' && compiled.kind === 'sql' ? compiled.field : undefined,
    aggregate: hasAggregate(expr)
  }
}

/**
 * An expansion as a list item. Its key may be a foreign key field's name (the record schema takes an
 * object there) but no other field's: the response serializer would write the object as that field's type.
 */
function topExpansion (ctx: CrudContext, call: Call, relation: Relation, alias: string | undefined): OutputColumn {
  const key = alias ?? relation.name
  const field = ctx.table.fields.get(key)
  if (field !== undefined && field.foreignKey === undefined) throw new ExpressionError(`"${key}" is a field of ${ctx.table.name}: give the relation another name (${call.name}(...) as name)`, call.pos)
  if (key.length > MAX_KEY_LENGTH) throw new ExpressionError(`"${key}" is too long a name: give the relation a shorter one (as name)`, call.pos)
  return expansion(ctx, call, relation, key, 1)
}

/** `relation(...)` at `depth`: a nested object of columns, `*` (or nothing) for every visible one, and relations of the target. */
function expansion (ctx: CrudContext, call: Call, relation: Relation, key: string, depth: number): OutputColumn {
  // A subquery per row of the answer: the statement is costly (decision D85).
  ctx.budget.costly = true
  const inner = expansionContext(ctx, relation, depth, call.pos)
  const nested = call.star || call.args.length === 0
    ? inner.table.visibleFields(ctx.auth.admin).map((f) => fieldColumn(inner, f))
    : call.args.map((arg) => nestedColumn(inner, call, arg, depth))
  if (nested.length === 0) throw new ExpressionError(`${relation.target.name} has no columns you may select`, call.pos)
  const duplicate = duplicateKey(nested)
  if (duplicate !== undefined) throw new ExpressionError(`duplicate column "${duplicate}" in ${call.name}(...)`, call.pos)
  return { key, fragment: expansionFragment(ctx, inner, relation, nested), nested, aggregate: false }
}

/** One item inside `relation(...)`: a column of the target, or a relation of it (keyed by its name). */
function nestedColumn (ctx: CrudContext, call: Call, arg: Expr, depth: number): OutputColumn {
  if (arg.type === 'call') {
    const relation = relationOf(ctx, arg)
    if (relation === undefined) throw new ExpressionError(`"${arg.name}" is not a relation of ${ctx.table.name}: ${call.name}(...) takes column names, * or relations (foreign key fields, or tables they reference)`, arg.pos)
    return expansion(ctx, arg, relation, relation.name, depth + 1)
  }
  const compiled = arg.type === 'ident' ? compile(arg, scopeOf(ctx)) : undefined
  if (compiled?.kind !== 'sql' || compiled.field === undefined) throw new ExpressionError(`${call.name}(...) takes column names, * or relations`, arg.pos)
  return { key: compiled.field.name, fragment: toFragment(compiled, scopeOf(ctx)), field: compiled.field, aggregate: false }
}

export function selectList (db: Knex, ctx: CrudContext, columns: OutputColumn[]): Knex.Raw[] {
  return columns.map((c) => db.raw(`${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`, c.fragment.bindings))
}

/**
 * Whether rows holding exactly `columns` (a statement's select or RETURNING list) are their answer as
 * the driver reads them: every column a plain field the dialect reads as is (Dialect#readsAsIs), no
 * expansion. Such rows need no decodeRow.
 */
export function answeredAsIs (ctx: CrudContext, columns: readonly OutputColumn[]): boolean {
  return columns.every((c) => c.nested === undefined && c.field !== undefined && ctx.dialect.readsAsIs(c.field))
}

export function decodeRow (ctx: CrudContext, columns: OutputColumn[], row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const c of columns) out[c.key] = c.nested === undefined ? ctx.dialect.decode(c.field, row[c.key]) : decodeObject(ctx, c.nested, row[c.key])
  return out
}

/** An expanded relation's JSON (text on SQLite, also when nested; parsed by the driver on PostgreSQL), decoded like a row. */
function decodeObject (ctx: CrudContext, columns: OutputColumn[], value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null
  return decodeRow(ctx, columns, (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>)
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

const ORDER_ITEM = /^([+-])?\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\s+(asc|desc))?$/i

/**
 * `-created, title`, `created DESC`, `['+a', 'b asc']` -> ORDER BY SQL. Names: visible columns or
 * output keys, or a relation path (`post_id.title`, read as the caller sees the post: decision D95).
 */
export function orderSql (ctx: CrudContext, spec: ListSpec, columns: OutputColumn[]): Fragment | undefined {
  const bindings: Binding[] = []
  const parts = names(ctx, 'order', spec).map((item) => {
    const m = ORDER_ITEM.exec(item)
    if (m === null) throw errors.expression('order', `"${item}" is not a column name or a relation path with an optional +, - or ASC/DESC`)
    const [, sign, given, direction] = m
    const desc = sign === '-' || direction?.toLowerCase() === 'desc'
    // SQLite sorts NULL below every value, PostgreSQL above: saying where nulls go makes both answer
    // alike. Not for never-null columns, so PostgreSQL can still read their order off an index.
    const nullsLast = desc ? ' NULLS LAST' : ' NULLS FIRST'
    if (given.includes('.') && !columns.some((c) => c.key === given)) {
      const path = toFragment(compileCaller(ctx, 'order', given), scopeOf(ctx))
      bindings.push(...path.bindings)
      return `${path.sql} ${desc ? 'DESC' : 'ASC'}${nullsLast}`
    }
    const isKnown = (n: string) => columns.some((c) => c.key === n) || ctx.table.visibleFields(ctx.auth.admin).some((f) => f.name === n)
    // teenybase's `rowid` is the integer primary key where there is one (as in where clauses).
    const name = !isKnown(given) && given.toLowerCase() === 'rowid' ? rowidField(ctx.table.fields)?.name ?? given : given
    const column = columns.find((c) => c.key === name)
    const known = isKnown(name)
    if (!known) throw errors.expression('order', `Unknown column "${name}"`)
    if (column?.nested !== undefined) throw errors.expression('order', `"${name}" is an expanded relation: sorting by it builds its object for every matching row, not only the page's; order by a field (give the relation another name to order by its foreign key field)`)
    const field = column?.field ?? ctx.table.fields.get(name)
    if (column === undefined && fieldRuled(name, scopeOf(ctx))) {
      // Sorted by the value as this caller reads it, never by one it may not see (decision D96).
      const ruled = toFragment(readField(name, scopeOf(ctx)), scopeOf(ctx))
      bindings.push(...ruled.bindings)
      return `${ruled.sql} ${desc ? 'DESC' : 'ASC'}${nullsLast}`
    }
    const nulls = field !== undefined && (field.notNull === true || field.primary === true) ? '' : nullsLast
    return `${ctx.dialect.quote(name)} ${desc ? 'DESC' : 'ASC'}${nulls}`
  })
  return parts.length > 0 ? { sql: parts.join(', '), bindings } : undefined
}

/**
 * In a grouped or aggregate select every other column must be a group term: PostgreSQL refuses the
 * rest, and SQLite would answer with a value from an arbitrary row of the group. Refused on both.
 */
export function checkGrouping (ctx: CrudContext, columns: OutputColumn[], group: ListSpec): void {
  const grouped = group === undefined ? [] : names(ctx, 'group', group)
  if (grouped.length === 0 && !columns.some((c) => c.aggregate)) return
  // Computed columns are left to the database: `lower(title)` is fine when `title` is grouped.
  const loose = columns.find((c) => !c.aggregate && (c.nested !== undefined || (c.field !== undefined && !grouped.includes(c.field.name))))
  if (loose !== undefined) throw errors.expression('select', `"${loose.key}" must be in group or inside an aggregate (count, sum, min, max, avg)`)
}

/**
 * DISTINCT compares whole rows, so with a relation in the list the database builds its object for
 * every matching row (twice for a list: page and count), however small the page: refused.
 */
export function checkDistinct (columns: OutputColumn[], distinct: boolean | undefined): void {
  const relation = distinct === true ? columns.find((c) => c.nested !== undefined) : undefined
  if (relation !== undefined) throw errors.expression('select', `"${relation.key}" is an expanded relation, which distinct cannot compare: select its foreign key field instead`)
}

export function groupSql (ctx: CrudContext, spec: ListSpec): string | undefined {
  const parts = names(ctx, 'group', spec).map((name) => {
    if (!ctx.table.visibleFields(ctx.auth.admin).some((f) => f.name === name)) throw errors.expression('group', `Unknown column "${name}"`)
    // Groups of values the caller may not read would count them (decision D96).
    if (fieldRuled(name, scopeOf(ctx))) throw errors.expression('group', `"${name}" has a field rule: callers cannot group by it`)
    return `${ctx.table.quoted}.${ctx.dialect.quote(name)}`
  })
  return parts.length > 0 ? parts.join(', ') : undefined
}
