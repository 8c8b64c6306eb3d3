// Which tables some instance of the fleet has subscribers for, so that a PostgreSQL instance sends
// NOTIFY only for changes someone can receive (publishing every write cost inserts about a fifth of
// their throughput). Each instance keeps a row per table it has subscribers for in a table they all
// share, renewed while it has them. A sender checks that table after its commit, so a subscription
// announced (committed) before its stream's `connect` event is never missed: the check runs after the
// writer's commit, and under READ COMMITTED sees every announcement committed before it started.
// Rows of an instance that died expire.
// A "no" is trusted for NO_TRUST_MS from when its read was sent, and an instance confirms a newly
// announced table only that long after committing it: so while a "no" holds, nobody anywhere has
// been told "subscribed" for that table, and a write committed meanwhile needs to capture nothing
// (decision D72). Writes therefore skip the capture while a "no" holds (`mayWant`).
import type { TableData } from '../../schemas/config.js'
import { text } from '../db/internal-columns.js'

type Row = Record<string, unknown>
export type Query = (sql: string, bindings: unknown[]) => Promise<Row[]>

export const INTEREST_TABLE = '_fastbase_realtime_interest'

/**
 * Which instance has realtime subscribers for which table (this file). PostgreSQL
 * only: instances send changes to each other only for tables someone subscribes to.
 */
export const realtimeInterestTable: TableData = {
  name: INTEREST_TABLE,
  fields: [
    text('key', { primary: true, notNull: true }),
    text('instance', { notNull: true }),
    text('table_name', { notNull: true }),
    { name: 'expires_at', type: 'date', sqlType: 'timestamp', notNull: true }
  ],
  indexes: [{ fields: ['table_name'] }]
}
/** How long an announcement holds without renewal (an instance that died stops counting after this). */
const LIFETIME_SECONDS = 60
/** How often the instance renews its announcements and drops the tables it has no subscriber for. */
export const RENEW_MS = 20_000
/** How long a sender trusts that a table has remote subscribers before asking again. */
const KNOWN_MS = 10_000
/** How long a sender trusts that no other instance has subscribers for a table (see the top). */
export const NO_TRUST_MS = 250
/** A write skips the capture only on a "no" that holds at least this much longer (it must still hold at the commit). */
const NO_MARGIN_MS = 50

export class FleetInterest {
  private readonly announced = new Set<string>()
  /** Tables some other instance has subscribers for, until when (ms). */
  private readonly known = new Map<string, number>()
  /** Tables no other instance had subscribers for, until when (`clock` ms). */
  private readonly nobody = new Map<string, number>()
  /** Tables whose interest is being read again ahead of their "no" running out (see mayWant). */
  private readonly refreshing = new Set<string>()
  /** The last read made for a write that skipped its capture, per table (see missedBySomeone). */
  private readonly checks = new Map<string, { at: number, answer: Promise<boolean> }>()
  private warned = false
  /** Announced tables the last renewal found no subscriber for. */
  private unwanted = new Set<string>()
  /** This instance's writes to the table, one after another (a withdrawal never lands after a newer announcement). */
  private writes: Promise<void> = Promise.resolve()

  /**
   * `read` asks whether other instances are interested (after each batch of commits: on the bus's own
   * connection, never competing with requests for the pool); `query` makes this instance's own
   * announcements (`?` placeholders, the pool).
   */
  constructor (
    private readonly instance: string,
    private readonly read: Query,
    private readonly query: Query,
    private readonly log: { warn: (obj: object, msg: string) => void },
    /** Monotonic milliseconds (tests set the time). */
    private readonly clock: () => number = () => performance.now()
  ) {}

  /**
   * Records that this instance has subscribers for `tables`; resolves once that is committed and
   * every other instance's "no" for them read before it has expired (NO_TRUST_MS later).
   */
  async announce (tables: string[]): Promise<void> {
    const fresh = [...new Set(tables)].filter((t) => !this.announced.has(t))
    if (fresh.length === 0) return
    for (const table of fresh) this.announced.add(table)
    await this.renew(fresh)
    await new Promise((resolve) => setTimeout(resolve, NO_TRUST_MS))
  }

  /**
   * Whether a write to `table` about to run must capture its rows for the fleet: unless this
   * instance announces it, only a "no" holding past the margin lets it skip them.
   */
  mayWant (table: string): boolean {
    if (this.announced.has(table)) return true
    const left = (this.nobody.get(table) ?? 0) - this.clock()
    // Asked again before it runs out, so that in steady state writes never capture for nobody.
    if (left <= 2 * NO_MARGIN_MS) this.refresh(table)
    return left <= NO_MARGIN_MS
  }

  /** Reads `table`'s interest again in the background, once at a time. */
  private refresh (table: string): void {
    if (this.refreshing.has(table)) return
    this.refreshing.add(table)
    void this.ask([table]).catch(() => {}).finally(() => { this.refreshing.delete(table) })
  }

  /** Whether the "no" for `table` still holds: a write that skipped its capture and commits now can have been missed by no other instance. */
  nobodyElse (table: string): boolean {
    return (this.nobody.get(table) ?? 0) > this.clock()
  }

  /**
   * For a write to `table` that skipped its capture and committed after the "no" expired: whether
   * another instance has subscribers now. A read sent less than NO_TRUST_MS ago answers for it too
   * (an announcement it missed is confirmed only after the write), so a burst of such writes asks once.
   */
  async missedBySomeone (table: string): Promise<boolean> {
    const now = this.clock()
    let check = this.checks.get(table)
    if (check === undefined || check.at + NO_TRUST_MS - NO_MARGIN_MS <= now) {
      check = { at: now, answer: this.interested([table]).then((wanted) => wanted.has(table)) }
      this.checks.set(table, check)
    }
    return await check.answer
  }

  /**
   * The tables of `tables` another instance has subscribers for. When that cannot be read (the
   * table is missing, the database is down), every table counts: sending too much is safe.
   */
  async interested (tables: string[]): Promise<Set<string>> {
    const now = Date.now()
    const unknown = tables.filter((t) => (this.known.get(t) ?? 0) <= now && !this.nobodyElse(t))
    if (unknown.length > 0) {
      try {
        await this.ask(unknown)
      } catch (error) {
        this.warnOnce(error)
        return new Set(tables)
      }
    }
    return new Set(tables.filter((t) => (this.known.get(t) ?? 0) > now))
  }

  /** Reads which of `tables` other instances have subscribers for, and remembers the yes and the no. */
  private async ask (tables: string[]): Promise<void> {
    // Before the read is sent: its snapshot is taken later, so a "no" counts from here.
    const asked = this.clock()
    const now = Date.now()
    const rows = await this.read(`SELECT DISTINCT "table_name" FROM "${INTEREST_TABLE}" WHERE "table_name" = ANY($1) AND "instance" <> $2 AND "expires_at" > CURRENT_TIMESTAMP`, [tables, this.instance])
    const found = new Set(rows.map((row) => String(row.table_name)))
    for (const table of tables) {
      if (found.has(table)) {
        this.known.set(table, now + KNOWN_MS)
        this.nobody.delete(table)
      } else {
        this.nobody.set(table, asked + NO_TRUST_MS)
      }
    }
  }

  /** Renews the announcements of the tables still `wanted`, withdraws the others (see below), drops expired rows. */
  async renewAll (wanted: Iterable<string>): Promise<void> {
    const keep = new Set(wanted)
    for (const table of keep) this.announced.add(table)
    // A table is withdrawn only when two renewals in a row found no subscriber for it: one admitted
    // a moment ago (announced, its stream not yet registered) is not dropped under its subscriber.
    const unwanted = [...this.announced].filter((t) => !keep.has(t))
    const gone = unwanted.filter((t) => this.unwanted.has(t))
    this.unwanted = new Set(unwanted.filter((t) => !gone.includes(t)))
    for (const table of gone) this.announced.delete(table)
    await this.serially(async () => {
      if (gone.length > 0) await this.query(`DELETE FROM "${INTEREST_TABLE}" WHERE "instance" = ? AND "table_name" = ANY(?)`, [this.instance, gone])
      await this.query(`DELETE FROM "${INTEREST_TABLE}" WHERE "expires_at" < CURRENT_TIMESTAMP`, [])
    })
    await this.renew([...this.announced])
  }

  /** Withdraws every announcement of this instance (it is closing). */
  async withdraw (): Promise<void> {
    this.announced.clear()
    await this.serially(async () => { await this.query(`DELETE FROM "${INTEREST_TABLE}" WHERE "instance" = ?`, [this.instance]) })
  }

  private async renew (tables: string[]): Promise<void> {
    if (tables.length === 0) return
    const bindings: unknown[] = []
    const rows = tables.map((table) => {
      bindings.push(`${this.instance}:${table}`, this.instance, table)
      return `(?, ?, ?, CURRENT_TIMESTAMP + INTERVAL '${LIFETIME_SECONDS} seconds')`
    })
    // When this fails the other instances cannot know; if the table is missing they cannot read it
    // either, and send everything (see interested).
    await this.serially(async () => {
      await this.query(`INSERT INTO "${INTEREST_TABLE}" ("key", "instance", "table_name", "expires_at") VALUES ${rows.join(', ')} ON CONFLICT ("key") DO UPDATE SET "expires_at" = EXCLUDED."expires_at"`, bindings)
    })
  }

  /** Runs `write` after this instance's earlier writes; a failure is logged (once), never thrown. */
  private async serially (write: () => Promise<void>): Promise<void> {
    const next = this.writes.then(write).catch((error: unknown) => { this.warnOnce(error) })
    this.writes = next
    await next
  }

  private warnOnce (error: unknown): void {
    if (this.warned) return
    this.warned = true
    this.log.warn({ err: error }, `realtime: the ${INTEREST_TABLE} table could not be used; instances send every change`)
  }
}
