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
import type { TableField } from '../../schemas/config.js'
import { globalsOf, ID_SLOT, type CrudContext } from './context.js'

interface Shape { reads: Map<string, boolean>, plans: Map<string, Cached>, bytes: number }
interface Cached { plan: unknown, bytes: number, classless: boolean }

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

/** The caller's kind: admin or not, rules applied or not (its shapes are apart from every other kind's). */
function kindOf (ctx: CrudContext): number {
  return (ctx.auth.superadmin ? 4 : ctx.auth.admin ? 2 : 0) + (ctx.applyRules ? 1 : 0)
}

/** The shapes of this table for this caller's kind. */
function shapesFor (ctx: CrudContext): Map<string, Shape> {
  let kinds = byKind.get(ctx.table)
  if (kinds === undefined) byKind.set(ctx.table, kinds = [])
  return kinds[kindOf(ctx)] ??= new Map()
}

/**
 * The plan for this caller: from the cache, or built now (by `build`, given a context that carries
 * the trace) and kept for its class. `bytesOf` is the SQL text a plan holds, which the cache bounds.
 */
export function cachedPlan<P> (ctx: CrudContext, shapeKey: string, build: (ctx: PlanningContext) => P, bytesOf: (plan: P) => number): P {
  return planOf(cachedEntry(ctx, shapeKey, build, bytesOf))
}

/** An entry's plan, as the builder that made it typed it (every entry of a key is made by one builder). */
function planOf<P> (cached: Cached): P {
  return cached.plan as P
}

/** cachedPlan's entry: the plan, and whether it serves every class of its kind (its shape reads no global). */
function cachedEntry<P> (ctx: CrudContext, shapeKey: string, build: (ctx: PlanningContext) => P, bytesOf: (plan: P) => number): Cached {
  const holder = shapesFor(ctx)
  const key = short(shapeKey, LONG_SHAPE)
  const shape = holder.get(key)
  if (shape !== undefined) {
    // A shape whose plans read no global (trivial rules, an anonymous caller's public read) has one
    // class: its hit builds no globals object at all (decision D106).
    const cached = shape.plans.get(shape.reads.size === 0 ? '' : signature(shape.reads, globalsOf(ctx)))
    if (cached !== undefined) {
      planCacheCounts.hits++
      return cached
    }
  }
  planCacheCounts.misses++
  const trace = new Trace()
  const plan = build({ ...ctx, trace })
  const bytes = bytesOf(plan)
  if (bytes > MAX_PLAN_BYTES) return { plan, bytes, classless: false }
  const entry = shape !== undefined && sameReads(shape.reads, trace.reads) ? shape : { reads: trace.reads, plans: new Map<string, Cached>(), bytes: 0 }
  // Maps keep insertion order: the first entry is the oldest.
  const first = entry.plans.size >= CLASSES_PER_SHAPE ? entry.plans.entries().next() : undefined
  if (first !== undefined && first.done !== true) {
    const [oldest, evicted] = first.value
    entry.bytes -= evicted.bytes
    heldBytes -= evicted.bytes
    entry.plans.delete(oldest)
  }
  const cached: Cached = { plan, bytes, classless: entry.reads.size === 0 }
  entry.plans.set(signature(entry.reads, globalsOf(ctx)), cached)
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
  return cached
}

interface Repeated {
  parts: readonly unknown[]
  key: string
  /** Per caller kind (kindOf), the shape's plan when it serves every class of the kind. */
  plans: Array<Cached | undefined>
}
const lastKeys = new WeakMap<TableDescriptor, Map<string, Repeated>>()

/** The last shape of `op` on this table, when `parts` are its parts again; else the new last one, its key built by `build`. */
function repeated (table: TableDescriptor, op: string, parts: readonly unknown[], build: () => string): Repeated {
  let held = lastKeys.get(table)
  if (held === undefined) lastKeys.set(table, held = new Map())
  const last = held.get(op)
  if (last !== undefined && sameParts(last.parts, parts)) return last
  const next = { parts, key: build(), plans: [] }
  held.set(op, next)
  return next
}

/**
 * A shape's key, kept while one shape repeats: the last key built per table and operation is reused
 * while its parts do (clients send one shape over and over), so a plan hit neither builds nor hashes
 * a new string per request. Parts compare by value: text, numbers, flags, and lists of them.
 */
export function repeatedKey (table: TableDescriptor, op: string, parts: readonly unknown[], build: () => string): string {
  return repeated(table, op, parts, build).key
}

/**
 * cachedPlan for the shape `parts` of `op` (its key built by `key`), where one shape repeats: while
 * it does, a plan that serves every class of the caller's kind (it reads no global, as a trivial
 * rule's) is answered from the last shape itself, with no look-up in the cache. Such a plan was
 * built without reading anything of the caller but its kind, so it is the plan of every caller of
 * the kind; kept here, it outlives its eviction from the cache by as long as its shape repeats.
 */
export function repeatedPlan<P> (ctx: CrudContext, op: string, parts: readonly unknown[], key: () => string, build: (ctx: PlanningContext) => P, bytesOf: (plan: P) => number): P {
  const last = repeated(ctx.table, op, parts, key)
  const kind = kindOf(ctx)
  const known = last.plans[kind]
  if (known !== undefined) {
    planCacheCounts.hits++
    return planOf(known)
  }
  const cached = cachedEntry(ctx, last.key, build, bytesOf)
  if (cached.classless) last.plans[kind] = cached
  return planOf(cached)
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
 * A plan's bindings for this run: slots take the caller's values (the record id, the caller's
 * globals), each encoded for the column it meets.
 */
export function fillSlots (ctx: CrudContext, bindings: readonly Binding[], id?: string | number): Binding[] {
  let globals: Record<string, unknown> | undefined
  const filled: Binding[] = []
  for (const b of bindings) {
    if (!isSlot(b)) filled.push(b)
    else if (b.path === ID_SLOT) filled.push(bind(ctx, b, id ?? null))
    else filled.push(bind(ctx, b, globalAt(globals ??= globalsOf(ctx), b.path)))
  }
  return filled
}

/** A write plan's bindings for one run, given the record id and the values of the plan's fields, encoded, in the plan's order. */
export type SlotFiller = (ctx: CrudContext, id: string | number | undefined, values: readonly Binding[]) => Binding[]

/** Where one binding of a write plan comes from (slotFiller). */
type Source =
  | { from: 'as is', binding: Binding }
  | { from: 'value', at: number }
  | { from: 'id' | 'global', slot: Slot }

/**
 * A write plan's bindings compiled once, beside its text: each is kept as it is, or is the record id,
 * the value given one of `fields` (by its position) or a global. A run then fills them in one pass,
 * with no look-up by name (the plan's `$value.<name>` slots were made for these fields: valueSlot).
 */
export function slotFiller (bindings: readonly Binding[], fields: readonly TableField[]): SlotFiller {
  const sources = bindings.map((b): Source => {
    if (!isSlot(b)) return { from: 'as is', binding: b }
    if (b.path === ID_SLOT) return { from: 'id', slot: b }
    if (!b.path.startsWith(VALUE_PREFIX)) return { from: 'global', slot: b }
    const at = fields.findIndex((f) => f.name === b.path.slice(VALUE_PREFIX.length))
    // A value slot of no field given binds null, as an unplanned write binds a value not given.
    return at < 0 ? { from: 'as is', binding: null } : { from: 'value', at }
  })
  return (ctx, id, values) => {
    let globals: Record<string, unknown> | undefined
    const filled: Binding[] = []
    for (const source of sources) {
      if (source.from === 'as is') filled.push(source.binding)
      else if (source.from === 'value') filled.push(values[source.at])
      else if (source.from === 'id') filled.push(bind(ctx, source.slot, id ?? null))
      else filled.push(bind(ctx, source.slot, globalAt(globals ??= globalsOf(ctx), source.slot.path)))
    }
    return filled
  }
}

export function isSlot (binding: unknown): binding is Slot {
  return binding !== null && typeof binding === 'object' && typeof (binding as Slot).path === 'string'
}

function bind (ctx: CrudContext, slot: Slot, value: unknown): Binding {
  try {
    // What the dialect's literal binds for a typed value, without making its fragment.
    if (slot.field !== undefined && value !== null) return ctx.dialect.encode(slot.field, value)
    return ctx.dialect.literal(value, slot.field).bindings[0]
  } catch (error) {
    if (error instanceof ValueError) throw errors.expression('where', `${slot.field?.name ?? 'value'} ${error.message}`)
    throw error
  }
}
