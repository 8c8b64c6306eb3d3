// A list's total kept per data version (decision D125): counting every row a rule admits costs far
// more than the page (a rule that follows relations must relate each row to its parents), and most
// lists are asked again before anything is written. A total is kept under the data version it was
// counted at (DirectRunner#dataVersion): the same statement with the same values answers the same
// total while the version is unchanged, and after any write anywhere it is counted again, except
// across writes this process knows all of (decision D132): where every write since the total was
// counted is a lone one (a statement alone in its transaction, placed among versions by its
// WriteSpan), an insert into the list's own table or into a table the count does not read, or an
// update of columns the count does not read, the rows the rule admits now are the ones it admitted
// then plus those of the inserted rows it admits, which one look-up by key counts. Kept per caller as well, so whether a total was already counted says
// nothing of other callers. Never for a statement that reads the clock, nor inside a transaction.
import type { Binding, WriteSpan } from '../dialects/types.js'
import type { CrudContext } from './context.js'
import type { Carry, Counted } from './read-plans.js'
import { andThen, type MaybePromise } from '../maybe-async.js'
import { LoneWrites } from './lone-writes.js'

/** Totals kept at most (one process, every app and table). */
const MAX_TOTALS = 10_000
/** A key longer than this (long bound values) is counted each time rather than kept. */
const MAX_KEY = 2048

/** A total is carried across at most this many writes, and this many inserted rows: past them it is counted again. */
const MAX_CARRIED_WRITES = 64
/**
 * Writes remembered to carry totals across: the last ones of each connection, twice as many as a
 * total is carried across. Few, so that they die young: a thousand
 * kept lived long enough to be promoted, and the collector's work cost an insert 3 µs.
 */
const MAX_WRITES = 2 * MAX_CARRIED_WRITES
const MAX_CARRIED_ROWS = 500

interface Kept { version: string, total: number, table?: string }

const kept = new Map<string, Kept>()
/**
 * The last lone writes of each connection (the runner that made them): PostgreSQL's
 * transaction ids and snapshots span the server, so another app's write there is not one of ours.
 */
const writesByRunner = new WeakMap<object, LoneWrites>()
/** How many kept totals may be carried across writes, by the table each counts. */
const carriedTables = new Map<string, number>()
const statementIds = new WeakMap<object, number>()
let nextStatementId = 0

/** Lookups by result, for the metrics (every app of the process). */
export const totalCacheCounts = { hits: 0, misses: 0, carried: 0 }

/**
 * The total `count` answers for `statement` with `values`: kept from an earlier count while the
 * data version is unchanged, carried across known writes, else counted now (and kept). `statement`
 * is the plan's, kept with it (plan-cache.ts), so its identity names its SQL text.
 */
export function keptTotal (ctx: CrudContext, statement: object, values: readonly Binding[], count: () => MaybePromise<Counted>, carry?: Carry, known?: string): MaybePromise<number> {
  const version = known ?? (ctx.db.isTransaction === true ? undefined : ctx.direct?.dataVersion?.())
  if (version === undefined) return andThen(count(), (counted) => counted.total)
  let id = statementIds.get(statement)
  if (id === undefined) statementIds.set(statement, id = nextStatementId++)
  const key = `${id}\u0000${ctx.auth.uid ?? ''}\u0000${JSON.stringify(values, plainBigints)}`
  if (key.length > MAX_KEY) return andThen(count(), (counted) => counted.total)
  const look = (now: string): MaybePromise<number> => lookUp(ctx, key, now, count, carry)
  return version instanceof Promise ? version.then(look) : look(version)
}

function lookUp (ctx: CrudContext, key: string, version: string, count: () => MaybePromise<Counted>, carry: Carry | undefined): MaybePromise<number> {
  const found = kept.get(key)
  if (found !== undefined && found.version === version) {
    totalCacheCounts.hits++
    return found.total
  }
  const insertedKeys = found?.table === undefined || carry === undefined ? undefined : insertedSince(ctx, found.version, version, carry)
  if (found === undefined || carry === undefined || insertedKeys === undefined) return counted(key, version, count, carry)
  const looked = carry.count(ctx, insertedKeys)
  const atOnce = !(looked instanceof Promise)
  const settle = (admitted: Counted): MaybePromise<number> => {
    // The look-up must be at the version the inserts were followed to: where it says it read at
    // another, or waited without saying, something else may have changed meanwhile.
    if (admitted.version === undefined ? !atOnce : admitted.version !== version) return counted(key, version, count, carry)
    totalCacheCounts.carried++
    return keepCounted(key, version, { total: found.total + admitted.total, version: admitted.version }, carry, atOnce)
  }
  return looked instanceof Promise ? looked.then(settle) : settle(looked)
}

function counted (key: string, version: string, count: () => MaybePromise<Counted>, carry: Carry | undefined): MaybePromise<number> {
  totalCacheCounts.misses++
  const result = count()
  const atOnce = !(result instanceof Promise)
  return andThen(result, (answer) => keepCounted(key, version, answer, carry, atOnce))
}

/**
 * Keeps a total under the version it was counted at: the one the statement names, else, for a
 * count that answered at once (on the connection the version was read from, nothing in between),
 * the one read just before. A later insert's span can be followed only from such an exact version;
 * a count that waited without naming its version (a reader thread) is kept, but never carried.
 */
function keepCounted (key: string, version: string, answer: Counted, carry: Carry | undefined, atOnce: boolean): number {
  const exact = answer.version !== undefined || atOnce
  keep(key, { version: answer.version ?? version, total: answer.total, table: exact ? carry?.table : undefined })
  return answer.total
}

/**
 * The keys of the rows inserted into the carry's table between data versions `from` and `to`, when
 * every write between them is a known lone write that changes nothing else the total counts: an
 * insert into it or into a table the count does not read, an update of columns it does not read.
 * Undefined when anything else may have changed.
 */
function insertedSince (ctx: CrudContext, from: string, to: string, carry: Carry): unknown[] | undefined {
  const writes = ctx.direct === undefined ? undefined : writesByRunner.get(ctx.direct)
  if (writes === undefined) return undefined
  const between = ctx.dialect.writesBetween?.(from, to, (id) => writes.find(id)?.span, MAX_CARRIED_WRITES)
  if (between === undefined) return undefined
  const keys: unknown[] = []
  for (const id of between) {
    const write = writes.find(id)
    if (write === undefined) return undefined
    if (!carry.reads.tables.has(write.table)) continue
    const { assigned } = write
    if (write.keys !== undefined) {
      if (write.table !== carry.table) return undefined
      keys.push(...write.keys)
      if (keys.length > MAX_CARRIED_ROWS) return undefined
    } else {
      const read = carry.reads.columns?.get(write.table)
      if (read === undefined || assigned === undefined || [...assigned].some((name) => read.has(name))) return undefined
      // A changed key would lose a row inserted earlier from the keys looked up.
      if (write.table === carry.table && assigned.has(carry.key)) return undefined
    }
  }
  return keys
}

function keep (key: string, entry: Kept): void {
  // Re-inserted at the end: the first entry is the least recently counted.
  forget(key)
  kept.set(key, entry)
  if (entry.table !== undefined) carriedTables.set(entry.table, (carriedTables.get(entry.table) ?? 0) + 1)
  if (kept.size > MAX_TOTALS) {
    const oldest = kept.keys().next()
    if (oldest.done !== true) forget(oldest.value)
  }
}

function forget (key: string): void {
  const entry = kept.get(key)
  if (entry === undefined) return
  kept.delete(key)
  if (entry.table === undefined) return
  const left = (carriedTables.get(entry.table) ?? 1) - 1
  if (left === 0) carriedTables.delete(entry.table)
  else carriedTables.set(entry.table, left)
}

/** Whether writes should be placed among data versions for the totals: while any may be carried across them. */
export function followsWrites (): boolean {
  return carriedTables.size > 0
}

/**
 * A lone insert into `table` (lib/crud/statements.ts#reportLoneInsert): where its span places it and
 * the keys it inserted. One into a table no total counts is remembered too: a total that does not
 * read that table is carried across it. One whose keys JSON does not carry as they are is not: no
 * total is carried across it.
 */
export function insertedAlone (runner: object, table: string, span: WriteSpan, keys: readonly unknown[]): void {
  if (keys.every(plainKey)) lonesOf(runner).inserted(span, table, keys)
}

/** A lone update of `table` (lib/crud/statements.ts#reportLoneUpdate): where its span places it and the columns it assigned. */
export function updatedAlone (runner: object, table: string, span: WriteSpan, assigned: ReadonlySet<string>): void {
  lonesOf(runner).updated(span, table, assigned)
}

function lonesOf (runner: object): LoneWrites {
  let writes = writesByRunner.get(runner)
  if (writes === undefined) writesByRunner.set(runner, writes = new LoneWrites(MAX_WRITES))
  return writes
}

/** A key JSON carries as it is (Dialect#keyIn binds the keys as one JSON array). */
function plainKey (value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value))
}

function plainBigints (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? { bigint: value.toString() } : value
}
