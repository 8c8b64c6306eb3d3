// Where a write calls its before-hooks (lib/crud/write.ts: insert, update, delete; upserts and edits
// come through those): one entry per event, which runs the record hooks the server registered
// (lib/crud/record-hooks.ts), then the table's own (an auth table's password hooks, WriteHooks: the
// password hashed, the current one checked, the email normalized). Hooks are the server's own code,
// so what they set is written the way fastbase's own hooks write a password hash: past noInsert /
// noUpdate (the caller's values met those flags before any hook ran), yet still typed, encoded and
// checked per column like every value, and the table's rules are decided on the values as the hooks
// left them. A record hook never sees a plaintext password (WriteHooks.hidden): those values are kept
// aside and put back after it ran, for the table's own hooks to hash. An auth flow's own write to a
// user row comes here too, as a FlowWrite (decision D143).
import type { Knex } from 'knex'
import type { HookContext, TableDescriptor, UpdateHook } from '../table/descriptor.js'
import type { AuthContext } from '../auth-context.js'
import type { AuthSource, BeforeEvent, BeforeDeleteEvent, BeforeInsertEvent, BeforeUpdateEvent, RecordHooks } from './record-hooks.js'

type Row = Record<string, unknown>

/** What of a write's context the hooks read (a CrudContext is one). */
export interface HookedWrite {
  db: Knex
  table: TableDescriptor
  auth: AuthContext
  applyRules: boolean
  hooks?: RecordHooks
  source?: AuthSource
}

/** Values a hook set, split into those written as the caller's and those written past the field flags. */
export interface HookedValues { values: Row, system: Row }

/**
 * An auth flow's own write to a user row (decision D143): a password changed, reset or rehashed, an
 * email verified, an account an external sign-in creates or takes over. Its values are the flow's,
 * none a caller's, and it runs with the rules off (`applyRules: false`), so no field flag holds them
 * back. The record hooks see them (never the password hash nor its salt: WriteHooks.hidden) and may
 * set other columns, checked per column as on the table API; the table's own hooks do not run (they
 * hash and check a caller's password, and the flow's password is a hash it made itself). No request
 * can make one: insert and update take it as an argument of its own, which only lib/auth passes,
 * never inside the params the table routes, actions and the in-process API hand on.
 */
export interface FlowWrite {
  /** The columns the flow vouches for (the id, email and verified flag): no hook may set or change one, whether the flow writes it or not. */
  owned: readonly string[]
  /** Columns set back to their default (the table's DDL, as SQL) unless a hook sets them: a takeover's reset (decision D90). */
  defaults?: Readonly<Record<string, string>>
}

/**
 * Whether `event` has record hooks on this table while the write is not yet in a transaction: it must
 * open one first (`inHookTransaction`), so the hooks' reads and writes commit or roll back with it.
 * (The table's own hooks read through the write's connection and need none.)
 */
export function needsHookTransaction (ctx: HookedWrite, event: BeforeEvent): boolean {
  return ctx.db.isTransaction !== true && hasRecordHook(ctx, event)
}

/** Does a write of `event` run any before-hook on this table? (A write plan, compiled without hooks, must not run then.) */
export function hasBeforeHook (ctx: HookedWrite, event: BeforeEvent): boolean {
  return hasRecordHook(ctx, event) || (event !== 'beforeDelete' && ctx.table.writeHooks !== undefined)
}

function hasRecordHook (ctx: HookedWrite, event: BeforeEvent): boolean {
  return ctx.hooks !== undefined && ctx.hooks.of(ctx.table.name, event) !== undefined
}

/** What the table's own hooks know of the write. */
function hookContext (ctx: HookedWrite): HookContext {
  return { admin: ctx.auth.admin, uid: ctx.auth.uid, sid: ctx.auth.sid, applyRules: ctx.applyRules, db: ctx.db }
}

/** Runs `write` in a transaction of its own: its statements go through it, never a fast path beside it. */
export async function inHookTransaction<C extends HookedWrite, T> (ctx: C, write: (ctx: C) => Promise<T>): Promise<T> {
  return await ctx.db.transaction(async (trx) => await write({ ...ctx, db: trx, direct: undefined }))
}

function eventBase (ctx: HookedWrite, registry: RecordHooks) {
  const db = ctx.db as Knex.Transaction
  return { table: ctx.table.name, caller: ctx.auth, db, tables: registry.tablesWithin(db), source: ctx.source }
}

/** `values` without the names hidden from hooks (a plaintext password), and those kept aside. */
export function shownToHooks (table: TableDescriptor, values: Row): { shown: Row, kept: Row } {
  const hidden = table.writeHooks?.hidden
  const shown: Row = {}
  const kept: Row = {}
  for (const [name, value] of Object.entries(values)) (hidden?.has(name) === true ? kept : shown)[name] = value
  return { shown, kept }
}

/** The values the hooks left, with the kept ones back; a hook that wrote a hidden name is a server error naming it. */
export function withKept (table: TableDescriptor, event: BeforeEvent, hooked: Row, kept: Row): Row {
  const written = Object.keys(hooked).find((name) => table.writeHooks?.hidden.has(name) === true)
  if (written !== undefined) throw new Error(`fastbase hooks: a ${event} hook on "${table.name}" set "${written}": passwords are written by callers and the auth flows only`)
  return { ...hooked, ...kept }
}

/** The fields a caller could not have written: what a hook sets there goes past the flag. */
function split (ctx: HookedWrite, values: Row, verb: 'insert' | 'update'): HookedValues {
  const result: HookedValues = { values: {}, system: {} }
  for (const [name, value] of Object.entries(values)) {
    const field = ctx.table.fields.get(name)
    const locked = ctx.applyRules && field !== undefined && (verb === 'insert' ? field.noInsert : field.noUpdate) === true
    result[locked ? 'system' : 'values'][name] = value
  }
  return result
}

/** An insert's rows refused as a whole, before any is prepared: the table's own bound on costly rows (an upsert's). */
export function beforeBatch (ctx: HookedWrite, rows: Row[]): void {
  ctx.table.writeHooks?.beforeBatch(hookContext(ctx), rows)
}

/** Each row to insert through the record hooks, then the table's own; the rows as given when there are none. */
export async function beforeInsert (ctx: HookedWrite, rows: Row[], flow?: FlowWrite): Promise<HookedValues[]> {
  const given = await recordBeforeInsert(ctx, rows, flow) ?? rows.map((values) => ({ values, system: {} }))
  const own = ctx.table.writeHooks
  if (own === undefined || flow !== undefined) return given
  const hooked = await own.beforeInsert(hookContext(ctx), given.map((g) => g.values))
  // What the record hooks wrote past the field flags is kept beside what the table's own hooks did.
  return hooked.map((h, i) => ({ values: h.values, system: { ...given[i].system, ...h.system } }))
}

/**
 * An update's values through the record hooks, then the table's own: what it writes (undefined when
 * it gave none, only `set` expressions, and no hook added any), what goes past the field flags, and
 * what the table's own hooks ask (the one record it may reach, what runs after it in its transaction).
 */
export async function beforeUpdate (ctx: HookedWrite, setValues: Row | undefined, set: Record<string, string> | undefined, where: string, flow?: FlowWrite): Promise<Partial<UpdateHook> & { system: Row }> {
  const given = await recordBeforeUpdate(ctx, setValues, set, where, flow) ?? { values: setValues, system: {} }
  const own = ctx.table.writeHooks
  if (own === undefined || given.values === undefined || flow !== undefined) return given
  const hooked = await own.beforeUpdate(hookContext(ctx), given.values)
  return { ...hooked, system: { ...given.system, ...hooked.system } }
}

/** A flow's owned columns as the hooks left them (`given`: what the hooks were shown): one a hook set or changed is a server error naming it. */
function keepOwned (ctx: HookedWrite, event: BeforeEvent, flow: FlowWrite | undefined, given: Row, hooked: Row): void {
  for (const column of flow?.owned ?? []) {
    const changed = Object.hasOwn(given, column) ? hooked[column] !== given[column] : Object.hasOwn(hooked, column)
    if (changed) throw new Error(`fastbase hooks: a ${event} hook on "${ctx.table.name}" set "${column}", which the ${ctx.source ?? 'system'} flow writes itself`)
  }
}

/** Each row to insert through the beforeInsert record hooks, in order; undefined when the table has none. */
async function recordBeforeInsert (ctx: HookedWrite, rows: Row[], flow: FlowWrite | undefined): Promise<HookedValues[] | undefined> {
  const registry = ctx.hooks
  const hooks = registry?.of(ctx.table.name, 'beforeInsert')
  if (registry === undefined || hooks === undefined) return undefined
  const result: HookedValues[] = []
  for (const row of rows) {
    const { shown, kept } = shownToHooks(ctx.table, row)
    const event: BeforeInsertEvent<Row, unknown> = { ...eventBase(ctx, registry), values: { ...shown } }
    for (const hook of hooks) await hook(event)
    keepOwned(ctx, 'beforeInsert', flow, shown, event.values)
    result.push(split(ctx, withKept(ctx.table, 'beforeInsert', event.values, kept), 'insert'))
  }
  return result
}

/**
 * The update's values through the beforeUpdate record hooks; undefined when the table has none.
 * `values` stays undefined when the update gave none (only `set` expressions) and no hook added any.
 */
async function recordBeforeUpdate (ctx: HookedWrite, setValues: Row | undefined, set: Record<string, string> | undefined, where: string, flow: FlowWrite | undefined): Promise<{ values?: Row, system: Row } | undefined> {
  const registry = ctx.hooks
  const hooks = registry?.of(ctx.table.name, 'beforeUpdate')
  if (registry === undefined || hooks === undefined) return undefined
  const { shown, kept } = shownToHooks(ctx.table, setValues ?? {})
  const event: BeforeUpdateEvent<Row, unknown> = { ...eventBase(ctx, registry), values: { ...shown }, set: Object.freeze({ ...set }), where }
  for (const hook of hooks) await hook(event)
  keepOwned(ctx, 'beforeUpdate', flow, shown, event.values)
  const { values, system } = split(ctx, withKept(ctx.table, 'beforeUpdate', event.values, kept), 'update')
  return { values: setValues === undefined && Object.keys(values).length === 0 ? undefined : values, system }
}

/** The beforeDelete hooks of the table, if any. */
export async function beforeDelete (ctx: HookedWrite, where: string): Promise<void> {
  const registry = ctx.hooks
  const hooks = registry?.of(ctx.table.name, 'beforeDelete')
  if (registry === undefined || hooks === undefined) return
  const event: BeforeDeleteEvent<unknown> = { ...eventBase(ctx, registry), where }
  for (const hook of hooks) await hook(event)
}
