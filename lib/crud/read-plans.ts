// Read plans compiled once per shape (DECISIONS 38 holds for every plan: rules and noSelect are
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
}

interface Shape { reads: Map<string, boolean>, plans: Map<string, ReadPlan> }

// Bounded: a caller sending endless distinct texts evicts old shapes, it never grows the cache.
const SHAPES_PER_TABLE = 500
const CLASSES_PER_SHAPE = 32
const caches = new WeakMap<TableDescriptor, Map<string, Shape>>()

/** Builds the Knex queries of a plan for the caller in `ctx` (which carries the trace). */
export type PlanBuilder = (ctx: CrudContext, prepare: (query: Knex.QueryBuilder, planEachRun?: boolean) => PlannedStatement) => ReadPlan

/** The plan for this caller: from the cache, or built now and kept for its class. */
export function readPlan (ctx: CrudContext, shapeKey: string, build: PlanBuilder): ReadPlan {
  const cache = caches.get(ctx.table) ?? new Map<string, Shape>()
  caches.set(ctx.table, cache)
  const key = `${ctx.auth.admin ? 'A' : 'U'}${ctx.applyRules ? 'R' : 'N'}${short(shapeKey, LONG_SHAPE)}`
  const globals = globalsOf(ctx)
  const shape = cache.get(key)
  if (shape !== undefined) {
    const plan = shape.plans.get(signature(shape.reads, globals))
    if (plan !== undefined) return plan
  }
  const trace = new Trace()
  const prepare = (query: Knex.QueryBuilder, planEachRun = false): PlannedStatement => {
    const { statement, bindings } = compileStatement(query)
    return { statement: planEachRun ? { ...statement, planEachRun } : statement, bindings: bindings.map((b) => slotOf(trace, b) ?? b) }
  }
  const plan = build({ ...ctx, trace }, prepare)
  const entry = shape !== undefined && sameReads(shape.reads, trace.reads) ? shape : { reads: trace.reads, plans: new Map<string, ReadPlan>() }
  if (entry.plans.size >= CLASSES_PER_SHAPE) entry.plans.delete(entry.plans.keys().next().value as string)
  entry.plans.set(signature(entry.reads, globals), plan)
  cache.delete(key)
  if (cache.size >= SHAPES_PER_TABLE) cache.delete(cache.keys().next().value as string)
  cache.set(key, entry)
  return plan
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
  return await runStatement(ctx.db, ctx.reader, planned.statement, bindings)
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
