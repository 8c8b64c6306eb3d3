// Pool connections kept at hand between the statements fastbase runs outside transactions. Every
// statement went to Knex's pool (tarn) for a connection and back: a pending operation, a promise
// chain and an acquire timeout per statement, a tenth of the allocation of a one-row read. Here a
// connection a statement is done with goes to the next statement waiting for one, else onto a
// stack for the next to come; only when the lease holds none and the pool may still open one does a
// statement ask the pool. The pool still owns every connection and comes first: a released
// connection goes to it while anything else (a transaction, a Knex query) waits on it, the stack is
// handed back the moment anything else asks it, after a second unused, and when the pool closes.

/** What is used of a pool connection: Knex marks one whose socket failed. */
export interface LeasedConnection { __knex__disposed?: unknown }

/** What is used of Knex's client and its tarn pool (Knex types both `any`). */
export interface LeasePool<C> {
  acquireConnection: () => Promise<C>
  releaseConnection: (connection: C) => unknown
  /** Gone once Knex is destroyed (its acquireConnection then says so). */
  pool?: {
    max: number
    numUsed: () => number
    numPendingCreates: () => number
    numPendingAcquires: () => number
    on: (event: 'acquireRequest' | 'poolDestroyRequest', listener: () => void) => unknown
    removeListener: (event: 'acquireRequest' | 'poolDestroyRequest', listener: () => void) => unknown
  }
}

interface Waiter<C> { resolve: (connection: C) => void, reject: (error: unknown) => void, since: number }

// How long an unused connection stays out of the pool (the pool's own idle reaping and its counts
// see it again after this), and how long a statement waits for a released connection before it asks
// the pool instead (where the pool's acquire timeout applies, should every statement hang).
const IDLE_MS = 1000

export class ConnectionLease<C extends LeasedConnection> {
  private readonly idle: C[] = []
  /** Statements waiting for a connection one of `inUse` will hand them: never more than those. */
  private readonly waiters: Array<Waiter<C>> = []
  /** Connections this lease took from the pool that a statement is using now. */
  private inUse = 0
  private acquiring = false
  private closed = false
  private lastUse = 0
  private sweeper: NodeJS.Timeout | undefined

  constructor (private readonly client: LeasePool<C>) {
    client.pool?.on('acquireRequest', this.onPoolAcquire)
    // The pool's destroy waits for every connection it lent: whoever destroys Knex, it gets them back.
    client.pool?.on('poolDestroyRequest', this.close)
  }

  /** An idle connection, at once (no promise per statement); else the next one a statement releases, else one from the pool. */
  acquire (): C | Promise<C> {
    this.lastUse = Date.now()
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      if (connection.__knex__disposed === undefined) {
        this.inUse++
        return connection
      }
      // The pool destroys what Knex marked broken when it gets it back.
      this.client.releaseConnection(connection)
    }
    const { pool } = this.client
    if (!this.closed && pool !== undefined && this.waiters.length < this.inUse && pool.numUsed() + pool.numPendingCreates() >= pool.max) {
      this.sweeper ??= setInterval(this.sweep, IDLE_MS).unref()
      return new Promise<C>((resolve, reject) => { this.waiters.push({ resolve, reject, since: this.lastUse }) })
    }
    return this.fromPool()
  }

  /** To the pool when anything else waits on it or the connection broke; else to a waiting statement or the stack. */
  release (connection: C): void {
    if (this.closed || connection.__knex__disposed !== undefined || this.client.pool === undefined || this.client.pool.numPendingAcquires() > 0) {
      this.inUse--
      this.client.releaseConnection(connection)
      // A waiter counted on this connection: it asks the pool instead.
      const waiter = this.waiters.length > this.inUse ? this.waiters.shift() : undefined
      if (waiter !== undefined) this.fromPool().then(waiter.resolve, waiter.reject)
      return
    }
    const waiter = this.waiters.shift()
    if (waiter !== undefined) {
      waiter.resolve(connection)
      return
    }
    this.inUse--
    this.idle.push(connection)
    this.sweeper ??= setInterval(this.sweep, IDLE_MS).unref()
  }

  /** Connections idle on the stack, and statements waiting for one a statement releases (metrics). */
  held (): { idle: number, waiting: number } {
    return { idle: this.idle.length, waiting: this.waiters.length }
  }

  /** Every idle connection back to the pool, and from now on every released one (before it closes). */
  readonly close = (): void => {
    this.closed = true
    this.client.pool?.removeListener('acquireRequest', this.onPoolAcquire)
    this.client.pool?.removeListener('poolDestroyRequest', this.close)
    this.flush()
  }

  private async fromPool (): Promise<C> {
    // The pool announces a request synchronously, inside acquireConnection before its first await:
    // this one is the lease's own, not another's to make way for.
    this.acquiring = true
    let pending: Promise<C>
    try {
      pending = this.client.acquireConnection()
    } finally {
      this.acquiring = false
    }
    const connection = await pending
    this.inUse++
    return connection
  }

  private readonly onPoolAcquire = (): void => {
    if (!this.acquiring) this.flush()
  }

  private readonly sweep = (): void => {
    const now = Date.now()
    for (let waiter = this.waiters[0]; waiter !== undefined && now - waiter.since >= IDLE_MS; waiter = this.waiters[0]) {
      this.waiters.shift()
      this.fromPool().then(waiter.resolve, waiter.reject)
    }
    if (now - this.lastUse >= IDLE_MS) this.flush()
  }

  /** The idle connections back to the pool; the sweeper stops once nothing is held or waiting. */
  private flush (): void {
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) this.client.releaseConnection(connection)
    if (this.waiters.length > 0) return
    clearInterval(this.sweeper)
    this.sweeper = undefined
  }
}
