// Relation paths (`post_id.public`, `new.post_id.owner_id.role`): what a path may follow and what
// it may cost. Each hop compiles (lib/expr/compile.ts#follow) to a scalar subquery that looks the
// related row up by the column its foreign key references: one indexed lookup per row the path is
// read on, on both databases, and null when the key is null or no row has it; a list's count reads
// a path compared with a constant as a semi-join instead (#compileCondition there, decision D95).
import type { TableField } from '../../schemas/config.js'
import type { Expr } from './parse.js'
import type { SearchIndex } from '../search/fts.js'
import { ExpressionError } from './errors.js'
import { MAX_EXPRESSION_HOPS, MAX_PATH_HOPS, MAX_REQUEST_HOPS } from '../limits.js'

/** A table a path can reach: its columns, its foreign keys, and the rule that says who sees its rows. */
export interface RelatedTable {
  name: string
  quoted: string
  fields: ReadonlyMap<string, TableField>
  search?: SearchIndex
  rules: { listRule: Expr | null }
  fieldRules?: ReadonlyMap<string, Expr>
  foreignKeys: readonly Relation[]
}

/** A field of one table that references `column` of `target` (a table descriptor's foreign key). */
export interface Relation { field: TableField, target: RelatedTable, column: TableField }

/** Hops compiled so far: per expression (`left`), and per operation (`left`, and how many were `used`). */
export interface HopBudget { left: number, used: number }

export const expressionHops = (): HopBudget => ({ left: MAX_EXPRESSION_HOPS, used: 0 })
export const requestHops = (): HopBudget => ({ left: MAX_REQUEST_HOPS, used: 0 })

/** The foreign key of `field` in `table`; a path through any other field is refused. */
export function relationOf (table: { name: string, foreignKeys?: readonly Relation[] }, field: string, pos: number): Relation {
  const relation = table.foreignKeys?.find((r) => r.field.name === field)
  if (relation === undefined) throw new ExpressionError(`"${field}" is not a foreign key field of "${table.name}": a path (a.b) can only follow a field with a foreignKey`, pos)
  return relation
}

/**
 * A path of `hops` hops: within the bound per path, then counted against the expression's and the
 * request's. Developer text (`trusted`: rules, bounded per expression when the config is checked) is
 * recorded as used but draws nothing from the request's, so a batch write whose rule follows a
 * relation is not refused for its size.
 */
export function spendHops (hops: number, expression: HopBudget | undefined, request: HopBudget | undefined, pos: number, trusted = false): void {
  if (hops > MAX_PATH_HOPS) throw new ExpressionError(`A path follows at most ${MAX_PATH_HOPS} relations`, pos)
  if (expression !== undefined) {
    if (expression.left < hops) throw new ExpressionError(`Too many relation hops: at most ${MAX_EXPRESSION_HOPS} in one expression (the rules of the tables a path reads count too)`, pos)
    expression.left -= hops
    expression.used += hops
  }
  if (request === undefined) return
  if (!trusted) {
    if (request.left < hops) throw new ExpressionError(`Too many relation hops: at most ${MAX_REQUEST_HOPS} in one request (the rules of the tables a path reads count too)`, pos)
    request.left -= hops
  }
  request.used += hops
}
