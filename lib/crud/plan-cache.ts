// Plans compiled once per shape and caller class, for reads (read-plans.ts) and writes
// (write-plans.ts). A shape is what the caller sent that decides the SQL text (table, operation,
// field names, where, select, order, ...) plus admin or not; the class is, for every global the
// plan's expressions read (`auth.uid`, `request.headers.x`), its value when the value decided the
// SQL text (`auth.role == 'staff'` folded to true) or only its type and null-ness when it was bound
// (`author_id == auth.uid` -> `author_id = ?`). Two users of one class share a plan and differ only
// in what is bound; a user and an anonymous caller never share one. Rules and field flags are
// applied while a plan is built, so every plan holds them (decision D38).
import { createHash } from 'node:crypto'
import { Trace, globalAt, typeClass, type Slot } from '../expr/trace.js'
import { ValueError } from '../values.js'
import { errors } from '../errors.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { Binding } from '../dialects/types.js'
import { globalsOf, ID_SLOT, type CrudContext } from './context.js'

interface Shape { reads: Map<string, boolean>, plans: Map<string, Cached>, bytes: number }
interface Cached { plan: unknown, bytes: number }

// Bounded by count and by the SQL text held (callers sending endless distinct or long texts evict
// old shapes; they never grow the cache): one cache for every table of the process.
const MAX_SHAPES = 2000
const CLASSES_PER_SHAPE = 16
const MAX_HELD_BYTES = 16 * 1024 * 1024
// A plan this long (a select of 100 long expressions) is built for its request and not kept.
const MAX_PLAN_BYTES = 16 * 1024
/**
 * Shapes by table and caller kind (admin or not, rules applied or not), then by shape key: the key a
 * hit looks up is the caller's shape key itself, never a longer string built per request (a
 * constant key, as a read without parameters has, is then found without hashing or comparing text).
 */
const byKind = new WeakMap<TableDescriptor, Array<Map<string, Shape> | undefined>>()
// Every kept shape, oldest first (Maps keep insertion order), with the map and key that hold it.
const kept = new Map<Shape, { holder: Map<string, Shape>, key: string }>()
let heldBytes = 0

/** The context a plan is built in: it carries the trace that records what the plan read. */
export type PlanningContext = CrudContext & { trace: Trace }

/** The shapes of this table for this caller's kind. */
function shapesFor (ctx: CrudContext): Map<string, Shape> {
  let kinds = byKind.get(ctx.table)
  if (kinds === undefined) byKind.set(ctx.table, kinds = [])
  const kind = (ctx.auth.superadmin ? 4 : ctx.auth.admin ? 2 : 0) + (ctx.applyRules ? 1 : 0)
  return kinds[kind] ??= new Map()
}

/**
 * The plan for this caller: from the cache, or built now (by `build`, given a context that carries
 * the trace) and kept for its class. `bytesOf` is the SQL text a plan holds, which the cache bounds.
 */
export function cachedPlan<P> (ctx: CrudContext, shapeKey: string, build: (ctx: PlanningContext) => P, bytesOf: (plan: P) => number): P {
  const holder = shapesFor(ctx)
  const key = short(shapeKey, LONG_SHAPE)
  const shape = holder.get(key)
  if (shape !== undefined) {
    // A shape whose plans read no global (trivial rules, an anonymous caller's public read) has one
    // class: its hit builds no globals object at all (decision D106).
    const cached = shape.plans.get(shape.reads.size === 0 ? '' : signature(shape.reads, globalsOf(ctx)))
    if (cached !== undefined) {
      planCacheCounts.hits++
      return cached.plan as P
    }
  }
  planCacheCounts.misses++
  const trace = new Trace()
  const plan = build({ ...ctx, trace })
  const bytes = bytesOf(plan)
  if (bytes > MAX_PLAN_BYTES) return plan
  const entry = shape !== undefined && sameReads(shape.reads, trace.reads) ? shape : { reads: trace.reads, plans: new Map<string, Cached>(), bytes: 0 }
  // Maps keep insertion order: the first entry is the oldest.
  const first = entry.plans.size >= CLASSES_PER_SHAPE ? entry.plans.entries().next() : undefined
  if (first !== undefined && first.done !== true) {
    const [oldest, evicted] = first.value
    entry.bytes -= evicted.bytes
    heldBytes -= evicted.bytes
    entry.plans.delete(oldest)
  }
  entry.plans.set(signature(entry.reads, globalsOf(ctx)), { plan, bytes })
  entry.bytes += bytes
  heldBytes += bytes
  if (shape !== undefined) {
    if (shape !== entry) heldBytes -= shape.bytes
    kept.delete(shape)
  }
  holder.set(key, entry)
  kept.set(entry, { holder, key })
  while (kept.size > MAX_SHAPES || heldBytes > MAX_HELD_BYTES) {
    const first = kept.entries().next()
    if (first.done === true) break
    const [oldest, at] = first.value
    heldBytes -= oldest.bytes
    kept.delete(oldest)
    at.holder.delete(at.key)
  }
  return plan
}

interface Repeated { parts: readonly unknown[], key: string }
const lastKeys = new WeakMap<TableDescriptor, Map<string, Repeated>>()

/**
 * A shape's key, kept while one shape repeats: the last key built per table and operation is reused
 * while its parts do (clients send one shape over and over), so a plan hit neither builds nor hashes
 * a new string per request. Parts compare by value: text, numbers, flags, and lists of them.
 */
export function repeatedKey (table: TableDescriptor, op: string, parts: readonly unknown[], build: () => string): string {
  let held = lastKeys.get(table)
  if (held === undefined) lastKeys.set(table, held = new Map())
  const last = held.get(op)
  if (last !== undefined && sameParts(last.parts, parts)) return last.key
  const key = build()
  held.set(op, { parts, key })
  return key
}

function sameParts (a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x !== y && !(Array.isArray(x) && Array.isArray(y) && sameParts(x, y))) return false
  }
  return true
}

/** Lookups answered from the cache, and plans built, since the process started (metrics). */
export const planCacheCounts = { hits: 0, misses: 0 }

/** What the cache holds now (for tests and diagnostics). */
export function planCacheSize (): { shapes: number, bytes: number } {
  return { shapes: kept.size, bytes: heldBytes }
}

function signature (reads: Map<string, boolean>, globals: Record<string, unknown>): string {
  let out = ''
  for (const [path, folded] of reads) {
    const value = globalAt(globals, path)
    // A `{:name}` not given is an error, not a null: it never shares the class (and plan) of a null given (decision D88).
    if (value === null && path.startsWith(PARAMS_PREFIX) && !given(globals.params, path.slice(PARAMS_PREFIX.length))) { out += '?;'; continue }
    out += folded ? `${short(JSON.stringify(value))};` : `${typeClass(value)};`
  }
  return out
}

const PARAMS_PREFIX = 'params.'
const given = (params: unknown, name: string): boolean => params !== null && typeof params === 'object' && Object.hasOwn(params, name)

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

/** Where a write plan binds the value the caller gives field `name` (no expression can name it). */
export const valueSlot = (name: string): string => `$value.${name}`
const VALUE_PREFIX = '$value.'

/**
 * A plan's bindings for this run: slots take the caller's values (the record id, the values a
 * write gives its fields, the globals), each encoded for the column it meets.
 */
export function fillSlots (ctx: CrudContext, bindings: readonly Binding[], id?: string | number, values?: Record<string, Binding>): Binding[] {
  let globals: Record<string, unknown> | undefined
  return bindings.map((b) => {
    if (!isSlot(b)) return b
    if (b.path === ID_SLOT) return bind(ctx, b, id ?? null)
    if (b.path.startsWith(VALUE_PREFIX)) return values?.[b.path.slice(VALUE_PREFIX.length)] ?? null
    globals ??= globalsOf(ctx)
    return bind(ctx, b, globalAt(globals, b.path))
  })
}

export function isSlot (binding: unknown): binding is Slot {
  return binding !== null && typeof binding === 'object' && typeof (binding as Slot).path === 'string'
}

function bind (ctx: CrudContext, slot: Slot, value: unknown): Binding {
  try {
    return ctx.dialect.literal(value, slot.field).bindings[0]
  } catch (error) {
    if (error instanceof ValueError) throw errors.expression('where', `${slot.field?.name ?? 'value'} ${error.message}`)
    throw error
  }
}
