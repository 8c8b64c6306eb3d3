// Read plans: select, list and view compiled once per shape and caller class (plan-cache.ts): the
// SQL text in both forms, where each binding comes from, the output columns and their decoders.
import type { Knex } from 'knex'
import { slotOf } from '../expr/trace.js'
import type { Binding } from '../dialects/types.js'
import { compileStatement, runStatement, type Statement } from '../db/statement.js'
import { answeredAsIs, type OutputColumn } from './columns.js'
import type { CrudContext } from './context.js'
import type { Reads } from './sql-reads.js'
import { cachedPlan, fillSlots } from './plan-cache.js'
import type { MaybePromise } from '../maybe-async.js'

export { planCacheSize, fillSlots } from './plan-cache.js'

type Row = Record<string, unknown>

/** A statement and its bindings: constants, and slots (lib/expr/trace.ts) filled per run. */
export interface PlannedStatement { statement: Statement, bindings: readonly Binding[] }

/** A count's answer, and the data version it counted at when the statement says (Dialect#statementVersion). */
export interface Counted { total: number, version?: string }

/**
 * How a kept list total may be carried across writes (lib/crud/total-cache.ts, decision D132): a
 * list neither grouped nor distinct, whose count reads no other row of its own table, `table`, keyed
 * by its column `key`. `statement` counts the rows with given keys the total admits (the keys bound
 * as one JSON array); `count` runs it for the caller in `ctx`. `reads` is what the count reads (an
 * insert into another table, or an update of columns it does not read, changes nothing it counts).
 */
export interface Carry {
  table: string
  key: string
  reads: Reads
  statement: PlannedStatement
  count: (ctx: CrudContext, keys: unknown[]) => MaybePromise<Counted>
}

export interface ReadPlan {
  columns: OutputColumn[]
  /** Every column is answered as the driver reads it (Dialect#readsAsIs): rows need no decoding, set by readPlan. */
  asIs?: boolean
  /** undefined: the condition folded to false, nothing can match. */
  items?: PlannedStatement
  total?: PlannedStatement
  /** The total may be kept per data version (lib/crud/total-cache.ts): its statement reads no clock. */
  totalKept?: boolean
  /** How a kept total can be carried across writes, where it can (total-cache.ts#Carry). */
  carry?: Carry
  /** The planner's row estimate of the matching rows (list?estimateTotal, where the dialect has one). */
  estimate?: PlannedStatement
}

/** Builds the Knex queries of a plan for the caller in `ctx` (which carries the trace). */
export type PlanBuilder = (ctx: CrudContext, prepare: (query: Knex.QueryBuilder, options?: PrepareOptions) => PlannedStatement) => ReadPlan

export interface PrepareOptions extends Pick<Statement, 'planEachRun' | 'offThread' | 'oneRow'> {
  /** Wraps the statement's text (an EXPLAIN for an estimate). */
  wrap?: (sql: string) => string
}

const noWrap = (sql: string): string => sql

/** The plan for this caller: from the cache, or built now and kept for its class. */
export function readPlan (ctx: CrudContext, shapeKey: string, build: PlanBuilder): ReadPlan {
  return cachedPlan(ctx, shapeKey, (c) => {
    const trace = c.trace
    const prepare = (query: Knex.QueryBuilder, { wrap = noWrap, planEachRun, offThread, oneRow }: PrepareOptions = {}): PlannedStatement => {
      const { statement, bindings } = compileStatement(query)
      const wrapped: Statement = { sql: wrap(statement.sql), native: wrap(statement.native) }
      // A plan for each run's values beats the generic one only when there are values: a statement
      // without any (a count under a trivial rule) is planned once, named (decision D107).
      if (planEachRun === true && (bindings.length > 0 || wrap !== noWrap)) wrapped.planEachRun = true
      if (offThread === true) wrapped.offThread = true
      if (oneRow === true) wrapped.oneRow = true
      return { statement: wrapped, bindings: bindings.map((b) => slotOf(trace, b) ?? b) }
    }
    const plan = build(c, prepare)
    plan.asIs = answeredAsIs(c, plan.columns)
    return plan
  }, planBytes)
}

function planBytes (plan: ReadPlan): number {
  return [plan.items, plan.total, plan.estimate, plan.carry?.statement].reduce((sum, p) => sum + (p === undefined ? 0 : p.statement.sql.length + p.statement.native.length), 0)
}

/** Runs a planned statement for this caller: slots take the caller's values, encoded for their column. */
export function runPlanned (ctx: CrudContext, planned: PlannedStatement, id?: string | number): MaybePromise<Row[]> {
  return runFilled(ctx, planned, fillSlots(ctx, planned.bindings, id))
}

/** Runs a planned statement with its slots already filled (`values`, from fillSlots). */
export function runFilled (ctx: CrudContext, planned: PlannedStatement, values: readonly Binding[]): MaybePromise<Row[]> {
  return runStatement(ctx.db, ctx.direct, planned.statement, values)
}
