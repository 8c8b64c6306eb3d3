// Realtime subscriptions on one instance: connected clients, their subscriptions grouped by what
// decides their events (table, where, the caller as rules see it), and the delivery of committed
// changes to them. Fastify-free: the route gives each client a sink (its HTTP response).
//
// A committed change (lib/realtime/changes.ts) carries its rows as the statement left them (a
// delete: as they were). They are evaluated on those values, as a derived table named like the
// table (Dialect#rowsAs): one query per table, batch of changes and up to CLASSES_PER_QUERY
// subscriber classes, which says per row and class whether the class's `listRule` and `where`
// (compiled by lib/expr exactly as for `list`, with `ruleFirst`) hold. A non-admin's record is sent
// without `noSelect` fields.
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import type { TableDescriptor } from '../table.js'
import type { AuthContext } from '../auth-context.js'
import { authGlobals } from '../auth-context.js'
import type { Fragment } from '../dialects/types.js'
import { crudContext, ruleCondition, ruleFirst, whereOf, type Condition, type Executor } from '../crud/context.js'
import { errors } from '../errors.js'
import type { Change, ChangeAction, ChangeSink } from './changes.js'
import type { RevokedSessions } from '../auth/sessions.js'

type Row = Record<string, unknown>

export interface RealtimeSettings {
  /** Milliseconds between heartbeat comments. */
  heartbeatMs: number
  /** Subscriptions one connection may hold. */
  maxSubscriptions: number
  /** Connections one user (or, anonymous, one IP address) may hold on this instance. */
  maxConnections: number
  /** Bytes an unread connection may buffer before it is closed (reason `overflow`). */
  queueBytes: number
  /** Milliseconds between checks that a user's session is still valid (logout, revocation). */
  sessionCheckMs: number
  /** Changes waiting for delivery on this instance before the oldest are dropped (clients get `gap`). */
  maxPending: number
}

export interface Subscription { table: string, where?: string }

/** Where a client's events go: its HTTP response. */
export interface ClientSink {
  write: (chunk: string) => void
  /** Bytes written but not yet taken by the client's socket. */
  buffered: () => number
  /** Ends the stream (after `last` is written); `abort` also drops what the client never read. */
  end: (abort: boolean) => void
}

/** Why the server closes a stream (the last event, `event: error`, says it). */
export type CloseReason = 'overflow' | 'expired' | 'revoked' | 'forbidden' | 'shutdown'

const CLOSE_BODIES: Record<CloseReason, { code: number, message: string }> = {
  overflow: { code: 429, message: 'The client did not read events fast enough; reconnect and refetch' },
  expired: { code: 401, message: 'Invalid or expired token' },
  revoked: { code: 401, message: 'Invalid or expired token' },
  forbidden: { code: 403, message: 'Forbidden' },
  shutdown: { code: 503, message: 'The server is shutting down; reconnect' }
}

export interface ClientOptions {
  auth: AuthContext
  /** Who may change this client's subscriptions and whose connection count it takes. */
  identity: string
  /** Connection-limit key: the identity, or `ip:<address>` for anonymous callers. */
  limitKey: string
  sink: ClientSink
  /** When the caller's token expires (ms since epoch); the stream ends then. */
  expiresAt?: number
  /** Re-checks the caller (session still valid): the current context, or undefined when it no longer is. */
  recheck?: () => Promise<AuthContext | undefined>
}

export class RealtimeClient {
  readonly id = randomBytes(16).toString('base64url')
  auth: AuthContext
  subscriptions: Subscription[] = []
  classes: SubscriberClass[] = []
  closed = false
  constructor (readonly hub: RealtimeHub, readonly options: ClientOptions) {
    this.auth = options.auth
  }

  private checkedRound = -1

  /**
   * Writes an event. Once per delivery round (the events of one batch of changes, or a heartbeat)
   * the bytes the client has not taken yet are checked: over `queueBytes` the stream is closed
   * (`overflow`). So a client's buffer holds at most queueBytes plus one round, however slow it reads.
   */
  send (chunk: string): void {
    if (this.closed) return
    if (this.checkedRound !== this.hub.round) {
      this.checkedRound = this.hub.round
      if (this.options.sink.buffered() > this.hub.settings.queueBytes) {
        this.hub.stats.overflows++
        this.close('overflow')
        return
      }
    }
    this.options.sink.write(chunk)
  }

  /** Ends the stream with `event: error` naming the reason (none when the client went away). */
  close (reason?: CloseReason): void {
    if (this.closed) return
    this.closed = true
    this.hub.detach(this)
    if (reason !== undefined) this.options.sink.write(frame('error', { ...CLOSE_BODIES[reason], reason }))
    this.options.sink.end(reason === 'overflow')
  }
}

/** Subscribers who get exactly the same events: one table, one where, one caller as rules see it. */
interface SubscriberClass {
  key: string
  table: TableDescriptor
  admin: boolean
  condition: Condition
  clients: Set<RealtimeClient>
}

export function frame (event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

// Subscriber classes evaluated per query (each adds one CASE column and its bindings), and rows per query.
const CLASSES_PER_QUERY = 50
const ROWS_PER_QUERY = 200
// Changes taken from the queue per round.
const ROUND = 1000

export class RealtimeHub implements ChangeSink {
  readonly clients = new Map<string, RealtimeClient>()
  private readonly byTable = new Map<string, Map<string, SubscriberClass>>()
  private readonly perLimitKey = new Map<string, number>()
  private queue: Change[] = []
  private draining = false
  private idle: Promise<void> = Promise.resolve()
  private timers: NodeJS.Timeout[] = []
  /** Set on PostgreSQL: changes go to the other instances too (lib/realtime/pg-bus.ts). */
  forward?: (changes: Change[]) => void
  /** true when other instances may subscribe: every table's writes are captured. */
  shared = false
  /** Set on PostgreSQL: records, fleet-wide, that this instance has subscribers for these tables. */
  announce?: (tables: string[]) => Promise<void>
  closing = false
  /** Delivery rounds so far (see RealtimeClient#send). */
  round = 0
  readonly stats = { delivered: 0, evaluations: 0, dropped: 0, overflows: 0 }

  constructor (
    readonly executor: Executor,
    readonly tables: Map<string, TableDescriptor>,
    readonly settings: RealtimeSettings,
    readonly log: { warn: (obj: object, msg: string) => void, debug?: (obj: object, msg: string) => void }
  ) {
    this.timers.push(setInterval(() => this.heartbeat(), settings.heartbeatMs).unref())
    this.timers.push(setInterval(() => { void this.recheckSessions() }, settings.sessionCheckMs).unref())
  }

  // ------------------------------------------------------------ clients and subscriptions

  /** A new client, or a 429 when its user (or IP) holds the maximum of connections already. */
  connect (options: ClientOptions): RealtimeClient {
    if (this.closing) throw errors.shuttingDown()
    const held = this.perLimitKey.get(options.limitKey) ?? 0
    if (held >= this.settings.maxConnections) throw errors.tooManyRequests(`Too many realtime connections (at most ${this.settings.maxConnections} per user, or per address when signed out)`)
    const client = new RealtimeClient(this, options)
    this.perLimitKey.set(options.limitKey, held + 1)
    this.clients.set(client.id, client)
    if (options.expiresAt !== undefined) {
      const expiresAt = options.expiresAt
      let timer: NodeJS.Timeout
      // setTimeout takes at most 2^31-1 ms (24.8 days): a longer token re-arms until it is due.
      const arm = (): void => {
        const left = expiresAt - Date.now()
        timer = setTimeout(() => { if (Date.now() >= expiresAt) client.close('expired'); else arm() }, Math.max(0, Math.min(left, 2 ** 31 - 1)))
        timer.unref()
      }
      arm()
      const end = client.options.sink.end
      client.options.sink.end = (abort) => { clearTimeout(timer); end(abort) }
    }
    return client
  }

  detach (client: RealtimeClient): void {
    if (this.clients.get(client.id) !== client) return
    this.clients.delete(client.id)
    this.unregister(client)
    const held = (this.perLimitKey.get(client.options.limitKey) ?? 1) - 1
    if (held <= 0) this.perLimitKey.delete(client.options.limitKey)
    else this.perLimitKey.set(client.options.limitKey, held)
  }

  /**
   * Replaces a client's subscriptions. Checked first, all or nothing: at most maxSubscriptions, each
   * table known (404) and keyed (400), its listRule allowing this caller some rows (403), its where
   * valid (400, the same messages as list).
   */
  subscribe (client: RealtimeClient, subscriptions: Subscription[]): void {
    const classes = this.classesFor(client.auth, subscriptions)
    this.unregister(client)
    client.subscriptions = subscriptions
    client.classes = classes.map((c) => this.register(c, client))
  }

  private classesFor (auth: AuthContext, subscriptions: Subscription[]): SubscriberClass[] {
    if (subscriptions.length > this.settings.maxSubscriptions) throw errors.badRequest(`At most ${this.settings.maxSubscriptions} subscriptions per connection`)
    const globals = JSON.stringify(authGlobals(auth))
    return subscriptions.map((s) => {
      const table = this.tables.get(s.table)
      if (table === undefined) throw errors.tableNotFound(s.table)
      if (table.key.length === 0) throw errors.badRequest(`Table ${s.table} has no primary key or uid field: it cannot be subscribed to`)
      const ctx = crudContext(this.executor, table, auth)
      const where = s.where === undefined || s.where.trim() === '' ? undefined : s.where
      const rule = ruleCondition(ctx, 'listRule')
      // A rule that lets this caller see nothing (`auth.uid != null` when anonymous) is refused like a missing one.
      if (rule === false) throw errors.forbidden()
      const condition = ruleFirst(rule, whereOf(ctx, where))
      return { key: `${table.name}\u0000${where ?? ''}\u0000${globals}`, table, admin: auth.admin, condition, clients: new Set() }
    })
  }

  private register (candidate: SubscriberClass, client: RealtimeClient): SubscriberClass {
    let classes = this.byTable.get(candidate.table.name)
    if (classes === undefined) this.byTable.set(candidate.table.name, classes = new Map())
    let existing = classes.get(candidate.key)
    if (existing === undefined) classes.set(candidate.key, existing = candidate)
    existing.clients.add(client)
    return existing
  }

  private unregister (client: RealtimeClient): void {
    for (const c of client.classes) {
      c.clients.delete(client)
      if (c.clients.size > 0) continue
      const classes = this.byTable.get(c.table.name)
      classes?.delete(c.key)
      if (classes?.size === 0) this.byTable.delete(c.table.name)
    }
    client.classes = []
  }

  /**
   * Checks `subscriptions` for `auth` as subscribe does (throwing the same errors), then makes their
   * tables known to the other instances: from when it resolves, their changes reach this instance.
   */
  async admit (auth: AuthContext, subscriptions: Subscription[]): Promise<void> {
    this.classesFor(auth, subscriptions)
    await this.announce?.(subscriptions.map((s) => s.table))
  }

  /** The tables this instance has subscribers for. */
  subscribedTables (): string[] {
    return [...this.byTable.keys()]
  }

  connectionCount (limitKey: string): number {
    return this.perLimitKey.get(limitKey) ?? 0
  }

  private heartbeat (): void {
    this.round++
    for (const client of this.clients.values()) client.send(': ping\n\n')
  }

  /**
   * Sessions revoked on this or another instance (logout, password change, a replayed refresh
   * token): their streams end now, not at the next session check.
   */
  sessionsRevoked (revoked: RevokedSessions): void {
    for (const client of [...this.clients.values()]) {
      const { sid, uid, cid } = client.auth
      if (sid === null || client.closed) continue
      const hit = 'sid' in revoked
        ? sid === revoked.sid
        : cid === revoked.table && uid === revoked.userId && sid !== revoked.keep
      if (hit) client.close('revoked')
    }
  }

  /** Sessions re-read (expiry, a deleted user, revocations missed); a changed user record re-groups the client. */
  private async recheckSessions (): Promise<void> {
    for (const client of [...this.clients.values()]) {
      const recheck = client.options.recheck
      if (recheck === undefined || client.closed) continue
      try {
        const auth = await recheck()
        if (client.closed) continue
        if (auth === undefined) { client.close('revoked'); continue }
        if (JSON.stringify(authGlobals(auth)) !== JSON.stringify(authGlobals(client.auth))) {
          client.auth = auth
          try {
            this.subscribe(client, client.subscriptions)
          } catch {
            client.close('forbidden')
          }
        }
      } catch (error) {
        this.log.warn({ err: error }, 'realtime: session check failed')
      }
    }
  }

  // ------------------------------------------------------------ changes

  wants (table: string): boolean {
    return !this.closing && (this.shared || this.byTable.has(table))
  }

  /** Changes committed on this instance: delivered here, and forwarded to the other instances. */
  committed (changes: Change[]): void {
    if (this.closing) return
    try {
      this.forward?.(changes)
    } catch (error) {
      this.log.warn({ err: error }, 'realtime: forwarding failed')
    }
    this.enqueue(changes)
  }

  /** Changes to deliver on this instance (committed here, or received from another instance). */
  enqueue (changes: Change[]): void {
    if (this.closing) return
    const relevant = changes.filter((c) => this.byTable.has(c.table))
    if (relevant.length === 0) return
    this.queue.push(...relevant)
    if (this.queue.length > this.settings.maxPending) {
      const dropped = this.queue.length - this.settings.maxPending
      this.queue.splice(0, dropped)
      this.stats.dropped += dropped
      this.gap()
    }
    if (!this.draining) this.idle = this.drain()
  }

  /** Events may have been missed (dropped backlog, lost connection to the other instances): clients refetch. */
  gap (): void {
    this.round++
    const chunk = frame('gap', { message: 'Some changes could not be delivered; refetch what you show' })
    for (const client of this.clients.values()) if (client.classes.length > 0) client.send(chunk)
  }

  /** Resolves when every change enqueued so far has been delivered (tests, benchmarks). */
  async settled (): Promise<void> {
    while (this.draining) await this.idle
  }

  private async drain (): Promise<void> {
    this.draining = true
    try {
      while (this.queue.length > 0 && !this.closing) {
        const round = this.queue.splice(0, ROUND)
        for (const group of merged(round)) {
          try {
            await this.deliver(group)
          } catch (error) {
            this.log.warn({ err: error, table: group.table }, 'realtime: delivery failed')
          }
          // Requests get their turn between rounds.
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
    } finally {
      this.draining = false
    }
  }

  private async deliver (change: Change): Promise<void> {
    const classes = this.byTable.get(change.table)
    const table = this.tables.get(change.table)
    if (classes === undefined || table === undefined) return
    const list = [...classes.values()]
    for (const part of distinctRuns(change, ROWS_PER_QUERY)) await this.deliverRows(table, change.action, part.keys, part.rows, list)
  }

  /** Evaluates `classes` on the captured rows (distinct keys) and sends each matching record to the class's clients. */
  private async deliverRows (table: TableDescriptor, action: ChangeAction, keys: unknown[][], records: Row[], classes: SubscriberClass[]): Promise<void> {
    const { dialect } = this.executor
    const q = dialect.quote
    const source = dialect.rowsAs(table.quoted, table.fieldList, records)
    const matches = new Map<string, Set<SubscriberClass>>()
    const evaluated = classes.filter((c) => c.condition !== true && c.condition !== false)
    const always = classes.filter((c) => c.condition === true)
    keys.forEach((k) => matches.set(JSON.stringify(k), new Set(always)))
    const keySql = table.key.map((f, i) => `${table.quoted}.${q(f.name)} AS ${q(`fb_k_${i}`)}`)
    const chunks: SubscriberClass[][] = []
    for (let i = 0; i < evaluated.length; i += CLASSES_PER_QUERY) chunks.push(evaluated.slice(i, i + CLASSES_PER_QUERY))
    for (let n = 0; n < chunks.length; n++) {
      const chunk = chunks[n]
      const columns = [...keySql]
      const caseBindings: unknown[] = []
      chunk.forEach((c, i) => {
        const cond = c.condition as Fragment
        columns.push(`CASE WHEN ${cond.sql} THEN 1 ELSE 0 END AS ${q(`fb_m_${i}`)}`)
        caseBindings.push(...cond.bindings)
      })
      let result: Row[]
      try {
        this.stats.evaluations++
        // The select list comes first in the text, then the FROM item.
        result = await this.query(`SELECT ${columns.join(', ')} FROM ${source.sql}`, [...caseBindings, ...source.bindings])
      } catch (error) {
        // One class's where may fail on these rows (a bad cast): the others are evaluated one by one;
        // the failing one gets nothing, as its list would have failed.
        this.log.debug?.({ err: error, table: table.name }, 'realtime: a subscription could not be evaluated')
        if (chunk.length > 1) chunks.splice(n + 1, 0, ...chunk.map((c) => [c]))
        continue
      }
      for (const row of result) {
        const set = matches.get(JSON.stringify(table.key.map((f, i) => dialect.decode(f, row[`fb_k_${i}`]))))
        chunk.forEach((c, i) => { if (Number(row[`fb_m_${i}`]) === 1) set?.add(c) })
      }
    }
    // In the order the rows were written. Each client's events of this round go out in one write
    // (one syscall per client, not per event).
    this.round++
    const outbox = new Map<RealtimeClient, string[]>()
    for (let index = 0; index < keys.length; index++) {
      const frames: Record<'admin' | 'user', string | undefined> = { admin: undefined, user: undefined }
      for (const c of matches.get(JSON.stringify(keys[index])) ?? []) {
        const kind = c.admin ? 'admin' : 'user'
        const chunk = frames[kind] ??= frame('change', { action, table: table.name, record: visible(table, records[index], c.admin) })
        for (const client of c.clients) {
          let parts = outbox.get(client)
          if (parts === undefined) outbox.set(client, parts = [])
          parts.push(chunk)
        }
      }
    }
    for (const [client, parts] of outbox) {
      client.send(parts.length === 1 ? parts[0] : parts.join(''))
      this.stats.delivered += parts.length
    }
  }

  private async query (sql: string, bindings: unknown[]): Promise<Row[]> {
    const db = this.executor.db
    return this.executor.dialect.rawRows(await db.raw(sql, bindings as Knex.RawBinding[]))
  }

  /** Ends every stream (`event: error`, reason `shutdown`) and stops the timers. */
  close (): void {
    this.closing = true
    for (const timer of this.timers) clearInterval(timer)
    for (const client of [...this.clients.values()]) client.close('shutdown')
    this.queue = []
  }
}

function visible (table: TableDescriptor, record: Row, admin: boolean): Row {
  if (admin) return record
  const out: Row = {}
  for (const f of table.visibleFields(false)) out[f.name] = record[f.name]
  return out
}

/**
 * The change's rows in runs of at most `size`, each with distinct keys (a row changed twice in one
 * batch is evaluated and sent twice, in order, each time with the values that change gave it).
 */
function distinctRuns (change: Change, size: number): Array<{ keys: unknown[][], rows: Row[] }> {
  const runs: Array<{ keys: unknown[][], rows: Row[], seen: Set<string> }> = []
  let run: (typeof runs)[number] | undefined
  change.keys.forEach((key, i) => {
    const id = JSON.stringify(key)
    if (run === undefined || run.keys.length >= size || run.seen.has(id)) runs.push(run = { keys: [], rows: [], seen: new Set() })
    run.keys.push(key)
    run.rows.push(change.rows[i])
    run.seen.add(id)
  })
  return runs
}

/** Consecutive changes of one table and action become one (fewer queries under load). */
function merged (changes: Change[]): Change[] {
  const out: Change[] = []
  for (const c of changes) {
    const last = out[out.length - 1]
    if (last !== undefined && last.table === c.table && last.action === c.action) {
      last.keys = [...last.keys, ...c.keys]
      last.rows = [...last.rows, ...c.rows]
    } else {
      out.push({ ...c })
    }
  }
  return out
}
