// Relation expand (decision D37): `users(name, id) as owner` in a select or returning list reads
// the row a foreign key references as a nested object. Each expansion is one correlated subquery in
// the same statement (no query per row), reading the target table under its own listRule and
// noSelect for this caller: a row the caller may not list reads as null, a hidden column is unknown.
import type { Fragment } from '../dialects/types.js'
import type { ForeignKey } from '../table/descriptor.js'
import { ExpressionError, type Expr } from '../expr/index.js'
import { MAX_EXPAND_DEPTH } from '../limits.js'
import { and, ruleCondition, type CrudContext } from './context.js'

export type Call = Expr & { type: 'call' }

/** A foreign key as a select list names it; `name` is its default key (the field's or the table's name). */
export interface Relation extends ForeignKey { name: string }

/**
 * The relation a call names: a field with a foreignKey (`owner(name)`), else the table that one
 * foreign key field references (`users(name)`). Undefined when it names neither. Only fields the
 * caller may see count: expanding a noSelect key would tell which row it holds. Call names come
 * lower-cased from the parser, so names are matched without case. A relation named like a function
 * (a field `count`) shadows that function in this table's select lists.
 */
export function relationOf (ctx: CrudContext, call: Call): Relation | undefined {
  const table = ctx.table
  const visible = table.foreignKeys.filter((fk) => fk.field.noSelect !== true || ctx.auth.admin)
  const byField = visible.filter((fk) => fk.field.name.toLowerCase() === call.name)
  if (byField.length === 1) return { ...byField[0], name: byField[0].field.name }
  const byTable = visible.filter((fk) => fk.target.name.toLowerCase() === call.name)
  const candidates = [...byField, ...byTable]
  if (candidates.length > 1) {
    const fields = candidates.map((fk) => fk.field.name)
    throw new ExpressionError(`"${call.name}" could be any of the foreign keys ${fields.join(', ')} of ${table.name}: name the field instead, e.g. ${fields[0]}(...)`, call.pos)
  }
  return byTable.length === 1 ? { ...byTable[0], name: byTable[0].target.name } : undefined
}

/**
 * The target table as the subquery at `depth` sees it: under an alias, so that a table expanding
 * itself (`parent(title)`) and the levels of a nested expansion each name their own row. Aliases hold
 * a hyphen, which no table name may: none can shadow the table the subquery correlates with.
 */
export function expansionContext (ctx: CrudContext, relation: Relation, depth: number, pos: number): CrudContext {
  if (depth > MAX_EXPAND_DEPTH) throw new ExpressionError(`relations nest at most ${MAX_EXPAND_DEPTH} levels deep`, pos)
  return { ...ctx, table: { ...relation.target, quoted: ctx.dialect.quote(`fb-expand-${depth}`) } }
}

/**
 * `(SELECT <object> FROM target AS alias WHERE alias.column = outer.field AND <listRule> LIMIT 1)`:
 * null when the key is null, the row is missing or the caller may not list it. `inner` is the
 * context from expansionContext (its trace records what the rule reads, so plans stay per caller class).
 */
export function expansionFragment (outer: CrudContext, inner: CrudContext, relation: Relation, columns: Array<{ key: string, fragment: Fragment }>): Fragment {
  const q = outer.dialect.quote
  const link = { sql: `${inner.table.quoted}.${q(relation.column.name)} = ${outer.table.quoted}.${q(relation.field.name)}`, bindings: [] }
  const where = and(link, ruleCondition(inner, 'listRule'))
  const object = outer.dialect.jsonObject(columns.map((c) => ({ key: c.key, sql: c.fragment.sql })))
  // The referenced column is unique (PostgreSQL requires it; SQLite's foreign keys assume it): LIMIT 1
  // only makes certain that a subquery used as a value never yields two rows.
  return {
    sql: `(SELECT ${object} FROM ${relation.target.quoted} AS ${inner.table.quoted} WHERE ${where === false ? 'FALSE' : where.sql} LIMIT 1)`,
    bindings: [...columns.flatMap((c) => c.fragment.bindings), ...(where === false ? [] : where.bindings)]
  }
}
