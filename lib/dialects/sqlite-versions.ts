// Which writes moved one SQLite data version to another (decision D132). A version is
// `epoch:changes:data_version:schema_version` (lib/dialects/sqlite-connection.ts): the writer
// connection's token, its total_changes() (every row any statement of this process changed, rolled
// back or not), and two counters that only grow, one when another connection or process commits,
// one with any schema change. A lone insert's span names the changes count just before it and just
// after (`epoch:changes`). Between two versions with the same epoch and counters, the writes are a
// chain of spans from the first count to the second, or unknown.
import type { WriteSpan } from './types.js'

export function writesBetween (from: string, to: string, known: (id: string) => WriteSpan | undefined, limit: number): string[] | undefined {
  const [epoch, start, ...counters] = from.split(':')
  const [toEpoch, end, ...toCounters] = to.split(':')
  if (epoch !== toEpoch || counters.length !== 2 || counters.join(':') !== toCounters.join(':')) return undefined
  const ids: string[] = []
  const last = `${epoch}:${end}`
  for (let at = `${epoch}:${start}`; at !== last;) {
    const span = known(at)
    if (span?.after === undefined || ids.length === limit) return undefined
    ids.push(at)
    at = span.after
  }
  return ids
}

/**
 * A lone write's span: the writer's changes count just before it and just after, under its epoch.
 * Its names are made when read: most spans never are (lib/crud/lone-writes.ts).
 */
export class ChangesSpan implements WriteSpan {
  constructor (private readonly epoch: string, private readonly before: number, private readonly to: number) {}
  get id (): string { return `${this.epoch}:${this.before}` }
  get after (): string { return `${this.epoch}:${this.to}` }
}
