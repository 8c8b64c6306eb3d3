// The one compiler of the expression language: parsed expressions -> SQL fragments with bound values.
// Serves where filters, rules, update `set`, select/returning lists, and (later) action steps and guards.
// Caller text never reaches SQL: literals become bindings, identifiers are checked against the table.
import type { Expr, BinaryOp } from './parse.js'
import { ExpressionError } from './errors.js'
import { SQL_HINTS } from './parse.js'
import type { Binding, Dialect, Fragment } from '../dialects/types.js'
import type { TableField } from '../../schemas/config.js'
import { ValueError } from '../values.js'
import { likeMatch } from './like.js'
import { globalAt, type Literal, type Trace } from './trace.js'
import type { SearchIndex, SearchRank } from '../search/fts.js'
import { parseSearch, hasPhrase, MIN_TRIGRAM_LENGTH, SearchSyntaxError, type SearchQuery } from '../search/fts-query.js'
import type { ExpressionBudget } from './budget.js'
import { relationOf, spendHops, type HopBudget, type Relation } from './relations.js'

/** A compiled node: either a constant (folded at compile time) or SQL. */
export type Compiled =
  | { kind: 'lit', value: Literal, /** The global it came from (`auth.uid`). */ source?: string }
  | {
    kind: 'sql', sql: string, bindings: Binding[], field?: TableField, json?: { target: Fragment, path: (string | number)[] }, column?: true, growth?: number
    /**
     * Plain comparisons of columns with bound constants, and logic over them: cannot raise an error
     * and take the same time on any row, so a caller's condition made only of these needs no
     * rule-first guard (lib/crud/context.ts#ruleFirst) and keeps its indexes.
     */
    safe?: true
  }

/** A where/rule result: `true` (no filter), `false` (matches nothing) or a SQL condition. */
export type Condition = (Fragment & { safe?: true }) | boolean

/** What the compiler needs of a table: its names and its columns. A table descriptor is one. */
export interface ColumnResolver {
  name: string
  /** The table name, quoted for this dialect. */
  quoted: string
  fields: ReadonlyMap<string, TableField>
  /** The table's full-text index (`@@`), if it has one. */
  search?: SearchIndex
  /** Its foreign keys: the fields a path (`post_id.public`) may follow (lib/expr/relations.ts). */
  foreignKeys?: readonly Relation[]
  /** Who may read each field (decision D96): a caller reads a field only where its rule holds. */
  fieldRules?: ReadonlyMap<string, Expr>
}

export interface Scope {
  dialect: Dialect
  table: ColumnResolver
  /** `auth`, `request`, `params`: read-only values inlined as literals. */
  globals: Record<string, unknown>
  /** May the expression name `noSelect` columns? (admins; developer-written rules) */
  seesHidden: boolean
  /**
   * What `new.<field>` means: 'row' = the row's own column (create rules checked on the inserted row);
   * a map = the values an update writes (unwritten fields fall back to the column); absent = not allowed.
   */
  newValues?: 'row' | Map<string, Compiled>
  /** Are aggregate functions allowed? Only in select lists: in a WHERE or SET the databases refuse them. */
  aggregates?: boolean
  /** Set when the result is cached for other callers: records what the globals decided. */
  trace?: Trace
  /** Columns whose value is known before the statement runs (a row about to be inserted): read as constants. */
  rowValues?: ReadonlyMap<string, Literal>
  /** Collects each `@@` compiled, for a select to rank by (the first). */
  ranks?: SearchRank[]
  /**
   * The first `@@` (the one ranked) compiles to this constant instead, after the same checks: with it
   * false, does the rest still admit rows; with it true, what else is asked of a matching row
   * (lib/crud/read.ts#drivenBySearch).
   */
  firstSearchAs?: { value: boolean, done?: true }
  /** The request's budget (decision D85): what caller text draws from, and what marks its statements costly. */
  budget?: ExpressionBudget
  /** Developer text (rules): marks the budget's `costly`, is not counted against the caller's bounds. */
  trusted?: true
  /**
   * Whose eyes a path reads the related row with: set for a caller's own text (not an admin's), whose
   * path reads a related row only where the related table's listRule lets the caller see it, else
   * null; unset for rules, which read related rows as they are (decision D95).
   */
  callerReads?: true
  /**
   * Set for every caller's own text but a superadmin's (an editor or viewer of the panel too): a field
   * with a field rule reads null where its rule fails (decision D96). Unset for rules.
   */
  readsFieldRules?: true
  /** Relation hops this expression, and the operation it is part of, may still take. */
  expressionHops?: HopBudget
  requestHops?: HopBudget
  /** How many relation subqueries this node is inside (their aliases differ by it). */
  relationDepth?: number
  /**
   * The condition is for a statement that reads every row it admits (a list's count): a path it
   * compares with a constant compiles to a semi-join (#compileCondition) instead of a lookup per row.
   */
  semiJoins?: true
}

const GLOBAL_ROOTS = new Set(['auth', 'request', 'params'])

export const AGGREGATES = new Set(['count', 'sum', 'min', 'max', 'avg'])

/**
 * How many times longer than the stored values a text expression may make its result. replace()
 * multiplies, and nested replaces from a few stored bytes would build gigabytes per row.
 */
export const MAX_TEXT_GROWTH = 16

const FUNCTION_ARITY: Record<string, [number, number]> = {
  lower: [1, 1], upper: [1, 1], length: [1, 1], substring: [2, 3], substr: [2, 3], replace: [3, 3],
  concat: [1, 64], count: [0, 1], sum: [1, 1], min: [1, 1], max: [1, 1], avg: [1, 1], coalesce: [2, 64],
  abs: [1, 1], round: [1, 2], unixepoch: [0, 1], datetime: [0, 1], date: [0, 1], time: [0, 1],
  json_set: [3, 3], json_contains: [2, 2]
}

/** Is `name` (lower case) a function of the language? In a select list, any other call can only be a relation. */
export const isFunction = (name: string): boolean => Object.hasOwn(FUNCTION_ARITY, name)

export function compile (expr: Expr, scope: Scope): Compiled {
  switch (expr.type) {
    case 'literal': return { kind: 'lit', value: expr.value }
    case 'ident': return expr.param === true ? parameter(expr.path, expr.pos, scope) : identifier(expr.path, expr.pos, scope)
    case 'unary': return unary(expr.op, compile(expr.arg, scope), scope)
    case 'binary': return binary(expr, scope)
    case 'call': return call(expr, scope)
    case 'list': throw new ExpressionError('A list is only allowed after "in"', expr.pos)
  }
}

/** Renders a compiled node as SQL; a literal is bound (encoded for `field` when it is compared with one). */
export function toFragment (node: Compiled, scope: Scope, field?: TableField, pos = 0): Fragment {
  if (node.kind === 'sql') return { sql: node.sql, bindings: node.bindings }
  try {
    const fragment = scope.dialect.literal(node.value, field)
    // A bound global: the SQL text holds for any value of its type; the value is bound per caller.
    if (node.source !== undefined && scope.trace !== undefined && fragment.bindings.length === 1) {
      return { sql: fragment.sql, bindings: [scope.trace.token({ path: node.source, field })] }
    }
    return fragment
  } catch (error) {
    if (error instanceof ValueError) throw new ExpressionError(`${field?.name ?? 'value'} ${error.message}`, pos)
    throw error
  }
}

export function toCondition (node: Compiled, trace?: Trace): Condition {
  if (node.kind === 'lit') return truthy(constant(node, trace))
  const truth = truthOf(node)
  return truth.safe === true ? { sql: truth.sql, bindings: truth.bindings, safe: true } : { sql: truth.sql, bindings: truth.bindings }
}

/** A constant that is not null, or a column declared notNull. */
const neverNull = (node: Compiled): boolean => node.kind === 'lit' ? node.value !== null : node.column === true && node.field?.notNull === true

/** A column or a constant: what a safe comparison may compare. */
const plain = (node: Compiled): boolean => node.kind === 'lit' || node.column === true

function safe (node: Compiled & { kind: 'sql' }, isSafe: boolean): Compiled {
  if (isSafe) node.safe = true
  return node
}

/** A constant whose value is known to be a `V` (checked by `isLitOf`). */
type Lit<V extends Literal = Literal> = Compiled & { kind: 'lit', value: V }

const isLit = (node: Compiled): node is Lit => node.kind === 'lit'

/** A constant whose value passes `is` (a text, a number): what an operator that needs one checks. */
function isLitOf<V extends Literal> (node: Compiled, is: (value: Literal) => value is V): node is Lit<V> {
  return node.kind === 'lit' && is(node.value)
}
const isText = (value: Literal): value is string => typeof value === 'string'
const isTextOrNull = (value: Literal): value is string | null => value === null || typeof value === 'string'
const isKey = (value: Literal): value is string | number => typeof value === 'string' || typeof value === 'number'

const isNullConstant = (node: Lit): boolean => node.value === null && node.source === undefined

/** A literal's value where the value decides the SQL text: a global read this way is folded. */
function constant<V extends Literal> (node: Lit<V>, trace: Trace | undefined): V {
  if (node.source !== undefined) trace?.fold(node.source)
  return node.value
}

function truthy (value: Literal): boolean {
  return value !== null && value !== false && value !== 0 && value !== ''
}

const NUMBER_TYPES = new Set(['integer', 'number'])
const TEXT_TYPES = new Set(['text', 'email', 'url', 'editor', 'select', 'file', 'password'])

/**
 * A column used as a condition (`!title`, `published & title`, `where=title`) means what `truthy`
 * means for a constant, on both databases: a number is true unless 0, a text unless empty, null
 * stays null. PostgreSQL refuses a text or number where it wants a boolean, and SQLite would read
 * text as a number (`'abc'` as 0): both are given the comparison instead.
 */
function truthOf (node: Compiled & { kind: 'sql' }): Compiled & { kind: 'sql' } {
  if (node.column !== true || node.field === undefined) return node
  const { type, sqlType } = node.field
  const numeric = NUMBER_TYPES.has(type) || (type === 'relation' && (sqlType === 'integer' || sqlType === 'int'))
  if (numeric) return { ...sql(`(${node.sql} <> 0)`, node.bindings), safe: true }
  if (TEXT_TYPES.has(type) || (type === 'relation' && sqlType === 'text')) return { ...sql(`(${node.sql} <> '')`, node.bindings), safe: true }
  return node
}

function sql (text: string, bindings: Binding[], field?: TableField): Compiled & { kind: 'sql' } {
  return { kind: 'sql', sql: text, bindings, field }
}

function identifier (path: string[], pos: number, scope: Scope): Compiled {
  const [root, ...rest] = path
  if (GLOBAL_ROOTS.has(root) && rest.length > 0) {
    const source = path.join('.')
    scope.trace?.read(source)
    return { kind: 'lit', value: globalAt(scope.globals, source), source }
  }
  if (root === 'new' && rest.length > 0) return follow(newValue(rest[0], pos, scope), rest, pos, scope)
  // `posts.title` is the table's own column; any other dotted path follows relations.
  const own = root === scope.table.name && rest.length > 0 ? rest : path
  if (own.length > 1 && !scope.table.fields.has(own[0])) throw new ExpressionError(`Unknown column "${path.join('.')}"`, pos)
  return follow(column(own[0], pos, scope), own, pos, scope)
}

/**
 * `post_id.owner_id.role`: from the value of the first field (a column, or `new.<field>`), each
 * further name is read from the row its predecessor's foreign key references, as a scalar subquery
 * on the referenced column (an indexed lookup per row; null when the key is null or matches no row).
 */
function follow (start: Compiled, path: string[], pos: number, scope: Scope): Compiled {
  if (path.length === 1) return start
  spendHops(path.length - 1, scope.expressionHops, scope.requestHops, pos, scope.trusted === true)
  let value = start
  let from: ColumnResolver = scope.table
  for (let i = 1; i < path.length; i++) {
    const relation = relationOf(from, path[i - 1], pos)
    value = hop(value, relation, path[i], pos, scope)
    from = relation.target
  }
  return value
}

/** One hop: `name` of the row of `relation.target` whose referenced column equals `key`. */
function hop (key: Compiled, relation: Relation, name: string, pos: number, scope: Scope): Compiled {
  const inner = relatedScope(relation, scope)
  // A caller names only what it could name on the related table itself (no noSelect field).
  const value = column(name, pos, inner)
  if (key.kind === 'lit' && key.value === null) return { kind: 'lit', value: null }
  const keyFragment = toFragment(key, scope, relation.field, pos)
  const seen = seenBy(relation, inner, scope)
  if (seen === false) return { kind: 'lit', value: null }
  const where = and2(`${inner.table.quoted}.${scope.dialect.quote(relation.column.name)} = ${keyFragment.sql}`, keyFragment.bindings, seen)
  const read = toFragment(value, inner)
  return sql(`(SELECT ${read.sql} FROM ${relation.target.quoted} AS ${inner.table.quoted} WHERE ${where.sql})`, [...read.bindings, ...where.bindings], value.kind === 'sql' ? value.field : undefined)
}

/** The scope a hop reads the related row in: the target table under the next alias, the same caller. */
function relatedScope (relation: Relation, scope: Scope): Scope {
  const depth = (scope.relationDepth ?? 0) + 1
  const target = relation.target
  return {
    dialect: scope.dialect,
    table: { name: target.name, quoted: scope.dialect.quote(`fb_r${depth}`), fields: target.fields, search: target.search, foreignKeys: target.foreignKeys, fieldRules: target.fieldRules },
    globals: scope.globals,
    seesHidden: scope.seesHidden,
    callerReads: scope.callerReads,
    readsFieldRules: scope.readsFieldRules,
    trace: scope.trace,
    budget: scope.budget,
    trusted: scope.trusted,
    expressionHops: scope.expressionHops,
    requestHops: scope.requestHops,
    relationDepth: depth
  }
}

/** Which related rows a hop may read: all of them for a rule, those the target's listRule shows for a caller. */
function seenBy (relation: Relation, inner: Scope, scope: Scope): Condition {
  if (scope.callerReads !== true) return true
  // The related row as this caller may see it: its listRule, compiled as a rule (it reads as is).
  const rule = relation.target.rules.listRule
  return rule === null ? false : toCondition(compile(rule, { ...inner, seesHidden: true, trusted: true, callerReads: undefined, readsFieldRules: undefined }), scope.trace)
}

/** `first AND condition`, `condition` not false. */
function and2 (first: string, bindings: Binding[], condition: Condition): Fragment {
  return condition === true || condition === false ? { sql: first, bindings } : { sql: `${first} AND (${condition.sql})`, bindings: [...bindings, ...condition.bindings] }
}

/** Comparisons that are never true when the path reads null (the constant compared is not null). */
const SEMI_JOIN_OPS = new Set<BinaryOp>(['==', '=', '<', '<=', '>', '>='])

/**
 * An expression whose value is only ever read as a WHERE condition (a rule, a caller's where), where
 * null and false both leave the row out. In its top-level `&` and `|` (under no `!`), a path
 * compared with a constant that is not null (`post_id.owner_id.active == true`, `post_id.owner_id ==
 * auth.uid`) becomes a semi-join: `post_id IN (SELECT r1.id FROM posts r1 JOIN people r2 ON r2.id =
 * r1.owner_id WHERE r2.active = true)`. It holds for exactly the rows the per-row lookups (#follow)
 * make true: where the key is null or no (visible) row has it the path reads null and the comparison
 * is false or null, and IN is false or null there too. But it does not depend on the row, so the
 * databases build it once per statement (a hash semi-join on PostgreSQL, an ephemeral index on
 * SQLite) instead of looking each row's path up. Only where `scope.semiJoins` asks: building the set
 * reads every related row, which a page of 20 rows, found after a few lookups, should not pay
 * (decision D95).
 */
export function compileCondition (expr: Expr, scope: Scope): Compiled {
  if (expr.type !== 'binary' || scope.semiJoins !== true) return compile(expr, scope)
  if (expr.op === '&' || expr.op === '|') return logical(expr.op, compileCondition(expr.left, scope), compileCondition(expr.right, scope), scope.trace)
  return (SEMI_JOIN_OPS.has(expr.op) ? semiJoin(expr, scope) : undefined) ?? compile(expr, scope)
}

function semiJoin (expr: Expr & { type: 'binary' }, scope: Scope): Compiled | undefined {
  const onLeft = relationPath(expr.left, scope)
  const path = onLeft ?? relationPath(expr.right, scope)
  const other = onLeft !== undefined ? expr.right : expr.left
  if (path === undefined || !(other.type === 'literal' || (other.type === 'ident' && GLOBAL_ROOTS.has(other.path[0]) && other.path.length > 1))) return undefined
  const value = compile(other, scope)
  if (value.kind !== 'lit' || value.value === null) return undefined
  // What #identifier and #follow do, in their order: the first field, the hops spent, each relation and field checked.
  const first = column(path[0], expr.pos, scope)
  spendHops(path.length - 1, scope.expressionHops, scope.requestHops, expr.pos, scope.trusted === true)
  const hops: { key: Compiled, relation: Relation, outer: Scope, inner: Scope }[] = []
  let key = first
  let outer = scope
  for (let i = 1; i < path.length; i++) {
    const relation = relationOf(outer.table, path[i - 1], expr.pos)
    const inner = relatedScope(relation, outer)
    hops.push({ key, relation, outer, inner })
    key = column(path[i], expr.pos, inner)
    outer = inner
  }
  // A field read as a constant here is one a field rule hides (null): compared with a constant, never true.
  if (key.kind === 'lit') return { kind: 'lit', value: false }
  const compared = toFragment(onLeft !== undefined ? comparison(expr.op, key, value, outer, expr.pos) : comparison(expr.op, value, key, outer, expr.pos), outer)
  // One subquery that joins the hops after the first (SQLite plans a join better than nested INs).
  const seen = hops.map((h) => seenBy(h.relation, h.inner, h.outer))
  if (seen.includes(false) || hops.some((h) => h.key.kind === 'lit' && h.key.value === null)) return { kind: 'lit', value: false }
  const q = scope.dialect.quote
  const [head, ...joined] = hops
  const joins = joined.map((h) => {
    const on = toFragment(h.key, h.outer, h.relation.field, expr.pos)
    return { sql: ` JOIN ${h.relation.target.quoted} AS ${h.inner.table.quoted} ON ${h.inner.table.quoted}.${q(h.relation.column.name)} = ${on.sql}`, bindings: on.bindings }
  })
  const where = seen.reduce<Fragment>((w, s) => and2(w.sql, w.bindings, s), compared)
  const headKey = toFragment(head.key, head.outer, head.relation.field, expr.pos)
  const alias = head.inner.table.quoted
  return sql(`(${headKey.sql} IN (SELECT ${alias}.${q(head.relation.column.name)} FROM ${head.relation.target.quoted} AS ${alias}${joins.map((j) => j.sql).join('')} WHERE ${where.sql}))`,
    [...headKey.bindings, ...joins.flatMap((j) => j.bindings), ...where.bindings])
}

/** The fields of a path that follows relations from the scope's table (`post_id.public`), else undefined. */
function relationPath (side: Expr, scope: Scope): string[] | undefined {
  if (side.type !== 'ident' || side.param === true) return undefined
  const [root, ...rest] = side.path
  if (rest.length === 0 || GLOBAL_ROOTS.has(root) || root === 'new') return undefined
  const own = root === scope.table.name ? rest : side.path
  return own.length > 1 && scope.table.fields.has(own[0]) ? own : undefined
}

/**
 * `{:name}`: `params.name`, bound like any global (decision D88), except that a parameter not given
 * is an error rather than null, so a misspelt name never matches rows by accident.
 */
function parameter (path: string[], pos: number, scope: Scope): Compiled {
  const params = scope.globals.params
  if (params === null || typeof params !== 'object' || !Object.hasOwn(params, path[1])) throw new ExpressionError(`Unknown parameter {:${path[1]}}: it is not among the params given`, pos)
  return identifier(path, pos, scope)
}

function column (name: string, pos: number, scope: Scope): Compiled {
  const field = scope.table.fields.get(name) ?? (name.toLowerCase() === 'rowid' ? rowidField(scope.table.fields) : undefined)
  if (field === undefined || (field.noSelect === true && !scope.seesHidden)) {
    const hint = SQL_HINTS[name.toLowerCase()]
    throw new ExpressionError(`Unknown column "${name}"${hint ? ` (${hint})` : ''}`, pos)
  }
  const known = scope.rowValues?.get(field.name)
  if (known !== undefined) return { kind: 'lit', value: known }
  const stored: Compiled = { kind: 'sql', sql: `${scope.table.quoted}.${scope.dialect.quote(field.name)}`, bindings: [], field, column: true }
  const rule = scope.readsFieldRules === true ? scope.table.fieldRules?.get(field.name) : undefined
  return rule === undefined ? stored : ruledField(stored, rule, scope)
}

/**
 * A field with a field rule, read by a caller (decision D96): its value where the rule holds for
 * the row, else null. The rule is the developer's text, compiled as a rule on the same row.
 */
function ruledField (stored: Compiled & { kind: 'sql' }, rule: Expr, scope: Scope): Compiled {
  const ruleScope: Scope = { dialect: scope.dialect, table: scope.table, globals: scope.globals, seesHidden: true, trace: scope.trace, expressionHops: scope.expressionHops, requestHops: scope.requestHops, relationDepth: scope.relationDepth }
  const allowed = toCondition(compile(rule, ruleScope), scope.trace)
  if (allowed === true) return stored
  if (allowed === false) return { kind: 'lit', value: null }
  return sql(`(CASE WHEN ${allowed.sql} THEN ${stored.sql} END)`, allowed.bindings, stored.field)
}

/** A field of the scope's table as this scope reads it: hidden, ruled or plain (lib/crud/columns.ts answers with it). */
export function readField (name: string, scope: Scope): Compiled {
  return column(name, 0, scope)
}

/** Does this scope read `name` through a field rule? (a caller's order and group must not read past it) */
export const fieldRuled = (name: string, scope: Scope): boolean => scope.readsFieldRules === true && scope.table.fieldRules?.has(name) === true

/**
 * teenybase's `rowid`: SQLite's row number, which PostgreSQL has no equivalent of. Where the table's
 * primary key is an integer it is that number on SQLite too, so `rowid` names it on both databases;
 * elsewhere it is unknown, with a hint.
 */
export function rowidField (fields: ReadonlyMap<string, TableField>): TableField | undefined {
  const keys = [...fields.values()].filter((f) => f.primary === true)
  const key = keys.length === 1 ? keys[0] : undefined
  return key !== undefined && (key.sqlType === 'integer' || key.sqlType === 'int') ? key : undefined
}

/**
 * `new.<field>`: the value being written, else the stored one. Either way the field must be one the
 * expression may name: a caller's where cannot reach a noSelect column through `new.`, whether the
 * request writes it or not (rules, the developer's own text, see every column).
 */
function newValue (name: string, pos: number, scope: Scope): Compiled {
  if (scope.newValues === undefined) throw new ExpressionError('"new" is only available in update and create rules', pos)
  const stored = column(name, pos, scope)
  if (scope.newValues === 'row') return stored
  return scope.newValues.get(name) ?? stored
}

function unary (op: '!' | '-' | '+', arg: Compiled, scope: Scope): Compiled {
  if (arg.kind === 'lit') {
    const value = constant(arg, scope.trace)
    if (op === '!') return { kind: 'lit', value: value === null ? null : !truthy(value) }
    if (typeof value !== 'number') {
      if (value === null) return { kind: 'lit', value }
      throw new ExpressionError(`Unary "${op}" needs a number`, 0)
    }
    return { kind: 'lit', value: op === '-' ? -value : value }
  }
  if (op === '!') {
    const truth = truthOf(arg)
    return safe(sql(`(NOT ${truth.sql})`, truth.bindings), truth.safe === true)
  }
  return op === '-' ? sql(`(- ${arg.sql})`, arg.bindings) : arg
}

function binary (expr: Expr & { type: 'binary' }, scope: Scope): Compiled {
  if (expr.op === '@@') return search(expr, scope)
  const left = compile(expr.left, scope)
  if (expr.op === 'in') return inList(left, expr.right, scope)
  const right = compile(expr.right, scope)
  if (expr.op === '->' || expr.op === '->>') return jsonExtract(left, right, expr.op === '->>', expr.pos, scope)
  if (expr.op === '&' || expr.op === '|') return logical(expr.op, left, right, scope.trace)
  if (left.kind === 'lit' && right.kind === 'lit') {
    // Beside a null constant only the other side's null-ness can decide (`auth.uid != null`), and the
    // class of its read already holds that: folding its value would give every user a class (and a
    // plan) of their own (decision D76).
    if (isNullConstant(left) || isNullConstant(right)) return fold(expr.op, left.value, right.value, expr.pos)
    return fold(expr.op, constant(left, scope.trace), constant(right, scope.trace), expr.pos)
  }
  return comparison(expr.op, numericJson(left, right, scope), numericJson(right, left, scope), scope, expr.pos)
}

/**
 * `field @@ 'query'` / `table @@ 'query'` (decision D37): rows the full-text index finds for the
 * query. The text is known when the statement is built (a literal, or a global, folded) and is read
 * by fastbase's search grammar (lib/search/fts-query.ts), never handed to the database's own. The index
 * lookup cannot fail and does not depend on the row being tested, so it is safe before the rule
 * (docs/decisions.md).
 */
function search (expr: Expr & { type: 'binary' }, scope: Scope): Compiled {
  const index = scope.table.search
  if (index === undefined) throw new ExpressionError(`Table "${scope.table.name}" has no full-text search (fullTextSearch in its config)`, expr.pos)
  const fields = searchedFields(expr.left, index, scope)
  const right = compile(expr.right, scope)
  if (!isLitOf(right, isTextOrNull)) {
    throw new ExpressionError('The right side of @@ must be a text such as \'words\'', expr.right.pos)
  }
  const text = constant(right, scope.trace)
  if (text === null) return { kind: 'lit', value: null }
  const query = searchQuery(text, expr.right.pos, index.tokenize === 'trigram' ? MIN_TRIGRAM_LENGTH : 1)
  scope.budget?.search(expr.pos, scope.trusted === true)
  if (fields !== undefined && index.detail === 'none') throw new ExpressionError(`A search in some fields needs fullTextSearch detail "full" or "column" (table "${index.table}" has "none")`, expr.pos)
  if (hasPhrase(query) && index.detail !== undefined && index.detail !== 'full') throw new ExpressionError(`A "phrase" needs fullTextSearch detail "full" (table "${index.table}" has "${index.detail}")`, expr.right.pos)
  scope.ranks?.push({ index, fields, query })
  if (scope.firstSearchAs !== undefined && scope.firstSearchAs.done === undefined) {
    scope.firstSearchAs.done = true
    return { kind: 'lit', value: scope.firstSearchAs.value }
  }
  const match = scope.dialect.search.match(index, scope.table.quoted, fields, query)
  return safe(sql(match.sql, match.bindings), true)
}

function searchQuery (text: string, pos: number, minLength: number): SearchQuery {
  try {
    return parseSearch(text, minLength)
  } catch (error) {
    if (error instanceof SearchSyntaxError) throw new ExpressionError(`Invalid search text of @@: ${error.message}`, pos)
    throw error
  }
}

/**
 * The fields `@@` searches: one field (`title @@`, `posts.title @@`), or for the table (`posts @@`)
 * undefined = all of them, or the ones this caller may see when some are noSelect.
 */
function searchedFields (left: Expr, index: SearchIndex, scope: Scope): string[] | undefined {
  const path = left.type === 'ident' ? left.path : []
  const name = path.length === 1 ? path[0] : path.length === 2 && path[0] === scope.table.name ? path[1] : undefined
  if (name === undefined) throw new ExpressionError('The left side of @@ must be the table or one of its fullTextSearch fields', left.pos)
  if (path.length === 1 && name === scope.table.name && !scope.table.fields.has(name)) {
    // A field with a field rule is not searched for callers (decision D96): its words would match where it reads null.
    const visible = index.fields.filter((f) => (scope.seesHidden || scope.table.fields.get(f)?.noSelect !== true) && !fieldRuled(f, scope))
    if (visible.length === 0) throw new ExpressionError(`No fullTextSearch field of "${index.table}" is visible to this caller`, left.pos)
    return visible.length === index.fields.length ? undefined : visible
  }
  column(name, left.pos, scope)
  if (fieldRuled(name, scope)) throw new ExpressionError(`"${name}" has a field rule: callers cannot search it`, left.pos)
  if (!index.fields.includes(name)) throw new ExpressionError(`"${name}" is not one of the fullTextSearch fields of "${index.table}" (${index.fields.join(', ')})`, left.pos)
  return [name]
}

function logical (op: '&' | '|', left: Compiled, right: Compiled, trace: Trace | undefined): Compiled {
  // SQL three-valued logic; in a WHERE, NULL matches nothing, like false.
  if (left.kind === 'lit') {
    if (right.kind === 'lit') return { kind: 'lit', value: (op === '&' ? and3 : or3)(tri(constant(left, trace)), tri(constant(right, trace))) }
    return withKnown(op, left, right, trace)
  }
  if (right.kind === 'lit') return withKnown(op, right, left, trace)
  const l = truthOf(left)
  const r = truthOf(right)
  return safe(sql(`(${l.sql} ${op === '&' ? 'AND' : 'OR'} ${r.sql})`, [...l.bindings, ...r.bindings]), l.safe === true && r.safe === true)
}

/** One side of `&` / `|` is a constant: the other side, or the constant, decides. */
function withKnown (op: '&' | '|', known: Lit, sqlSide: Compiled & { kind: 'sql' }, trace: Trace | undefined): Compiled {
  const other = truthOf(sqlSide)
  const value = tri(constant(known, trace))
  if (op === '&') return value === true ? other : { kind: 'lit', value }
  return value === true ? { kind: 'lit', value: true } : other
}

type Tri = boolean | null
const tri = (v: Literal): Tri => (v === null ? null : truthy(v))
const and3 = (a: Tri, b: Tri): Tri => (a === false || b === false ? false : a === null || b === null ? null : true)
const or3 = (a: Tri, b: Tri): Tri => (a === true || b === true ? true : a === null || b === null ? null : false)

function comparison (op: BinaryOp, left: Compiled, right: Compiled, scope: Scope, pos: number): Compiled {
  const d = scope.dialect
  const field = (left.kind === 'sql' ? left.field : undefined) ?? (right.kind === 'sql' ? right.field : undefined)
  const isNull = (c: Compiled) => c.kind === 'lit' && c.value === null
  if ((op === '==' || op === '!=' || op === '=') && (isNull(left) || isNull(right))) {
    const otherNode = isNull(left) ? right : left
    // A stored notNull column is never null: `owner == auth.uid` for an anonymous caller folds to false,
    // so `published | owner == auth.uid` keeps an index-friendly shape.
    if (otherNode.kind === 'sql' && otherNode.column === true && otherNode.field?.notNull === true) return { kind: 'lit', value: op === '!=' }
    const other = toFragment(otherNode, scope)
    return safe(sql(`(${other.sql} IS ${op === '!=' ? 'NOT ' : ''}NULL)`, other.bindings), plain(otherNode))
  }
  if ((op === '~' || op === '!~') && (isNull(left) || isNull(right))) return { kind: 'lit', value: op === '!~' }
  // A LIKE pattern is text whatever the column (`views ~ '1%'`): it is not encoded as the column's type.
  const encodeAs = op === '~' || op === '!~' ? undefined : field
  const l = toFragment(left, scope, encodeAs, pos)
  const r = toFragment(right, scope, encodeAs, pos)
  const bindings = [...l.bindings, ...r.bindings]
  switch (op) {
    case '==': case '!=': {
      // Neither side can be null (a notNull column, a constant): plain `=` / `<>` mean the same and,
      // unlike PostgreSQL's IS [NOT] DISTINCT FROM, can use an index.
      const text = neverNull(left) && neverNull(right) ? `(${l.sql} ${op === '==' ? '=' : '<>'} ${r.sql})` : d.isDistinct(l.sql, r.sql, op === '==')
      return safe(sql(text, bindings), plain(left) && plain(right))
    }
    case '~': case '!~': return sql(d.like(l.sql, r.sql, op === '!~'), bindings)
    case '||': return withGrowth(sql(d.concat([l.sql, r.sql]), bindings), summed([left, right]), pos)
    case '=': case '<': case '<=': case '>': case '>=': return safe(sql(`(${l.sql} ${op} ${r.sql})`, bindings), plain(left) && plain(right))
    default: return sql(`(${l.sql} ${op} ${r.sql})`, bindings)
  }
}

/** `meta ->> 'n' > 3`: ask the dialect for a number when a JSON text value meets a number (decision D31). */
function numericJson (node: Compiled, other: Compiled, scope: Scope): Compiled {
  if (node.kind !== 'sql' || node.json === undefined || other.kind !== 'lit' || typeof other.value !== 'number') return node
  const fragment = scope.dialect.jsonExtract(node.json.target, node.json.path, true, true)
  return sql(fragment.sql, fragment.bindings)
}

function inList (left: Compiled, right: Expr, scope: Scope): Compiled {
  if (right.type !== 'list') throw new ExpressionError('"in" needs a list such as (1, 2)', right.pos)
  const items = right.items.map((item) => compile(item, scope))
  if (left.kind === 'lit' && items.every(isLit)) {
    const value = constant(left, scope.trace)
    return { kind: 'lit', value: items.some((i) => fold('==', value, constant(i, scope.trace), right.pos).value === true) }
  }
  const field = left.kind === 'sql' ? left.field : undefined
  const l = toFragment(left, scope, field, right.pos)
  const parts = items.map((i) => toFragment(i, scope, field, right.pos))
  return safe(sql(`(${l.sql} IN (${parts.map((p) => p.sql).join(', ')}))`, [...l.bindings, ...parts.flatMap((p) => p.bindings)]), plain(left) && items.every((i) => i.kind === 'lit'))
}

function jsonExtract (left: Compiled, right: Compiled, asText: boolean, pos: number, scope: Scope): Compiled {
  if (left.kind !== 'sql') throw new ExpressionError('The left side of a JSON operator must be a column', pos)
  if (!isLitOf(right, isKey)) {
    throw new ExpressionError('The right side of a JSON operator must be a path string such as \'$.a.b\' or an index', pos)
  }
  const path = jsonPath(constant(right, scope.trace), pos)
  const target = { sql: left.sql, bindings: left.bindings }
  const fragment = scope.dialect.jsonExtract(target, path, asText, false)
  return { kind: 'sql', sql: fragment.sql, bindings: fragment.bindings, json: asText ? { target, path } : undefined }
}

/** `'$.a.b[0]'`, `'a'` or `0` -> ['a', 'b', 0]. */
export function jsonPath (raw: string | number, pos: number): (string | number)[] {
  if (typeof raw === 'number') return [raw]
  if (!raw.startsWith('$')) return [raw]
  const path: (string | number)[] = []
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\."([^"]*)"|\[(\d+)\]/y
  let i = 1
  while (i < raw.length) {
    re.lastIndex = i
    const m = re.exec(raw)
    if (m === null) throw new ExpressionError(`Invalid JSON path "${raw}"`, pos)
    path.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2]))
    i = re.lastIndex
  }
  return path
}

function call (expr: Expr & { type: 'call' }, scope: Scope): Compiled {
  const arity = FUNCTION_ARITY[expr.name]
  if (arity === undefined) throw new ExpressionError(`Unknown function "${expr.name}"`, expr.pos)
  if (AGGREGATES.has(expr.name) && scope.aggregates !== true) throw new ExpressionError(`${expr.name}() is an aggregate: only allowed in a select list`, expr.pos)
  if (expr.star && expr.name !== 'count') throw new ExpressionError(`"*" is only allowed in count(*)`, expr.pos)
  const [min, max] = arity
  if (expr.args.length < min || expr.args.length > max) {
    throw new ExpressionError(`${expr.name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}`, expr.pos)
  }
  const compiled = expr.args.map((a) => compile(a, scope))
  const args = compiled.map((c) => toFragment(c, scope))
  const bindings = args.flatMap((a) => a.bindings)
  if (expr.name === 'json_contains') return sql(scope.dialect.jsonContains(args[0].sql, args[1].sql), bindings)
  if (expr.name === 'json_set') {
    const path = compiled[1]
    if (!isLitOf(path, isText)) throw new ExpressionError('json_set() needs a literal path such as \'$.a\'', expr.pos)
    const fragment = scope.dialect.jsonSet(args[0].sql, jsonPath(constant(path, scope.trace), expr.pos), args[2].sql)
    return sql(fragment.sql, [...args[0].bindings, ...fragment.bindings, ...args[2].bindings])
  }
  const text = scope.dialect.callFunction(expr.name, args.map((a) => a.sql))
  if (text === undefined) throw new ExpressionError(`Unknown function "${expr.name}"`, expr.pos)
  return withGrowth(sql(text, bindings), callGrowth(expr, compiled, scope.trace), expr.pos)
}

function growthOf (node: Compiled): number {
  return node.kind === 'sql' ? node.growth ?? 1 : 1
}

/** Growth of texts put end to end; constants add nothing (the expression's own length bounds them). */
function summed (parts: Compiled[]): number {
  return Math.max(1, parts.reduce((total, p) => total + (p.kind === 'sql' ? growthOf(p) : 0), 0))
}

/** Result length over input length: concat adds up its parts, replace multiplies by to/from. */
function callGrowth (expr: Expr & { type: 'call' }, args: Compiled[], trace: Trace | undefined): number {
  if (expr.name === 'concat') return summed(args)
  const growths = args.map(growthOf)
  if (expr.name !== 'replace') return Math.max(1, ...growths)
  const [, from, to] = args
  if (from.kind !== 'lit' || to.kind !== 'lit') throw new ExpressionError('replace() takes constant texts to find and to put in', expr.pos)
  return growths[0] * Math.max(1, String(constant(to, trace) ?? '').length / Math.max(1, String(constant(from, trace) ?? '').length))
}

function withGrowth (node: Compiled & { kind: 'sql' }, growth: number, pos: number): Compiled {
  if (growth > MAX_TEXT_GROWTH) throw new ExpressionError(`the text could grow more than ${MAX_TEXT_GROWTH} times longer than the stored values`, pos)
  if (growth > 1) node.growth = growth
  return node
}

/** A comparison, concatenation or LIKE of two constants, neither null (JavaScript's order: numbers as numbers, texts as texts). */
function compared (op: '~' | '!~' | '||' | '=' | '<' | '<=' | '>' | '>=', x: string | number, y: string | number): Literal {
  switch (op) {
    case '=': return x === y
    case '<': return x < y
    case '<=': return x <= y
    case '>': return x > y
    case '>=': return x >= y
    case '||': return `${x}${y}`
    case '~': case '!~': return likeMatch(String(x), String(y)) === (op === '~')
  }
}

/** Both sides are constants: evaluate now, with SQL's null semantics. */
function fold (op: BinaryOp, a: Literal, b: Literal, pos: number): Lit {
  const num = (v: Literal) => (typeof v === 'boolean' ? Number(v) : v)
  const x = num(a)
  const y = num(b)
  const lit = (value: Literal): Lit => ({ kind: 'lit', value })
  switch (op) {
    case '==': return lit(x === y)
    case '!=': return lit(x !== y)
    case '~': case '!~': case '||': case '=': case '<': case '<=': case '>': case '>=':
      if (x === null || y === null) return lit(op === '!~' ? true : op === '~' ? false : null)
      return lit(compared(op, x, y))
  }
  if (x === null || y === null) return lit(null)
  if (typeof x !== 'number' || typeof y !== 'number') throw new ExpressionError(`Operator "${op}" needs numbers`, pos)
  switch (op) {
    case '+': return lit(x + y)
    case '-': return lit(x - y)
    case '*': return lit(x * y)
    case '/': return lit(y === 0 ? null : Number.isInteger(x) && Number.isInteger(y) ? Math.trunc(x / y) : x / y)
  }
  throw new ExpressionError(`Operator "${op}" is not supported here`, pos)
}
