// Record hooks: server code run around every write fastbase makes to a table, whichever path made
// it (the table API over HTTP or in process, upserts and edits, action steps, the auth flows, the
// panel, which is an HTTP client), and around the auth events sign-up and sign-in.
// - before-hooks (beforeInsert, beforeUpdate, beforeDelete) run inside the write's transaction,
//   before its values are encoded: they may change the values or refuse with a FastbaseError
//   (lib/crud/before-hooks.ts is where lib/crud/write.ts calls them, for the auth flows' own writes
//   too). SQL-mode actions cannot run them: `on` refuses one such an action would skip.
// - after-hooks (afterInsert, afterUpdate, afterDelete) get each changed row, every column as the
//   statement left it (a delete: as it was), once the write is committed: this registry is a change
//   sink, fed by the same capture realtime uses (lib/crud/changes-port.ts), so a rolled-back write
//   never reaches them. A failing after-hook is logged with the request id; the answer stands.
// - afterSignUp / afterLogin get the user's public record once the account or session is committed.
// An empty registry costs a write one Map look-up per statement.
import type { Knex } from 'knex'
import type { AuthContext } from '../auth-context.js'
import type { Change, ChangeAction, ChangeSink } from './changes-port.js'
import { afterCommit } from '../db/after-commit.js'

type Row = Record<string, unknown>

export const BEFORE_EVENTS = ['beforeInsert', 'beforeUpdate', 'beforeDelete'] as const
export const AFTER_EVENTS = ['afterInsert', 'afterUpdate', 'afterDelete'] as const
export const AUTH_EVENTS = ['afterSignUp', 'afterLogin'] as const
export type BeforeEvent = typeof BEFORE_EVENTS[number]
export type AfterEvent = typeof AFTER_EVENTS[number]
export type AuthEvent = typeof AUTH_EVENTS[number]
export type HookEvent = BeforeEvent | AfterEvent | AuthEvent

/**
 * The auth flow making a write: its sign-up (the table's insert), a password changed, reset or
 * rehashed at login, an email verified, and the external sign-ins (a first one creates the account,
 * one proving an address nobody had proven takes the account over), and an email code's sign-in (which
 * creates, takes over or verifies the same way). Undefined for every other write.
 */
export type AuthSource = 'auth:sign-up' | 'auth:password-change' | 'auth:password-reset' | 'auth:password-rehash' | 'auth:verify-email' | 'auth:oauth' | 'auth:one-tap' | 'auth:login-token' | 'auth:otp'

interface WriteEventBase<Tables> {
  table: string
  /** Who is writing, as rules see them (the system: a superadmin with `uid` 'system'; an auth flow nobody is signed in to yet: anonymous). */
  caller: AuthContext
  /** Which auth flow writes (sign-up, or lib/auth/user-writes.ts); undefined for the table API, actions and the in-process API. */
  source?: AuthSource
  /** The write's transaction: reads and writes through it commit or roll back with the write. */
  db: Knex.Transaction
  /** The in-process table API inside the write's transaction. */
  tables: Tables
}

/** One row about to be inserted: change `values` in place; throw a FastbaseError to refuse the whole write. */
export interface BeforeInsertEvent<Values = Row, Tables = unknown> extends WriteEventBase<Tables> { values: Values }
/**
 * An update about to run: `values` is what it writes to every row it reaches (change it in place);
 * `set` the expressions it writes, as given; `where` the caller's condition (the rule is added to it).
 */
export interface BeforeUpdateEvent<Values = Row, Tables = unknown> extends WriteEventBase<Tables> { values: Values, readonly set: Readonly<Record<string, string>>, readonly where: string }
/** A delete about to run, of the rows `where` and the rule reach. */
export interface BeforeDeleteEvent<Tables = unknown> extends WriteEventBase<Tables> { readonly where: string }

/** A committed change of one row: every column (hidden ones too) as the statement left it, or, for a delete, as it was. */
export interface AfterWriteEvent<R = Row> {
  table: string
  row: R
  /** Who wrote it, as the before-hooks saw them (an auth flow's own write: the user, or anonymous where nobody is signed in yet). */
  caller?: AuthContext
  requestId?: string
}

/** A user signed up (an account was created) or signed in (a session was opened): the record as its owner sees it. */
export interface AuthHookEvent { table: string, record: Row, requestId?: string }

/** A SQL-mode action's statement on a table, and the before-hooks it could not run (its values are SQL). */
export interface SqlWrite { action: string, table: string, statement: 'INSERT' | 'UPDATE' | 'DELETE', or?: string }

/** What fastbase calls each event's hooks with. */
interface HookArgs {
  beforeInsert: BeforeInsertEvent<Row, unknown>
  beforeUpdate: BeforeUpdateEvent<Row, unknown>
  beforeDelete: BeforeDeleteEvent<unknown>
  afterInsert: AfterWriteEvent
  afterUpdate: AfterWriteEvent
  afterDelete: AfterWriteEvent
  afterSignUp: AuthHookEvent
  afterLogin: AuthHookEvent
}
export type HookOf<E extends HookEvent> = (event: HookArgs[E]) => unknown
/** A hook of some event, as the registry stores it (`of` gives each list back typed for its event). */
type Hook = (event: never) => unknown

const WRITE_EVENTS: ReadonlySet<string> = new Set<string>([...BEFORE_EVENTS, ...AFTER_EVENTS])
const AUTH_EVENT_NAMES: ReadonlySet<string> = new Set<string>(AUTH_EVENTS)

export interface HookLog { error: (obj: object, msg: string) => void }

const CHANGE_EVENTS: Record<ChangeAction, AfterEvent> = { insert: 'afterInsert', update: 'afterUpdate', delete: 'afterDelete' }

export class RecordHooks implements ChangeSink {
  private readonly hooks = new Map<string, Map<HookEvent, readonly Hook[]>>()
  private readonly sqlWrites: SqlWrite[] = []
  constructor (
    private readonly tableNames: ReadonlySet<string>,
    private readonly authTables: ReadonlySet<string>,
    private readonly log: HookLog,
    /** The in-process API inside a transaction, for before-hooks' `tables` (lib/kernel/table-api.ts, built after this registry). */
    readonly tablesWithin: (trx: Knex.Transaction) => unknown = () => undefined
  ) {}

  /** Registers `fn` for `event` on `table`; returns a function that removes it. Unknown names throw at once. */
  on<E extends HookEvent> (table: string, event: E, fn: HookOf<E>): () => void {
    if (!this.tableNames.has(table)) throw new Error(`fastbase hooks: unknown table "${table}"`)
    // Host JavaScript reaches here too: the names and the function are checked, not trusted to the types.
    if (!WRITE_EVENTS.has(event) && !AUTH_EVENT_NAMES.has(event)) throw new Error(`fastbase hooks: unknown event "${String(event)}" (one of ${[...BEFORE_EVENTS, ...AFTER_EVENTS, ...AUTH_EVENTS].join(', ')})`)
    if (AUTH_EVENT_NAMES.has(event) && !this.authTables.has(table)) throw new Error(`fastbase hooks: ${event} needs an auth table; "${table}" signs nobody in`)
    if (typeof fn !== 'function') throw new TypeError('fastbase hooks: the hook must be a function')
    this.refuseSqlWriters(table, event)
    let events = this.hooks.get(table)
    if (events === undefined) this.hooks.set(table, events = new Map())
    const list = [...(events.get(event) ?? []), fn]
    events.set(event, list)
    return () => {
      const current = events.get(event)?.filter((h) => h !== fn) ?? []
      if (current.length > 0) events.set(event, current)
      else events.delete(event)
      if (events.size === 0 && this.hooks.get(table) === events) this.hooks.delete(table)
    }
  }

  /**
   * The SQL-mode actions' writes (lib/kernel/index.ts, while the kernel builds: before any host code can
   * reach `on`). A before-hook on a table one of them writes could not be handed its values, so `on`
   * refuses it (decision D69).
   */
  writtenBySql (writes: SqlWrite[]): void {
    this.sqlWrites.push(...writes)
  }

  private refuseSqlWriters (table: string, event: HookEvent): void {
    const write = this.sqlWrites.find((w) => w.table === table && sqlEvents(w).some((e) => e === event))
    if (write === undefined) return
    const verb = write.statement === 'INSERT' ? (write.or === 'REPLACE' ? 'inserts or replaces rows of' : 'inserts into') : write.statement === 'UPDATE' ? 'updates' : 'deletes from'
    throw new Error(`fastbase hooks: ${event} on "${table}" cannot run for the SQL-mode action "${write.action}", which ${verb} "${table}" with values written in SQL; write that action in steps mode or as a code action`)
  }

  /** The hooks of `event` on `table`. `on` replaces the list rather than changing it, so a hook that removes itself does not skip the next. */
  of<E extends HookEvent> (table: string, event: E): ReadonlyArray<HookOf<E>> | undefined {
    // The one place the event's argument type comes back: `on` stored each hook under the event it was typed for.
    return this.hooks.get(table)?.get(event) as ReadonlyArray<HookOf<E>> | undefined
  }

  // ChangeSink: committed changes, fed by every statement that writes (lib/crud/statements.ts).

  wants (table: string): boolean {
    const events = this.hooks.get(table)
    return events !== undefined && (events.has('afterInsert') || events.has('afterUpdate') || events.has('afterDelete'))
  }

  committed (changes: Change[]): void {
    void this.runAfter(changes)
  }

  private async runAfter (changes: Change[]): Promise<void> {
    for (const change of changes) {
      const event = CHANGE_EVENTS[change.action]
      const hooks = this.of(change.table, event)
      if (hooks === undefined) continue
      for (const row of change.rows) {
        for (const hook of hooks) await this.call(hook, { table: change.table, row, caller: change.caller, requestId: change.requestId }, event)
      }
    }
  }

  private async call<A extends AfterWriteEvent | AuthHookEvent> (hook: (event: A) => unknown, event: A, name: HookEvent): Promise<void> {
    try {
      await hook(event)
    } catch (error) {
      // The write is committed and answered: a failing after-hook is a server problem to log, not the caller's.
      this.log.error({ err: error, reqId: event.requestId, table: event.table, hook: name }, 'fastbase after-hook failed')
    }
  }

  // The auth flows report sign-ups and sign-ins here; the hooks run once `db`'s work is committed.

  /** An account was created (`record`: as its owner sees it). */
  signedUp (table: string, record: Row, db: Knex | Knex.Transaction, requestId?: string): void {
    this.authEvent('afterSignUp', table, record, db, requestId)
  }

  /** A session was opened. */
  signedIn (table: string, record: Row, db: Knex | Knex.Transaction, requestId?: string): void {
    this.authEvent('afterLogin', table, record, db, requestId)
  }

  private authEvent (name: AuthEvent, table: string, record: Row, db: Knex | Knex.Transaction, requestId: string | undefined): void {
    const hooks = this.of(table, name)
    if (hooks === undefined) return
    afterCommit(db, () => {
      void (async () => {
        for (const hook of hooks) await this.call(hook, { table, record, requestId }, name)
      })()
    })
  }
}

/** The before-hooks a SQL-mode statement would skip: an INSERT OR REPLACE may update, an UPDATE OR REPLACE deletes the rows holding its new values. */
function sqlEvents (write: SqlWrite): BeforeEvent[] {
  switch (write.statement) {
    case 'INSERT': return write.or === 'REPLACE' ? ['beforeInsert', 'beforeUpdate'] : ['beforeInsert']
    case 'UPDATE': return write.or === 'REPLACE' ? ['beforeUpdate', 'beforeDelete'] : ['beforeUpdate']
    case 'DELETE': return ['beforeDelete']
  }
}

/** Two change sinks as one: realtime and the after-hooks both hear every committed change they want. */
export function bothSinks (first: ChangeSink, second: ChangeSink): ChangeSink {
  return {
    wants: (table) => first.wants(table) || second.wants(table),
    uncaptured: (table) => {
      first.uncaptured?.(table)
      second.uncaptured?.(table)
    },
    committed: (changes) => {
      for (const sink of [first, second]) {
        const wanted = changes.filter((c) => sink.wants(c.table))
        if (wanted.length > 0) sink.committed(wanted)
      }
    }
  }
}
