// A list's total kept per data version (decision D125): counting every row a rule admits costs far
// more than the page (a rule that follows relations must relate each row to its parents), and most
// lists are asked again before anything is written. A total is kept under the data version read
// before it was counted (DirectRunner#dataVersion): the same statement with the same values answers
// the same total while the version is unchanged, and after any write anywhere it is counted again.
// Kept per caller as well, so whether a total was already counted says nothing of other callers.
// Never for a statement that reads the clock, nor inside a transaction (no version there).
import type { Binding } from '../dialects/types.js'
import type { CrudContext } from './context.js'
import { andThen, type MaybePromise } from '../maybe-async.js'

/** Totals kept at most (one process, every app and table). */
const MAX_TOTALS = 10_000
/** A key longer than this (long bound values) is counted each time rather than kept. */
const MAX_KEY = 2048

interface Kept { version: string, total: number }

const kept = new Map<string, Kept>()
const statementIds = new WeakMap<object, number>()
let nextStatementId = 0

/** Lookups by result, for the metrics (every app of the process). */
export const totalCacheCounts = { hits: 0, misses: 0 }

/**
 * The total `count` answers for `statement` with `values`: kept from an earlier count while the
 * data version is unchanged, else counted now (and kept). `statement` is the plan's, kept with it
 * (plan-cache.ts), so its identity names its SQL text.
 */
export function keptTotal (ctx: CrudContext, statement: object, values: readonly Binding[], count: () => MaybePromise<number>): MaybePromise<number> {
  const version = ctx.db.isTransaction === true ? undefined : ctx.direct?.dataVersion?.()
  if (version === undefined) return count()
  let id = statementIds.get(statement)
  if (id === undefined) statementIds.set(statement, id = nextStatementId++)
  const key = `${id}\u0000${ctx.auth.uid ?? ''}\u0000${JSON.stringify(values, plainBigints)}`
  if (key.length > MAX_KEY) return count()
  return version instanceof Promise ? version.then(async (now) => await lookUp(key, now, count)) : lookUp(key, version, count)
}

function lookUp (key: string, version: string, count: () => MaybePromise<number>): MaybePromise<number> {
  const found = kept.get(key)
  if (found !== undefined && found.version === version) {
    totalCacheCounts.hits++
    return found.total
  }
  totalCacheCounts.misses++
  return andThen(count(), (total) => {
    // Re-inserted at the end: the first entry is the least recently counted.
    kept.delete(key)
    kept.set(key, { version, total })
    if (kept.size > MAX_TOTALS) {
      const oldest = kept.keys().next()
      if (oldest.done !== true) kept.delete(oldest.value)
    }
    return total
  })
}

function plainBigints (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? { bigint: value.toString() } : value
}
