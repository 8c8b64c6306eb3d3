// The last lone writes of one connection (decision D132), which a kept total may be carried across
// (lib/crud/total-cache.ts). Every write pays for being remembered while any total may be carried,
// and most are never looked up: a write only takes a slot in a ring (no string, no map entry; a
// SQLite span's id is made when read), and writes are indexed by their span's id when a total asks,
// each at most once (decision D141).
import type { WriteSpan } from '../dialects/types.js'

/** A lone write: where it sits among data versions, its table, and the keys of the rows it inserted or the columns it assigned. */
export class LoneWrite {
  constructor (
    readonly span: WriteSpan,
    readonly table: string,
    /** The keys of the rows an insert wrote; undefined for an update. */
    readonly keys: readonly unknown[] | undefined,
    /** The columns an update assigned; undefined for an insert. */
    readonly assigned: ReadonlySet<string> | undefined,
    /** Its place in its connection's order of writes. */
    readonly number: number
  ) {}
}

export class LoneWrites {
  private readonly ring: LoneWrite[] = []
  private readonly byId = new Map<string, LoneWrite>()
  /** Writes added ever, and how many of them were indexed by id. */
  private added = 0
  private indexed = 0

  /** `size`: how many of the last writes are remembered. */
  constructor (private readonly size: number) {}

  inserted (span: WriteSpan, table: string, keys: readonly unknown[]): void {
    this.add(new LoneWrite(span, table, keys, undefined, this.added))
  }

  updated (span: WriteSpan, table: string, assigned: ReadonlySet<string>): void {
    this.add(new LoneWrite(span, table, undefined, assigned, this.added))
  }

  /** The remembered write whose span has id `id`. */
  find (id: string): LoneWrite | undefined {
    this.index()
    return this.byId.get(id)
  }

  private add (write: LoneWrite): void {
    // The oldest slot is overwritten: that write is forgotten.
    this.ring[this.added % this.size] = write
    this.added++
  }

  /** Indexes the writes added since the last look-up, and drops the ones the ring no longer holds. */
  private index (): void {
    const oldest = this.added - this.size
    if (this.indexed < oldest) {
      this.byId.clear()
      this.indexed = oldest
    }
    for (; this.indexed < this.added; this.indexed++) {
      const write = this.ring[this.indexed % this.size]
      const { id } = write.span
      // Deleted first, so the map stays in the order of the writes.
      this.byId.delete(id)
      this.byId.set(id, write)
    }
    // Indexed in order: the forgotten ones come first.
    for (const [id, write] of this.byId) {
      if (write.number >= oldest) break
      this.byId.delete(id)
    }
  }
}
