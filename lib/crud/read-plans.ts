// Read plans compiled once per shape (decision D38 holds for every plan: rules and noSelect are
// applied when the plan is built). A shape is what the caller sent (table, operation, where,
// select, order, group, distinct, limit, offset) plus the caller's class as rules see it: admin or
// not, and, for every global the expressions read (`auth.uid`, `request.headers.x`), its value
// when the value decided the SQL text (`auth.role == 'staff'` folded to true) or only its type and
// null-ness when it was bound (`author_id == auth.uid` -> `author_id = ?`). Two users of one class
// share a plan and differ only in what is bound; a user and an anonymous caller never share one.
import { createHash } from 'node:crypto'
import type { Knex } from 'knex'
import { Trace, globalAt, slotOf, typeClass, type Slot } from '../expr/trace.js'
import { ValueError } from '../values.js'
import { errors } from '../errors.js'
import { compileStatement, runStatement, type Statement } from '../db/statement.js'
import type { TableDescriptor } from '../table.js'
import type { OutputColumn } from './columns.js'
import { globalsOf, ID_SLOT, type CrudContext } from './context.js'

type Row = Record<string, unknown>

/** A statement and its bindings: constants, and slots filled per run. */
export interface PlannedStatement { statement: Statement, bindings: ReadonlyArray<unknown | Slot> }

export interface ReadPlan {
  columns: OutputColumn[]
  /** undefined: the condition folded to false, nothing can match. */
  items?: PlannedStatement
  total?: PlannedStatement
  /** The planner's row estimate of the matching rows (list?estimateTotal, where the dialect has one). */
  estimate?: PlannedStatement
}

interface Shape { reads: Map<string, boolean>, plans: Map<string, ReadPlan>, bytes: number }

// Bounded by count and by the SQL text held (callers sending endless distinct or long texts evict
// old shapes; they never grow the cache): one cache for every table of the process.
const MAX_SHAPES = 2000
const CLASSES_PER_SHAPE = 16
const MAX_HELD_BYTES = 16 * 1024 * 1024
// A plan this long (a select of 100 long expressions) is built for its request and not kept.
const MAX_PLAN_BYTES = 16 * 1024
const shapes = new Map<string, Shape>()
let heldBytes = 0
const tableIds = new WeakMap<TableDescriptor, number>()
let nextTableId = 0

/** Builds the Knex queries of a plan for the caller in `ctx` (which carries the trace). */
export type PlanBuilder = (ctx: CrudContext, prepare: (query: Knex.QueryBuilder, options?: PrepareOptions) => PlannedStatement) => ReadPlan

export interface PrepareOptions extends Pick<Statement, 'planEachRun' | 'offThread'> {
  /** Wraps the statement's text (an EXPLAIN for an estimate). */
  wrap?: (sql: string) => string
}

/** The plan for this caller: from the cache, or built now and kept for its class. */
export function readPlan (ctx: CrudContext, shapeKey: string, build: PlanBuilder): ReadPlan {
  let tableId = tableIds.get(ctx.table)
  if (tableId === undefined) tableIds.set(ctx.table, tableId = nextTableId++)
  const key = `${tableId}${ctx.auth.admin ? 'A' : 'U'}${ctx.applyRules ? 'R' : 'N'}${short(shapeKey, LONG_SHAPE)}`
  const globals = globalsOf(ctx)
  const shape = shapes.get(key)
  if (shape !== undefined) {
    const plan = shape.plans.get(signature(shape.reads, globals))
    if (plan !== undefined) return plan
  }
  const trace = new Trace()
  const prepare = (query: Knex.QueryBuilder, { wrap = (sql: string) => sql, planEachRun, offThread }: PrepareOptions = {}): PlannedStatement => {
    const { statement, bindings } = compileStatement(query)
    const wrapped: Statement = { sql: wrap(statement.sql), native: wrap(statement.native) }
    if (planEachRun === true) wrapped.planEachRun = true
    if (offThread === true) wrapped.offThread = true
    return { statement: wrapped, bindings: bindings.map((b) => slotOf(trace, b) ?? b) }
  }
  const plan = build({ ...ctx, trace }, prepare)
  const bytes = planBytes(plan)
  if (bytes > MAX_PLAN_BYTES) return plan
  const entry = shape !== undefined && sameReads(shape.reads, trace.reads) ? shape : { reads: trace.reads, plans: new Map<string, ReadPlan>(), bytes: 0 }
  if (entry.plans.size >= CLASSES_PER_SHAPE) {
    const oldest = entry.plans.keys().next().value as string
    entry.bytes -= planBytes(entry.plans.get(oldest)!)
    heldBytes -= planBytes(entry.plans.get(oldest)!)
    entry.plans.delete(oldest)
  }
  entry.plans.set(signature(entry.reads, globals), plan)
  entry.bytes += bytes
  heldBytes += bytes
  if (shape !== undefined && shape !== entry) heldBytes -= shape.bytes
  shapes.delete(key)
  shapes.set(key, entry)
  while (shapes.size > MAX_SHAPES || heldBytes > MAX_HELD_BYTES) {
    const [oldestKey, oldest] = shapes.entries().next().value as [string, Shape]
    heldBytes -= oldest.bytes
    shapes.delete(oldestKey)
  }
  return plan
}

/** What the cache holds now (for tests and diagnostics). */
export function planCacheSize (): { shapes: number, bytes: number } {
  return { shapes: shapes.size, bytes: heldBytes }
}

function planBytes (plan: ReadPlan): number {
  return [plan.items, plan.total, plan.estimate].reduce((sum, p) => sum + (p === undefined ? 0 : p.statement.sql.length + p.statement.native.length), 0)
}

function signature (reads: Map<string, boolean>, globals: Record<string, unknown>): string {
  let out = ''
  for (const [path, folded] of reads) {
    const value = globalAt(globals, path)
    out += folded ? `${short(JSON.stringify(value))};` : `${typeClass(value)};`
  }
  return out
}

// Keys stay small however long what they stand for (a select list of 100 long items, a request
// header a rule compares): past these lengths a key holds a digest instead.
const LONG_VALUE = 128
const LONG_SHAPE = 512
function short (text: string, max = LONG_VALUE): string {
  return text.length <= max ? text : `#${createHash('sha256').update(text).digest('base64url')}`
}

function sameReads (a: Map<string, boolean>, b: Map<string, boolean>): boolean {
  return a.size === b.size && [...a].every(([path, folded]) => b.get(path) === folded)
}

/** Runs a planned statement for this caller: slots take the caller's values, encoded for their column. */
export async function runPlanned (ctx: CrudContext, planned: PlannedStatement, id?: string | number): Promise<Row[]> {
  const globals = globalsOf(ctx)
  const bindings = planned.bindings.map((b) => (isSlot(b) ? bind(ctx, b, b.path === ID_SLOT ? id ?? null : globalAt(globals, b.path)) : b))
  return await runStatement(ctx.db, ctx.direct, planned.statement, bindings)
}

function isSlot (binding: unknown): binding is Slot {
  return binding !== null && typeof binding === 'object' && typeof (binding as Slot).path === 'string'
}

function bind (ctx: CrudContext, slot: Slot, value: unknown): unknown {
  try {
    return ctx.dialect.literal(value, slot.field).bindings[0]
  } catch (error) {
    if (error instanceof ValueError) throw errors.expression('where', `${slot.field?.name ?? 'value'} ${error.message}`)
    throw error
  }
}
