// Realtime subscriptions on one instance: connected clients, their subscriptions grouped by what
// decides their events (table, where, the caller as rules see it), and the delivery of committed
// changes to them. Fastify-free: the route gives each client a sink (its HTTP response).
//
// A committed change (lib/crud/changes-port.ts) carries its rows as the statement left them (a
// delete: as they were). They are evaluated on those values (lib/realtime/evaluate.ts): per row and
// class, whether the class's `listRule` and `where` (compiled by lib/expr exactly as for `list`,
// with `ruleFirst`) hold. A non-admin's record is sent without `noSelect` fields.
// Instance-wide bounds: at most maxStreams streams, and maxClassesPerTable distinct classes per
// table (what evaluating one write costs grows with it); beyond either, a 503. So that no one client
// takes them from everyone else, each client address and each user holds at most a share of them
// (streams, and distinct classes per table); beyond its share, a 429 (decision D89).
import { randomBytes } from 'node:crypto'
import type { TableDescriptor } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import { authGlobals } from '../auth-context.js'
import type { Fragment } from '../dialects/types.js'
import { crudContext, followsRelations, ruleCondition, ruleFirst, ruleScope, whereOf, type Condition, type CrudContext, type Executor } from '../crud/context.js'
import { compile, parse, toCondition, type Expr } from '../expr/index.js'
import { errors } from '../errors.js'
import type { ConditionEvaluator, Judged } from './evaluate.js'
import { SqlEvaluator } from './evaluate-sql.js'
import { SqliteEvaluator } from './evaluate-sqlite.js'
import { RoutedEvaluator } from './evaluate-routed.js'
import type { Change, ChangeAction, ChangeSink } from '../crud/changes-port.js'
import type { RevokedSessions } from '../auth/stores/sessions.js'

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
  /** Streams this instance holds at once, everyone's together (503 beyond). */
  maxStreams: number
  /** Distinct subscriber classes per table on this instance (503 beyond). */
  maxClassesPerTable: number
  /** Streams one client address may hold on this instance, everyone's from it together (429 beyond). */
  maxStreamsPerAddress: number
  /** Distinct subscriber classes per table the streams of one client address may hold (429 beyond). */
  maxClassesPerAddress: number
  /** Distinct subscriber classes per table the streams of one user (anonymous: one address) may hold (429 beyond). */
  maxClassesPerUser: number
}

export interface Subscription { table: string, where?: string }

/** Where a client's events go: its HTTP response. */
export interface ClientSink {
  write: (chunk: string) => void
  /** Bytes written but not yet taken by the client's socket. */
  buffered: () => number
  /**
   * Ends the stream once the client has taken what was written (the last event included). The
   * connection keeps its place in the limits until it is gone: the owner calls RealtimeHub#detach.
   */
  end: () => void
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

/** Whose shares of the bounds a client takes: its user's and its address's. */
export interface Holder {
  /** Connection-limit key: the identity, or `ip:<address>` for anonymous callers. */
  limitKey: string
  /** The client's address as the server trusts it (Fastify's `request.ip`, behind `trustProxy`). */
  address: string
}

export interface ClientOptions extends Holder {
  auth: AuthContext
  /** Who may change this client's subscriptions and whose connection count it takes. */
  identity: string
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

  /**
   * Ends the stream with `event: error` naming the reason (none when the client went away): no event
   * after it, but what the client has not read yet, that event last, still reaches it.
   */
  close (reason?: CloseReason): void {
    if (this.closed) return
    this.closed = true
    this.hub.unsubscribe(this)
    if (reason !== undefined) this.options.sink.write(frame('error', { ...CLOSE_BODIES[reason], reason }))
    this.options.sink.end()
  }
}

/** Subscribers who get exactly the same events: one table, one where, one caller as rules see it. */
interface SubscriberClass {
  key: string
  table: TableDescriptor
  admin: boolean
  condition: Condition
  /** The condition follows a relation: judged on the database, which holds the related rows. */
  related: boolean
  /** Per field with a field rule (non-admins): whether this caller reads it, decided or judged per row (decision D96). */
  fields: FieldJudge[]
  clients: Set<RealtimeClient>
}

interface FieldJudge { name: string, judge: boolean | Judged }

/** Held shares of an address are keyed apart from users' keys (an anonymous user's is `ip:<address>`). */
const addressKey = (address: string): string => `addr:${address}`

/** One place fewer in a count; gone at zero. */
function release (counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1
  if (left <= 0) counts.delete(key)
  else counts.set(key, left)
}

/**
 * A condition's bound values as text, for the class key. SQLite binds whole numbers as BigInt (which
 * JSON.stringify refuses); one is written as an object no bound value can be, so `5` and `'5n'` differ.
 */
function bindingsKey (bindings: readonly unknown[]): string {
  return JSON.stringify(bindings, (_key, value: unknown) => typeof value === 'bigint' ? { bigint: String(value) } : value)
}

export function frame (event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

// Rows evaluated and sent per delivery round.
const ROWS_PER_ROUND = 200
// Changes taken from the queue per round.
const ROUND = 1000

export class RealtimeHub implements ChangeSink {
  readonly clients = new Map<string, RealtimeClient>()
  private readonly byTable = new Map<string, Map<string, SubscriberClass>>()
  private readonly perLimitKey = new Map<string, number>()
  private readonly perAddress = new Map<string, number>()
  /** Per holder key (user or address), per table, the classes its clients hold and which of its clients hold each. */
  private readonly held = new Map<string, Map<string, Map<string, Set<RealtimeClient>>>>()
  private queue: Change[] = []
  private draining = false
  private idle: Promise<void> = Promise.resolve()
  private timers: NodeJS.Timeout[] = []
  /** Set on PostgreSQL: changes go to the other instances too (lib/realtime/pg-bus.ts). */
  forward?: (changes: Change[]) => void
  /**
   * Set on PostgreSQL: what the other instances subscribe to (lib/realtime/interest.ts), and how to
   * tell them that changes may have been missed.
   */
  fleet?: {
    mayWant: (table: string) => boolean
    nobodyElse: (table: string) => boolean
    missedBySomeone: (table: string) => Promise<boolean>
    gap: () => void
  }
  /** Set on PostgreSQL: records, fleet-wide, that this instance has subscribers for these tables. */
  announce?: (tables: string[]) => Promise<void>
  closing = false
  /** Delivery rounds so far (see RealtimeClient#send). */
  round = 0
  readonly stats = { delivered: 0, dropped: 0, overflows: 0 }
  private readonly evaluator: ConditionEvaluator & { close?: () => void }

  constructor (
    readonly executor: Executor,
    readonly tables: Map<string, TableDescriptor>,
    readonly settings: RealtimeSettings,
    readonly log: { warn: (obj: object, msg: string) => void, debug?: (obj: object, msg: string) => void }
  ) {
    this.evaluator = executor.dialect.synchronous ? new RoutedEvaluator(new SqliteEvaluator(executor.dialect, log), new SqlEvaluator(executor, log)) : new SqlEvaluator(executor, log)
    this.timers.push(setInterval(() => this.heartbeat(), settings.heartbeatMs).unref())
    this.timers.push(setInterval(() => { void this.recheckSessions() }, settings.sessionCheckMs).unref())
  }

  // ------------------------------------------------------------ clients and subscriptions

  /**
   * A new client; a 429 when its user (or IP) holds the maximum of connections already, a 503 when
   * this instance holds maxStreams.
   */
  connect (options: ClientOptions): RealtimeClient {
    if (this.closing) throw errors.shuttingDown()
    if (this.clients.size >= this.settings.maxStreams) throw errors.realtimeStreamsFull(this.settings.maxStreams)
    const held = this.perLimitKey.get(options.limitKey) ?? 0
    if (held >= this.settings.maxConnections) throw errors.tooManyRequests(`Too many realtime connections (at most ${this.settings.maxConnections} per user, or per address when signed out)`)
    const fromAddress = this.perAddress.get(options.address) ?? 0
    if (fromAddress >= this.settings.maxStreamsPerAddress) throw errors.tooManyRequests(`Too many realtime connections from this address (at most ${this.settings.maxStreamsPerAddress})`)
    const client = new RealtimeClient(this, options)
    this.perLimitKey.set(options.limitKey, held + 1)
    this.perAddress.set(options.address, fromAddress + 1)
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
      client.options.sink.end = () => { clearTimeout(timer); end() }
    }
    return client
  }

  /** The client's connection is gone: its place in the limits is free. */
  detach (client: RealtimeClient): void {
    if (this.clients.get(client.id) !== client) return
    client.closed = true
    this.clients.delete(client.id)
    this.unsubscribe(client)
    release(this.perLimitKey, client.options.limitKey)
    release(this.perAddress, client.options.address)
  }

  /**
   * Replaces a client's subscriptions. Checked first, all or nothing: at most maxSubscriptions, each
   * table known (404) and keyed (400), its listRule allowing this caller some rows (403), its where
   * valid and without `@@` (400, the same messages as list), room for its class (503).
   */
  subscribe (client: RealtimeClient, subscriptions: Subscription[]): void {
    const classes = this.classesFor(client.auth, subscriptions)
    this.assertRoom(classes, client.options, client)
    this.unsubscribe(client)
    client.subscriptions = subscriptions
    client.classes = classes.map((c) => this.register(c, client))
  }

  /**
   * A 503 when `candidates` would take a table past maxClassesPerTable, a 429 when they would take
   * the holder's user or address past its share. A candidate equal to an existing class takes no
   * room; the classes only `client` holds now are freed by its new set.
   */
  private assertRoom (candidates: SubscriberClass[], holder: Holder, client?: RealtimeClient): void {
    this.assertShare(candidates, addressKey(holder.address), this.settings.maxClassesPerAddress, 'from this address', client)
    this.assertShare(candidates, holder.limitKey, this.settings.maxClassesPerUser, 'per user, or per address when signed out', client)
    const wanted = new Set(candidates.map((c) => c.key))
    const added = new Map<string, Set<string>>()
    for (const c of candidates) {
      if (this.byTable.get(c.table.name)?.has(c.key) === true) continue
      let keys = added.get(c.table.name)
      if (keys === undefined) added.set(c.table.name, keys = new Set())
      keys.add(c.key)
    }
    const freed = new Set((client?.classes ?? []).filter((c) => c.clients.size === 1 && !wanted.has(c.key)))
    for (const [table, keys] of added) {
      const held = this.byTable.get(table)?.size ?? 0
      const released = [...freed].filter((c) => c.table.name === table).length
      if (held - released + keys.size > this.settings.maxClassesPerTable) throw errors.realtimeClassesFull(table, this.settings.maxClassesPerTable)
    }
  }

  /** A 429 when `candidates` would give holder `key` more than `max` distinct classes on a table. */
  private assertShare (candidates: SubscriberClass[], key: string, max: number, whose: string, client?: RealtimeClient): void {
    const wanted = new Map<string, Set<string>>()
    for (const c of candidates) {
      let keys = wanted.get(c.table.name)
      if (keys === undefined) wanted.set(c.table.name, keys = new Set())
      keys.add(c.key)
    }
    for (const [table, keys] of wanted) {
      const holds = this.held.get(key)?.get(table)
      let count = keys.size
      for (const [classKey, clients] of holds ?? []) {
        // Kept when another of the holder's clients holds it too, or this client's old set is not replaced.
        if (!keys.has(classKey) && (client === undefined || !clients.has(client) || clients.size > 1)) count++
      }
      if (count > max) throw errors.tooManyRequests(`Too many distinct realtime subscriptions to ${table} (at most ${max} ${whose}); subscribe with a where you already use`)
    }
  }

  /** Records (or, with `add` false, forgets) that `client` holds `cls`, under its user and its address. */
  private hold (client: RealtimeClient, cls: SubscriberClass, add: boolean): void {
    for (const key of new Set([client.options.limitKey, addressKey(client.options.address)])) {
      let tables = this.held.get(key)
      if (tables === undefined) {
        if (!add) continue
        this.held.set(key, tables = new Map())
      }
      let classes = tables.get(cls.table.name)
      if (classes === undefined) {
        if (!add) continue
        tables.set(cls.table.name, classes = new Map())
      }
      let clients = classes.get(cls.key)
      if (clients === undefined) {
        if (!add) continue
        classes.set(cls.key, clients = new Set())
      }
      if (add) {
        clients.add(client)
        continue
      }
      clients.delete(client)
      if (clients.size === 0) classes.delete(cls.key)
      if (classes.size === 0) tables.delete(cls.table.name)
      if (tables.size === 0) this.held.delete(key)
    }
  }

  private classesFor (auth: AuthContext, subscriptions: Subscription[]): SubscriberClass[] {
    if (subscriptions.length > this.settings.maxSubscriptions) throw errors.badRequest(`At most ${this.settings.maxSubscriptions} subscriptions per connection`)
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
      // The full-text index holds the rows as they are in the table, not the values a change
      // captured (a deleted row is gone from it): `@@` cannot be judged on an event.
      if (where !== undefined && searches(parse(where))) throw errors.expression('where', '@@ (full-text search) cannot be used in a realtime subscription; subscribe without it and search when you refetch')
      if (!auth.admin && table.rules.listRule !== null && searches(table.rules.listRule)) throw errors.badRequest(`Table ${s.table} cannot be subscribed to: its listRule uses @@ (full-text search)`)
      // Subscribers with the same compiled condition (same where, same values of what the rule reads) get the same events.
      // Every caller but a superadmin reads fields under their rules, the panel's editors and viewers too (decision D96).
      const fields = auth.superadmin ? [] : [...table.fieldRules].map(([name, expr]): FieldJudge => ({ name, judge: fieldJudge(ctx, expr) }))
      const judged = [condition, ...fields.map((f) => f.judge)].map((c) => typeof c === 'boolean' ? String(c) : 'condition' in c ? `${c.condition.sql}\u0000${bindingsKey(c.condition.bindings)}` : `${c.sql}\u0000${bindingsKey(c.bindings)}`).join('\u0000')
      return { key: `${table.name}\u0000${auth.admin ? 'admin' : 'user'}\u0000${judged}`, table, admin: auth.admin, condition, related: followsRelations(ctx), fields, clients: new Set() }
    })
  }

  private register (candidate: SubscriberClass, client: RealtimeClient): SubscriberClass {
    let classes = this.byTable.get(candidate.table.name)
    if (classes === undefined) this.byTable.set(candidate.table.name, classes = new Map())
    let existing = classes.get(candidate.key)
    if (existing === undefined) {
      classes.set(candidate.key, existing = candidate)
      if (isJudged(candidate)) this.evaluator.admit?.(candidate)
      for (const f of candidate.fields) if (typeof f.judge !== 'boolean') this.evaluator.admit?.(f.judge)
    }
    existing.clients.add(client)
    this.hold(client, existing, true)
    return existing
  }

  /** The client gets no more events. */
  unsubscribe (client: RealtimeClient): void {
    for (const c of client.classes) {
      this.hold(client, c, false)
      c.clients.delete(client)
      if (c.clients.size > 0) continue
      const classes = this.byTable.get(c.table.name)
      classes?.delete(c.key)
      if (isJudged(c)) this.evaluator.release?.(c)
      for (const f of c.fields) if (typeof f.judge !== 'boolean') this.evaluator.release?.(f.judge)
      if (classes?.size === 0) this.byTable.delete(c.table.name)
    }
    client.classes = []
  }

  /**
   * Checks `subscriptions` for `auth` as subscribe does (throwing the same errors), then makes their
   * tables known to the other instances: from when it resolves, their changes reach this instance.
   */
  async admit (auth: AuthContext, subscriptions: Subscription[], holder: Holder, client?: RealtimeClient): Promise<void> {
    this.assertRoom(this.classesFor(auth, subscriptions), holder, client)
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
    return !this.closing && (this.byTable.has(table) || (this.fleet?.mayWant(table) ?? false))
  }

  /**
   * A write that captured nothing committed. A subscriber registered here since it ran, or one
   * elsewhere once the fleet's "no" it relied on has expired, may have missed it: they get `gap`.
   */
  uncaptured (table: string): void {
    if (this.closing) return
    if (this.byTable.has(table)) this.gap()
    const fleet = this.fleet
    if (fleet === undefined || fleet.nobodyElse(table)) return
    fleet.missedBySomeone(table).then((missed) => { if (missed) fleet.gap() }, () => { fleet.gap() })
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

  /** What the hub holds now (metrics): streams, subscriber classes, bytes written but not yet read by clients, changes waiting. */
  load (): { streams: number, classes: number, queuedBytes: number, pendingChanges: number } {
    let classes = 0
    for (const perTable of this.byTable.values()) classes += perTable.size
    let queuedBytes = 0
    for (const client of this.clients.values()) queuedBytes += client.options.sink.buffered()
    return { streams: this.clients.size, classes, queuedBytes, pendingChanges: this.queue.length }
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
            // The change's events are lost: subscribers are told to refetch.
            this.log.warn({ err: error, table: group.table }, 'realtime: delivery failed')
            this.gap()
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
    const table = this.tables.get(change.table)
    if (table === undefined) return
    for (const part of distinctRuns(change, ROWS_PER_ROUND)) {
      // The classes as they are now: one that left since the last run gets nothing more.
      const classes = [...(this.byTable.get(change.table)?.values() ?? [])]
      if (classes.length === 0) return
      await this.deliverRows(table, change.action, part, classes)
    }
  }

  /**
   * Evaluates `classes` on the captured rows (distinct keys) and sends each matching record to the
   * class's clients; an update whose rows as they were are known, only to the classes that see a
   * change (decision D105).
   */
  private async deliverRows (table: TableDescriptor, action: ChangeAction, part: RowRun, classes: SubscriberClass[]): Promise<void> {
    const { keys, rows: records } = part
    const always = classes.filter((c) => c.condition === true)
    const judged = classes.filter(isJudged)
    const now = await this.seenBy(table, keys, records, judged, classes)
    const was = action === 'update' ? await this.seenBefore(table, part, judged, classes) : undefined
    // While the rows were evaluated, a client may have moved to an equal class (re-subscribed, or
    // re-grouped after its user record changed): the events go to the class now holding that key.
    const current = this.byTable.get(table.name)
    const live = (c: SubscriberClass): SubscriberClass => (c.clients.size > 0 ? c : current?.get(c.key) ?? c)
    // In the order the rows were written. Each client's events of this round go out in one write
    // (one syscall per client, not per event).
    this.round++
    const outbox = new Map<RealtimeClient, string[]>()
    for (let index = 0; index < keys.length; index++) {
      // One frame per set of fields hidden from its readers: admins, users who read every field, ...
      const frames = new Map<string, string>()
      const before = was?.get(index)
      for (const judgedClass of [...always, ...now.found[index]]) {
        const hidden = hiddenFrom(judgedClass, now.readable?.[index])
        const record = visible(table, records[index], judgedClass.admin, hidden)
        // What this class saw of the row before, the same: an event would tell of a hidden change only.
        if (before !== undefined && seesNoChange(table, judgedClass, before, record)) continue
        const c = live(judgedClass)
        const kind = `${c.admin ? 'admin' : 'user'}\u0000${hidden.join('\u0000')}`
        let chunk = frames.get(kind)
        if (chunk === undefined) frames.set(kind, chunk = frame('change', { action, table: table.name, record }))
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

  /** Per row, the judged classes whose condition holds on it, and the field rules that let their callers read a field (decision D96). */
  private async seenBy (table: TableDescriptor, keys: unknown[][], rows: Row[], judged: Array<SubscriberClass & { condition: Fragment }>, classes: SubscriberClass[]): Promise<Seen> {
    const found = await this.evaluator.matches({ table, keys, rows }, judged)
    const fieldJudges = [...new Set(classes.flatMap((c) => c.fields.flatMap((f) => typeof f.judge === 'boolean' ? [] : [f.judge])))]
    const readable = fieldJudges.length === 0 ? undefined : (await this.evaluator.matches({ table, keys, rows }, fieldJudges)).map((hits) => new Set(hits))
    return { found, readable }
  }

  /**
   * For the rows of an update whose rows as they were were captured (Change#before): which classes
   * saw each, and what they saw of it, by the row's index in the run.
   */
  private async seenBefore (table: TableDescriptor, part: RowRun, judged: Array<SubscriberClass & { condition: Fragment }>, classes: SubscriberClass[]): Promise<Map<number, Before> | undefined> {
    const at: number[] = []
    const rows: Row[] = []
    part.before.forEach((row, i) => {
      if (row === null) return
      at.push(i)
      rows.push(row)
    })
    if (at.length === 0) return undefined
    const seen = await this.seenBy(table, at.map((i) => part.keys[i]), rows, judged, classes)
    return new Map(at.map((index, j) => [index, { row: rows[j], classes: new Set(seen.found[j]), readable: seen.readable?.[j] }]))
  }

  /** Ends every stream (`event: error`, reason `shutdown`) and stops the timers. */
  close (): void {
    this.closing = true
    for (const timer of this.timers) clearInterval(timer)
    for (const client of [...this.clients.values()]) client.close('shutdown')
    this.queue = []
    this.evaluator.close?.()
  }
}

/** A class whose condition is not known in advance: the evaluator judges it per row. */
function isJudged (c: SubscriberClass): c is SubscriberClass & { condition: Fragment } {
  return typeof c.condition !== 'boolean'
}

/** Does `expr` use `@@` anywhere? */
function searches (expr: Expr): boolean {
  switch (expr.type) {
    case 'binary': return expr.op === '@@' || searches(expr.left) || searches(expr.right)
    case 'unary': return searches(expr.arg)
    case 'call': return expr.args.some(searches)
    case 'list': return expr.items.some(searches)
    default: return false
  }
}

/** Who saw a row before an update, and what of it (hub.ts#seenBefore). */
interface Before { row: Row, classes: Set<SubscriberClass>, readable?: Set<Judged> }
/** Per row, the judged classes it matches, and the field judges that hold on it. */
interface Seen { found: SubscriberClass[][], readable?: Array<Set<Judged>> }
/** A run of a change's rows with distinct keys, and (null where unknown) the rows as they were. */
interface RowRun { keys: unknown[][], rows: Row[], before: Array<Row | null> }

/** The fields with a field rule that this class's callers may not read on a row (decision D96). */
function hiddenFrom (c: SubscriberClass, readable: Set<Judged> | undefined): string[] {
  return c.fields.filter((f) => f.judge === false || (f.judge !== true && readable?.has(f.judge) !== true)).map((f) => f.name)
}

/** Did class `c` see the row before the update, exactly as it sees `record` now? */
function seesNoChange (table: TableDescriptor, c: SubscriberClass, before: Before, record: Row): boolean {
  if (c.condition !== true && !before.classes.has(c)) return false
  return JSON.stringify(visible(table, before.row, c.admin, hiddenFrom(c, before.readable))) === JSON.stringify(record)
}

function visible (table: TableDescriptor, record: Row, admin: boolean, hidden: string[]): Row {
  if (admin && hidden.length === 0) return record
  const out: Row = {}
  for (const f of table.visibleFields(admin)) out[f.name] = hidden.includes(f.name) ? null : record[f.name]
  return out
}

/** A field rule for this caller: decided now (`true`/`false`), or a condition judged per changed row. */
function fieldJudge (ctx: CrudContext, rule: Expr): boolean | Judged {
  const condition = toCondition(compile(rule, ruleScope(ctx)), ctx.trace)
  return typeof condition === 'boolean' ? condition : { condition, related: followsRelations(ctx) }
}

/**
 * The change's rows in runs of at most `size`, each with distinct keys (a row changed twice in one
 * batch is evaluated and sent twice, in order, each time with the values that change gave it).
 */
function distinctRuns (change: Change, size: number): RowRun[] {
  const runs: Array<RowRun & { seen: Set<string> }> = []
  let run: (typeof runs)[number] | undefined
  change.keys.forEach((key, i) => {
    const id = JSON.stringify(key)
    if (run === undefined || run.keys.length >= size || run.seen.has(id)) runs.push(run = { keys: [], rows: [], before: [], seen: new Set() })
    run.keys.push(key)
    run.rows.push(change.rows[i])
    run.before.push(change.before?.[i] ?? null)
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
      // Rows as they were, where either change has them (null where unknown).
      if (last.before !== undefined || c.before !== undefined) last.before = [...(last.before ?? last.keys.map(() => null)), ...(c.before ?? c.keys.map(() => null))]
      last.keys = [...last.keys, ...c.keys]
      last.rows = [...last.rows, ...c.rows]
    } else {
      out.push({ ...c })
    }
  }
  return out
}
