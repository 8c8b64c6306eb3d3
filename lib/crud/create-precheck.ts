// The createRule decided in memory, before an insert writes anything (decision D4 keeps the SQL check
// for every row it cannot decide). A row's decision depends only on the values the rule reads — the
// row's given fields, the caller's globals — so it is remembered per table for those values: a request
// compiles the rule only for a combination not seen lately.
import type { TableField } from '../../schemas/config.js'
import type { TableDescriptor } from '../table/descriptor.js'
import { compile, toCondition, identifierPaths, type Expr } from '../expr/index.js'
import { globalAtParts } from '../expr/trace.js'
import { globalsOf, ruleScope, type CrudContext } from './context.js'

type Row = Record<string, unknown>

// Rows whose createRule is decided in memory before writing; bigger batches are checked in SQL.
const PRECHECK_ROWS = 100
// Text stored as text, and booleans: equality and LIKE on them give in memory exactly what SQL gives.
// Numbers are left to SQL (an integer column equals the text '5' there), and so is ordering (collations).
const PRECHECKED_TEXT = new Set(['text', 'email', 'url', 'editor', 'select', 'relation'])
const IN_MEMORY_OPS = new Set(['==', '!=', '=', '&', '|', '~', '!~', 'in'])

// Decisions kept per table, and the longest key kept (long values are decided each time, not held).
const DECISIONS_PER_TABLE = 1024
const MAX_KEY = 1024

/** A value whose equality in memory is SQL's (also lib/crud/references.ts). */
export function precheckable (field: TableField, value: unknown): value is string | boolean {
  if (field.type === 'bool') return typeof value === 'boolean'
  // A collation (NOCASE) changes what equal means in SQL.
  return PRECHECKED_TEXT.has(field.type) && field.sqlType === 'text' && field.collate === undefined && typeof value === 'string'
}

/** Only equality, LIKE, `in` and logic: what folds in memory with SQL's meaning. */
function foldsLikeSql (expr: Expr): boolean {
  switch (expr.type) {
    case 'literal': case 'ident': return true
    case 'unary': return expr.op === '!' && foldsLikeSql(expr.arg)
    case 'binary': return IN_MEMORY_OPS.has(expr.op) && foldsLikeSql(expr.left) && foldsLikeSql(expr.right)
    case 'list': return expr.items.every(foldsLikeSql)
    default: return false
  }
}

/** What is known of a rule once: whether it can fold in memory, and every identifier it reads. */
interface RuleFacts { folds: boolean, paths: string[][] }
const ruleFacts = new WeakMap<Expr, RuleFacts>()

function factsOf (rule: Expr): RuleFacts {
  let facts = ruleFacts.get(rule)
  if (facts === undefined) ruleFacts.set(rule, facts = { folds: foldsLikeSql(rule), paths: identifierPaths(rule) })
  return facts
}

const decisions = new WeakMap<TableDescriptor, Map<string, boolean | undefined>>()

/**
 * The createRule decided from the values about to be written, when it reads only those (and the
 * caller): `auth.uid != null & author_id == auth.uid` with author_id given is true or false before
 * any SQL, so the insert needs no transaction and no check query. Undefined when a row leaves it to
 * SQL (a default, a trigger, a function of a column). Defaults and triggers could change a row, so
 * tables with triggers are always checked in SQL.
 */
export function decidedBeforeWriting (ctx: CrudContext, rows: Row[]): boolean | undefined {
  const rule = ctx.table.rules.createRule
  if (rule === null || rows.length > PRECHECK_ROWS || (ctx.table.data.triggers?.length ?? 0) > 0 || !factsOf(rule).folds) return undefined
  let all = true
  for (const row of rows) {
    const known = new Map<string, string | boolean>()
    for (const [name, value] of Object.entries(row)) {
      const field = ctx.table.fields.get(name)
      // An empty autoSetUid id is replaced by a generated one: not the value written.
      const generated = field === ctx.table.uid && ctx.table.data.autoSetUid === true
      if (field !== undefined && !generated && precheckable(field, value)) known.set(name, value)
    }
    const decided = rowDecision(ctx, rule, known)
    if (decided === undefined) return undefined
    if (!decided) all = false
  }
  return all
}

/** One row's decision: remembered under every value the rule could read, or compiled. */
function rowDecision (ctx: CrudContext, rule: Expr, known: ReadonlyMap<string, string | boolean>): boolean | undefined {
  const key = ctx.trace === undefined ? decisionKey(ctx, rule, known) : undefined
  let held = decisions.get(ctx.table)
  if (key !== undefined && held?.has(key) === true) return held.get(key)
  const compiled = compile(rule, ruleScope(ctx, { newValues: 'row', rowValues: known }))
  const decided = compiled.kind === 'lit' ? toCondition(compiled) === true : undefined
  if (key === undefined) return decided
  if (held === undefined) decisions.set(ctx.table, held = new Map())
  // Maps keep insertion order: the first key is the oldest.
  const oldest = held.size >= DECISIONS_PER_TABLE ? held.keys().next() : undefined
  if (oldest?.done === false) held.delete(oldest.value)
  held.set(key, decided)
  return decided
}

/**
 * Everything compiling the rule could read for this row: per identifier, the global at its path
 * and the given value of every field named by any of its parts (`author_id`, `new.author_id`).
 * Undefined when that is too long to keep.
 */
function decisionKey (ctx: CrudContext, rule: Expr, known: ReadonlyMap<string, string | boolean>): string | undefined {
  const globals = globalsOf(ctx)
  let key = ctx.dialect.name
  for (const path of factsOf(rule).paths) {
    key += `|${JSON.stringify(globalAtParts(globals, path))}`
    for (const part of path) key += known.has(part) ? `:${JSON.stringify(known.get(part))}` : ':-'
    if (key.length > MAX_KEY) return undefined
  }
  return key
}
