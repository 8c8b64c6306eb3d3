// Changes between instances sharing one PostgreSQL database: NOTIFY on commit, LISTEN on a
// dedicated connection (never one of the Knex pool's; reconnected when lost). The payload is what a
// committed change is: table, action, keys and rows, as ASCII JSON.
// A message over one NOTIFY's limit (8000 bytes) is sent in numbered pieces within one statement
// (one transaction: PostgreSQL delivers them together and in order) and put back together by each
// listener. Each instance evaluates the rows under its own subscribers' rules (lib/realtime/hub.ts).
import { createHash, randomBytes } from 'node:crypto'
import type Pg from 'pg'
import type { Change } from '../crud/changes-port.js'
import type { RevokedSessions } from '../auth/stores/sessions.js'
import type { FleetInterest } from './interest.js'
import { postgresUrlParts } from '../dialects/postgres-connection.js'

/** Characters per NOTIFY payload (ASCII only, so also bytes), under PostgreSQL's 8000. */
const PIECE = 7800
/** A message larger than this is not forwarded: the other instances send their clients `gap` instead. */
export const MAX_MESSAGE = 4 * 1024 * 1024
/** Partly received messages kept at once (a listener that lost pieces drops the oldest). */
const MAX_PARTIAL = 64

export interface BusLog { warn: (obj: object, msg: string) => void, info: (obj: object, msg: string) => void }

export interface BusHandlers {
  /** Changes committed on another instance. */
  changes: (changes: Change[]) => void
  /** Changes may have been missed (the connection was lost, a message was too large). */
  gap: () => void
  /** Sessions revoked on another instance. */
  revoked: (revoked: RevokedSessions) => void
}


export class PgBus {
  readonly origin = randomBytes(8).toString('hex')
  readonly channel: string
  private client?: Pg.Client
  private readonly connectionString: string
  private readonly schema: string
  /** Messages waiting to be sent: changes (sent only if another instance has subscribers for one of their tables), or payloads. */
  private outgoing: Array<{ changes: Change[] } | { payloads: string[] }> = []
  /** Which tables the other instances have subscribers for; without it every change is sent. */
  interest?: FleetInterest
  private flushing = false
  private closed = false
  private retryMs = 100
  private retry?: NodeJS.Timeout
  private readonly partial = new Map<string, string[]>()
  private seq = 0
  /** The last query sent on the connection (see query). */
  private last: Promise<unknown> = Promise.resolve()

  constructor (url: string, private readonly handlers: BusHandlers, private readonly log: BusLog) {
    const { connectionString, schema } = postgresUrlParts(url)
    this.connectionString = connectionString
    this.schema = schema ?? 'public'
    // One channel per database schema: instances of other projects in the same database never meet.
    this.channel = `fastbase_rt_${createHash('sha256').update(this.schema).digest('hex').slice(0, 24)}`
  }

  async start (): Promise<void> {
    await this.connect()
  }

  private async connect (): Promise<void> {
    const pg = (await import('pg')).default
    const client = new pg.Client({ connectionString: this.connectionString })
    client.on('notification', (message) => { if (message.channel === this.channel) this.received(message.payload ?? '') })
    client.on('error', (error) => this.lost(client, error))
    client.on('end', () => this.lost(client))
    await client.connect()
    await client.query(`LISTEN "${this.channel}"`)
    // Queries on this connection (lib/realtime/interest.ts) see the app's tables, as the pool's do.
    await client.query(`SET search_path TO "${this.schema.replace(/"/g, '""')}"`)
    if (this.closed) { await client.end().catch(() => {}); return }
    this.client = client
    this.retryMs = 100
    if (this.outgoing.length > 0) void this.flush()
  }

  private lost (client: Pg.Client, error?: unknown): void {
    if (this.client !== client || this.closed) return
    this.client = undefined
    this.log.warn({ err: error }, 'realtime: lost the PostgreSQL LISTEN connection; reconnecting')
    client.end().catch(() => {})
    this.handlers.gap()
    this.scheduleReconnect()
  }

  private scheduleReconnect (): void {
    if (this.closed || this.retry !== undefined) return
    this.retry = setTimeout(() => {
      this.retry = undefined
      this.connect().then(() => { this.log.info({}, 'realtime: LISTEN connection restored') }, (error: unknown) => {
        this.log.warn({ err: error }, 'realtime: reconnecting to PostgreSQL failed')
        this.retryMs = Math.min(this.retryMs * 2, 5000)
        this.scheduleReconnect()
      })
    }, this.retryMs)
    this.retry.unref()
  }

  /** A query on the bus's own connection (`$n` placeholders); fails while it is reconnecting. */
  async query (sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    const client = this.client
    if (client === undefined) throw new Error('realtime: the LISTEN connection is down')
    // One at a time: the NOTIFYs and the interest reads of late writes (lib/realtime/hub.ts) share the connection.
    const result = this.last.then(async () => (await client.query(sql, params)).rows)
    this.last = result.catch(() => {})
    return await result
  }

  /** Tells the other instances that sessions were revoked (their streams end there too). */
  publishRevoked (revoked: RevokedSessions): void {
    if (this.closed) return
    this.outgoing.push({ payloads: [asciiJson({ o: this.origin, r: revoked })] })
    if (!this.flushing) setImmediate(() => { void this.flush() })
  }

  /** Tells the other instances that changes may have been missed (their subscribers get `gap`). */
  publishGap (): void {
    if (this.closed) return
    this.outgoing.push({ payloads: [asciiJson({ o: this.origin, gap: true })] })
    if (!this.flushing) setImmediate(() => { void this.flush() })
  }

  /** Sends committed changes to the other instances (batched per tick, one statement per batch). */
  publish (changes: Change[]): void {
    if (this.closed) return
    this.outgoing.push({ changes: changes.map(leaving) })
    if (!this.flushing) setImmediate(() => { void this.flush() })
  }

  /** A message's payloads: one, its numbered pieces, or a `gap` when it is too large to send. */
  private encode (changes: Change[]): string[] {
    const text = asciiJson({ o: this.origin, c: changes })
    if (text.length > MAX_MESSAGE) {
      this.log.warn({ size: text.length }, 'realtime: a change too large to forward; other instances send gap')
      return [asciiJson({ o: this.origin, gap: true })]
    }
    if (text.length <= PIECE) return [text]
    const id = `${this.origin}.${this.seq++}`
    const count = Math.ceil(text.length / PIECE)
    return Array.from({ length: count }, (_, i) => `#${id}:${i}:${count}:${text.slice(i * PIECE, (i + 1) * PIECE)}`)
  }

  /** The waiting messages someone can receive, encoded. Asked after the writes committed (lib/realtime/interest.ts). */
  private async ready (): Promise<string[][]> {
    const waiting = this.outgoing.splice(0)
    const tables = [...new Set(waiting.flatMap((m) => 'changes' in m ? m.changes.map((c) => c.table) : []))]
    const wanted = this.interest === undefined || tables.length === 0 ? new Set(tables) : await this.interest.interested(tables)
    return waiting.flatMap((m) => {
      if (!('changes' in m)) return [m.payloads]
      return m.changes.some((c) => wanted.has(c.table)) ? [this.encode(m.changes)] : []
    })
  }

  private async flush (): Promise<void> {
    if (this.flushing || this.client === undefined) return
    this.flushing = true
    try {
      // Messages that arrive meanwhile are taken by the next turn of the outer loop.
      while (this.outgoing.length > 0 && this.client !== undefined) {
        const messages = await this.ready()
        while (messages.length > 0 && this.client !== undefined) {
          // Whole messages only: the pieces of one message go in one statement.
          let take = 0
          let size = 0
          while (take < messages.length && (take === 0 || size < 512 * 1024)) {
            size += messages[take].reduce((n, p) => n + p.length, 0)
            take++
          }
          const batch = messages.splice(0, take).flat()
          const sql = `SELECT ${batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ')}`
          try {
            await this.query(sql, [this.channel, ...batch])
          } catch (error) {
            this.log.warn({ err: error }, 'realtime: NOTIFY failed; other instances may miss changes')
          }
        }
      }
    } finally {
      this.flushing = false
    }
  }

  private received (payload: string): void {
    if (payload.startsWith('#')) {
      const match = /^#([0-9a-f]+)\.(\d+):(\d+):(\d+):/.exec(payload)
      if (match === null || match[1] === this.origin) return
      const id = `${match[1]}.${match[2]}`
      const index = Number(match[3])
      const count = Number(match[4])
      let pieces = this.partial.get(id)
      if (pieces === undefined) {
        if (index !== 0) return
        if (this.partial.size >= MAX_PARTIAL) this.partial.delete(this.partial.keys().next().value as string)
        this.partial.set(id, pieces = [])
      }
      pieces.push(payload.slice(match[0].length))
      if (pieces.length < count) return
      this.partial.delete(id)
      payload = pieces.join('')
    }
    let message: { o?: string, c?: Change[], gap?: boolean, r?: RevokedSessions }
    try {
      message = JSON.parse(payload)
    } catch {
      return
    }
    if (message.o === this.origin) return
    if (message.gap === true) this.handlers.gap()
    else if (Array.isArray(message.c)) this.handlers.changes(message.c)
    else if (isRevokedSessions(message.r)) this.handlers.revoked(message.r)
  }

  async close (): Promise<void> {
    this.closed = true
    if (this.retry !== undefined) clearTimeout(this.retry)
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => {})
  }

  /** Test hook: drops the LISTEN connection as a network failure would. */
  breakConnection (): void {
    const client = this.client as unknown as { connection?: { stream?: { destroy: () => void } } } | undefined
    client?.connection?.stream?.destroy()
  }
}

/** JSON with every non-ASCII character escaped: its length in characters is its length in bytes. */
function asciiJson (value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function isRevokedSessions (value: unknown): value is RevokedSessions {
  if (typeof value !== 'object' || value === null) return false
  const r = value as Record<string, unknown>
  return typeof r.sid === 'string' || (typeof r.table === 'string' && typeof r.userId === 'string' && (r.keep === undefined || typeof r.keep === 'string'))
}

/**
 * A change as it may leave this instance: without the caller and request id that this instance's
 * after-hooks read. Any database session may LISTEN on the channel, and the caller holds the
 * session's claims and user record.
 */
function leaving ({ caller: _caller, requestId: _requestId, ...change }: Change): Change {
  return change
}
