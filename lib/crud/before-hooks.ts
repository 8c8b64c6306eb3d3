// Where a write calls its before-hooks (lib/crud/write.ts: insert, update, delete; upserts and edits
// come through those). Hooks are the server's own code, so what they set is written the way
// fastbase's own hooks write a password hash: past noInsert / noUpdate (the caller's values met those
// flags before any hook ran), yet still typed, encoded and checked per column like every value, and
// the table's rules are decided on the values as the hooks left them.
import type { Knex } from 'knex'
import type { TableDescriptor } from '../table.js'
import type { AuthContext } from '../auth-context.js'
import type { BeforeEvent, BeforeDeleteEvent, BeforeInsertEvent, BeforeUpdateEvent, RecordHooks } from './record-hooks.js'

type Row = Record<string, unknown>

/** What of a write's context the hooks read (a CrudContext is one). */
export interface HookedWrite {
  db: Knex | Knex.Transaction
  table: TableDescriptor
  auth: AuthContext
  applyRules: boolean
  hooks?: RecordHooks
}

/** Values a hook set, split into those written as the caller's and those written past the field flags. */
export interface HookedValues { values: Row, system: Row }

/**
 * Whether `event` has hooks on this table while the write is not yet in a transaction: it must open
 * one first (`inHookTransaction`), so the hooks' reads and writes commit or roll back with it.
 */
export function needsHookTransaction (ctx: HookedWrite, event: BeforeEvent): boolean {
  return ctx.db.isTransaction !== true && hasBeforeHook(ctx, event)
}

/** Is a before-hook registered for this table and event? (A write plan, compiled without hooks, must not run then.) */
export function hasBeforeHook (ctx: HookedWrite, event: BeforeEvent): boolean {
  return ctx.hooks !== undefined && ctx.hooks.of(ctx.table.name, event) !== undefined
}

/** Runs `write` in a transaction of its own: its statements go through it, never a fast path beside it. */
export async function inHookTransaction<C extends HookedWrite, T> (ctx: C, write: (ctx: C) => Promise<T>): Promise<T> {
  return await (ctx.db as Knex).transaction(async (trx) => await write({ ...ctx, db: trx, direct: undefined }))
}

function eventBase (ctx: HookedWrite) {
  const db = ctx.db as Knex.Transaction
  return { table: ctx.table.name, caller: ctx.auth, db, tables: ctx.hooks!.tablesWithin(db) }
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

/** Each row to insert through the beforeInsert hooks, in order; undefined when the table has none. */
export async function beforeInsert (ctx: HookedWrite, rows: Row[]): Promise<HookedValues[] | undefined> {
  const hooks = ctx.hooks?.of(ctx.table.name, 'beforeInsert')
  if (hooks === undefined) return undefined
  const result: HookedValues[] = []
  for (const row of rows) {
    const event: BeforeInsertEvent<Row, unknown> = { ...eventBase(ctx), values: { ...row } }
    for (const hook of hooks) await (hook as (e: BeforeInsertEvent<Row, unknown>) => unknown)(event)
    result.push(split(ctx, event.values, 'insert'))
  }
  return result
}

/**
 * The update's values through the beforeUpdate hooks; undefined when the table has none. `values` stays
 * undefined when the update gave none (only `set` expressions) and no hook added any.
 */
export async function beforeUpdate (ctx: HookedWrite, setValues: Row | undefined, set: Record<string, string> | undefined, where: string): Promise<{ values?: Row, system: Row } | undefined> {
  const hooks = ctx.hooks?.of(ctx.table.name, 'beforeUpdate')
  if (hooks === undefined) return undefined
  const event: BeforeUpdateEvent<Row, unknown> = { ...eventBase(ctx), values: { ...setValues }, set: Object.freeze({ ...set }), where }
  for (const hook of hooks) await (hook as (e: BeforeUpdateEvent<Row, unknown>) => unknown)(event)
  const { values, system } = split(ctx, event.values, 'update')
  return { values: setValues === undefined && Object.keys(values).length === 0 ? undefined : values, system }
}

/** The beforeDelete hooks of the table, if any. */
export async function beforeDelete (ctx: HookedWrite, where: string): Promise<void> {
  const hooks = ctx.hooks?.of(ctx.table.name, 'beforeDelete')
  if (hooks === undefined) return
  const event: BeforeDeleteEvent<unknown> = { ...eventBase(ctx), where }
  for (const hook of hooks) await (hook as (e: BeforeDeleteEvent<unknown>) => unknown)(event)
}
