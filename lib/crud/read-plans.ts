// Read plans: select, list and view compiled once per shape and caller class (plan-cache.ts): the
// SQL text in both forms, where each binding comes from, the output columns and their decoders.
import type { Knex } from 'knex'
import { slotOf } from '../expr/trace.js'
import type { Binding } from '../dialects/types.js'
import { compileStatement, runStatement, type Statement } from '../db/statement.js'
import type { OutputColumn } from './columns.js'
import type { CrudContext } from './context.js'
import { cachedPlan, fillSlots } from './plan-cache.js'

export { planCacheSize } from './plan-cache.js'

type Row = Record<string, unknown>

/** A statement and its bindings: constants, and slots (lib/expr/trace.ts) filled per run. */
export interface PlannedStatement { statement: Statement, bindings: readonly Binding[] }

export interface ReadPlan {
  columns: OutputColumn[]
  /** undefined: the condition folded to false, nothing can match. */
  items?: PlannedStatement
  total?: PlannedStatement
  /** The planner's row estimate of the matching rows (list?estimateTotal, where the dialect has one). */
  estimate?: PlannedStatement
}

/** Builds the Knex queries of a plan for the caller in `ctx` (which carries the trace). */
export type PlanBuilder = (ctx: CrudContext, prepare: (query: Knex.QueryBuilder, options?: PrepareOptions) => PlannedStatement) => ReadPlan

export interface PrepareOptions extends Pick<Statement, 'planEachRun' | 'offThread'> {
  /** Wraps the statement's text (an EXPLAIN for an estimate). */
  wrap?: (sql: string) => string
}

/** The plan for this caller: from the cache, or built now and kept for its class. */
export function readPlan (ctx: CrudContext, shapeKey: string, build: PlanBuilder): ReadPlan {
  return cachedPlan(ctx, shapeKey, (c) => {
    const trace = c.trace
    const prepare = (query: Knex.QueryBuilder, { wrap = (sql: string) => sql, planEachRun, offThread }: PrepareOptions = {}): PlannedStatement => {
      const { statement, bindings } = compileStatement(query)
      const wrapped: Statement = { sql: wrap(statement.sql), native: wrap(statement.native) }
      if (planEachRun === true) wrapped.planEachRun = true
      if (offThread === true) wrapped.offThread = true
      return { statement: wrapped, bindings: bindings.map((b) => slotOf(trace, b) ?? b) }
    }
    return build(c, prepare)
  }, planBytes)
}

function planBytes (plan: ReadPlan): number {
  return [plan.items, plan.total, plan.estimate].reduce((sum, p) => sum + (p === undefined ? 0 : p.statement.sql.length + p.statement.native.length), 0)
}

/** Runs a planned statement for this caller: slots take the caller's values, encoded for their column. */
export async function runPlanned (ctx: CrudContext, planned: PlannedStatement, id?: string | number): Promise<Row[]> {
  return await runStatement(ctx.db, ctx.direct, planned.statement, fillSlots(ctx, planned.bindings, id))
}
