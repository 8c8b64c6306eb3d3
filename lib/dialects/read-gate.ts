// How many reads that may take long (Statement#offThread: a search, an expansion) one instance runs
// on PostgreSQL at once. Each holds a database backend busy on a core; four searches run as eight
// statements at once left `select 1` and every short statement of other requests waiting for a core
// behind them. SQLite bounds the same reads by its reader threads (lib/dialects/sqlite-readers.ts);
// this is PostgreSQL's bound, with the same answer when too many wait: busy.

/** The error of a read refused because every slot is taken and the queue is full (postgres.ts#isBusy knows it). */
export const READS_BUSY = 'FB_PG_COSTLY_READS_BUSY'

export class ReadGate {
  private running = 0
  private readonly waiting: Array<() => void> = []

  /** `slots` reads at once; at most `queued` more wait for one, beyond which a read is refused. */
  constructor (private readonly slots: number, private readonly queued: number) {}

  async run<T> (read: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) {
      this.running++
    } else {
      if (this.waiting.length >= this.queued) throw Object.assign(new Error('Every slot for long PostgreSQL reads is taken'), { code: READS_BUSY })
      // The slot is handed over by the read that frees it: `running` does not change.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    try {
      return await read()
    } finally {
      const next = this.waiting.shift()
      if (next !== undefined) next()
      else this.running--
    }
  }
}
