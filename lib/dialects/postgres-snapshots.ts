// Which transactions completed between two PostgreSQL snapshots (pg_current_snapshot(), the data
// version of DirectRunner#dataVersion): a list total kept at the first may be carried to the second
// when every one of them is a write fastbase knows all of (lib/crud/total-cache.ts, decision D132).
// A snapshot `xmin:xmax:xip,...` says: ids below xmin are completed, ids from xmax on had not
// started, the listed ones were in progress. Only transactions that wrote get an id.
import type { WriteSpan } from './types.js'

interface Snapshot { xmin: bigint, xmax: bigint, inProgress: Set<bigint> }

function parse (text: string): Snapshot | undefined {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text)
  if (match === null) return undefined
  return { xmin: BigInt(match[1]), xmax: BigInt(match[2]), inProgress: new Set(match[3] === '' ? [] : match[3].split(',').map(BigInt)) }
}

/**
 * The ids of the transactions that completed (committed or rolled back: a snapshot does not tell)
 * after `from` was taken and before `to` was, when each is a write `known` names and there are at
 * most `limit`; undefined otherwise.
 */
export function writesBetween (from: string, to: string, known: (id: string) => WriteSpan | undefined, limit: number): string[] | undefined {
  const before = parse(from)
  const after = parse(to)
  if (before === undefined || after === undefined || after.xmax < before.xmax || after.xmax - before.xmax > BigInt(limit)) return undefined
  const completed: bigint[] = []
  // Running at `from`: those completed since. Started since: those not running at `to`.
  for (const id of before.inProgress) if (!after.inProgress.has(id)) completed.push(id)
  for (let id = before.xmax; id < after.xmax; id++) if (!after.inProgress.has(id)) completed.push(id)
  if (completed.length > limit) return undefined
  const ids = completed.sort((a, b) => (a < b ? -1 : 1)).map(String)
  return ids.every((id) => known(id) !== undefined) ? ids : undefined
}
