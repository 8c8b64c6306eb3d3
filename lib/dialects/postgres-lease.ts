// Idle pool connections kept at hand between the statements fastbase runs outside transactions.
// Every statement went to Knex's pool (tarn) for a connection and back: a pending operation, a
// promise chain and an acquire timeout per statement, a tenth of the allocation of a one-row read.
// Here a connection a statement is done with waits on a stack instead, for the next statement. The
// pool still owns every connection: the stack hands them back the moment anything else asks the
// pool for one (a transaction, a Knex query), after a second unused, and on close.

/** What is used of a pool connection: Knex marks one whose socket failed. */
export interface LeasedConnection { __knex__disposed?: unknown }

/** What is used of Knex's client and its tarn pool (Knex types both `any`). */
export interface LeasePool<C> {
  acquireConnection: () => Promise<C>
  releaseConnection: (connection: C) => unknown
  pool: {
    numPendingAcquires: () => number
    on: (event: 'acquireRequest', listener: () => void) => unknown
    removeListener: (event: 'acquireRequest', listener: () => void) => unknown
  }
}

// How long an unused connection stays out of the pool: the pool's own idle reaping (30 s) and its
// counts see it again after this.
const IDLE_MS = 1000

export class ConnectionLease<C extends LeasedConnection> {
  private readonly idle: C[] = []
  private acquiring = false
  private lastUse = 0
  private sweeper: NodeJS.Timeout | undefined

  constructor (private readonly client: LeasePool<C>) {
    client.pool.on('acquireRequest', this.onPoolAcquire)
  }

  /** An idle connection from the stack, else one from the pool. */
  async acquire (): Promise<C> {
    this.lastUse = Date.now()
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      if (connection.__knex__disposed === undefined) return connection
      // The pool destroys what Knex marked broken when it gets it back.
      this.client.releaseConnection(connection)
    }
    // The pool announces a request synchronously, inside acquireConnection before its first await:
    // this one is ours, not another's to make way for.
    this.acquiring = true
    let pending: Promise<C>
    try {
      pending = this.client.acquireConnection()
    } finally {
      this.acquiring = false
    }
    return await pending
  }

  /** Back on the stack, or to the pool when someone waits on it or the connection broke. */
  release (connection: C): void {
    if (connection.__knex__disposed !== undefined || this.client.pool.numPendingAcquires() > 0) {
      this.client.releaseConnection(connection)
      return
    }
    this.idle.push(connection)
    this.sweeper ??= setInterval(this.sweep, IDLE_MS).unref()
  }

  /** Every idle connection back to the pool (before it closes). */
  close (): void {
    this.client.pool.removeListener('acquireRequest', this.onPoolAcquire)
    this.flush()
  }

  private readonly onPoolAcquire = (): void => {
    if (!this.acquiring) this.flush()
  }

  private readonly sweep = (): void => {
    if (Date.now() - this.lastUse >= IDLE_MS) this.flush()
  }

  private flush (): void {
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) this.client.releaseConnection(connection)
    clearInterval(this.sweeper)
    this.sweeper = undefined
  }
}
