// A caller's write that references a row it may not view is answered as one that references a row
// that does not exist: 400 `foreign_key` under the field (decision D104). Otherwise a write would
// tell a hidden row from a missing one (written or refused by a rule against the database's 400), and
// a caller could probe for hidden rows by their keys. Checked before the write's statement, where the
// database would find a missing row; admins and rule-less action steps write as before.
import type { Knex } from 'knex'
import type { Binding } from '../dialects/types.js'
import type { ForeignKey, TableDescriptor } from '../table/descriptor.js'
import { compile, toCondition, type Condition } from '../expr/index.js'
import { ruleScope, type CrudContext } from './context.js'
import { constraintError } from './db-errors.js'
import { precheckable } from './create-precheck.js'
import { errors } from '../errors.js'

type Row = Record<string, unknown>

/** A value written by an expression that reads the row (`set: { post_id: 'other_id' }`): not known before the statement. */
export const COMPUTED = Symbol('computed')

// Values per look-up statement: under SQLite's 500 terms of a compound select.
const VALUES_PER_STATEMENT = 200

const NONE: readonly ForeignKey[] = Object.freeze([])

/** The foreign keys among `names` whose target rows this caller may not all view. */
export function checkedReferences (ctx: CrudContext, names: Iterable<string>): readonly ForeignKey[] {
  if (ctx.table.foreignKeys.length === 0 || ctx.auth.admin || !ctx.applyRules) return NONE
  const written = new Set(names)
  return ctx.table.foreignKeys.filter((fk) => written.has(fk.field.name) && viewable(ctx, fk.target) !== true)
}

/** The target's viewRule for this caller (a rule, so it reads related rows as they are); no rule: none. */
function viewable (ctx: CrudContext, target: TableDescriptor, known?: ReadonlyMap<string, string | boolean>): Condition {
  const rule = target.rules.viewRule
  if (rule === null) return false
  return toCondition(compile(rule, ruleScope(ctx, { table: target, trace: undefined, budget: undefined, requestHops: undefined, rowValues: known })))
}

/**
 * 400 `foreign_key` for the first of `checks` (in field order) that references, in one of `rows`, a
 * row the caller may not view or that does not exist. A value the viewRule decides from the key
 * alone (`id == auth.uid`) needs no statement; the others are looked up, one statement per field.
 */
export async function assertReferencesViewable (ctx: CrudContext, db: Knex, checks: readonly ForeignKey[], rows: readonly Row[]): Promise<void> {
  for (const fk of checks) {
    const values = new Map<string, unknown>()
    for (const row of rows) {
      const value = row[fk.field.name]
      // Which row it references is only known once the statement has run, too late to check it the same way.
      if (value === COMPUTED) throw errors.expression(fk.field.name, 'a foreign key field is given a value, or an expression of constants, auth.* and params.*, not one that reads the row')
      if (value !== undefined && value !== null) values.set(`${typeof value}:${String(value)}`, value)
    }
    const unknown: unknown[] = []
    for (const value of values.values()) {
      const known = precheckable(fk.column, value) && precheckable(fk.field, value) ? new Map([[fk.column.name, value]]) : undefined
      const decided = known === undefined ? undefined : viewable(ctx, fk.target, known)
      if (decided === false) throw constraintError('foreign_key', fk.field.name)
      if (decided !== true) unknown.push(value)
    }
    for (let i = 0; i < unknown.length; i += VALUES_PER_STATEMENT) {
      if (await anyHidden(ctx, db, fk, unknown.slice(i, i + VALUES_PER_STATEMENT))) throw constraintError('foreign_key', fk.field.name)
    }
  }
}

/** Is any of `values` the key of no row the caller may view? */
async function anyHidden (ctx: CrudContext, db: Knex, fk: ForeignKey, values: unknown[]): Promise<boolean> {
  const rule = viewable(ctx, fk.target)
  if (rule === false) return true
  const q = ctx.dialect.quote
  const bindings: Binding[] = []
  const written = values.map((value, i) => {
    const literal = ctx.dialect.literal(value, fk.field)
    bindings.push(...literal.bindings)
    return `SELECT ${i} AS ${q('fb_i')}, ${literal.sql} AS ${q('fb_v')}`
  })
  const target = fk.target.quoted
  const where = rule === true ? '' : ` AND (${rule.sql})`
  if (rule !== true) bindings.push(...rule.bindings)
  const sql = `SELECT ${q('fb_i')} FROM (${written.join(' UNION ALL ')}) AS ${q('fb_written')} WHERE NOT EXISTS (SELECT 1 FROM ${target} WHERE ${target}.${q(fk.column.name)} = ${q('fb_written')}.${q('fb_v')}${where}) LIMIT 1`
  return ctx.dialect.rawRows(await db.raw(sql, bindings)).length > 0
}
