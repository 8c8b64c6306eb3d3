// The statements every write is made of, shared by the table API (write.ts) and SQL-mode actions:
// multi-row inserts with conflict handling, updates (with IGNORE/REPLACE resolution) and deletes.
import type { Knex } from 'knex'
import type { Binding, Fragment } from '../dialects/types.js'
import type { TableField } from '../../schemas/config.js'
import { errors } from '../errors.js'
import { constraintError } from './db-errors.js'
import { and, applyCondition, ruleCondition, type CrudContext } from './context.js'
import { selectList, type OutputColumn } from './columns.js'
import { runWriteQuery, runWriteStatement } from '../db/statement.js'
import type { SpanOf } from '../dialects/connection.js'
import { followsWrites, insertedAlone, updatedAlone } from './total-cache.js'
import { recordChange, recordUncaptured, type Change, type ChangeAction } from './changes-port.js'
import { beforeDelete, hasBeforeHook } from './before-hooks.js'
import { literalText } from '../expr/index.js'

type Row = Record<string, unknown>
type Literal = Parameters<typeof literalText>[0]
/** What a write does on a unique conflict (the request schemas list the same). */
export const CONFLICTS = ['ABORT', 'FAIL', 'IGNORE', 'REPLACE', 'ROLLBACK'] as const
export type Conflict = typeof CONFLICTS[number]
/** Column -> the SQL it is set to. */
export type Assignments = Map<string, Fragment>

// Internal aliases for the key columns a write returns besides the caller's `returning`.
const KEY_ALIAS = 'fb_key_'
// ... and for the columns realtime captures (lib/crud/changes-port.ts).
const CAPTURE_ALIAS = 'fb_rt_'

/**
 * What a write returns for realtime besides the caller's columns: every column of each changed row,
 * as this statement left it (for a delete, as it was). Events carry these values rather than a later
 * re-read, so a row changed again (or deleted) before delivery still gets its own event.
 * Nothing when no subscriber could want the table (unless `planned`: a plan's text for when one does).
 */
/** A column captured for the change sink: always a column of the table. */
export type CapturedColumn = OutputColumn & { field: TableField }

export function captureColumns (ctx: CrudContext, planned = false): CapturedColumn[] {
  if (ctx.table.key.length === 0 || (!planned && (ctx.changes === undefined || !ctx.changes.wants(ctx.table.name)))) return []
  return ctx.table.fieldList.map((f, i) => ({ key: `${CAPTURE_ALIAS}${i}`, fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(f.name)}`, bindings: [] }, field: f, aggregate: false }))
}

/**
 * Where a write is to be placed among data versions (DirectRunner#write's `span`, decision D132),
 * the object its span is put in: while a kept total may be carried across writes, where the table
 * has a one-column key (the totals name rows by it) and no triggers of its own, and an update
 * (`assigned`: its columns) no column another table's foreign key changes with (ON UPDATE CASCADE,
 * SET NULL, SET DEFAULT): either would write elsewhere in the same statement (decision D147). The
 * statement must end with its RETURNING list.
 */
export function writeSpan (ctx: CrudContext, assigned?: ReadonlySet<string>): SpanOf | undefined {
  if (!followsWrites() || ctx.table.key.length !== 1 || (ctx.table.data.triggers ?? []).length > 0) return undefined
  if (assigned !== undefined && ctx.table.referencedBy.some((fk) => assigned.has(fk.column.name) && CHANGED_BY_ACTION.has(fk.field.foreignKey?.onUpdate))) return undefined
  return {}
}

// The foreign-key actions that change the referencing rows when the referenced column changes.
const CHANGED_BY_ACTION = new Set<string | undefined>(['CASCADE', 'SET NULL', 'SET DEFAULT'])

/** The column keyColumns returns a one-column key in. */
const ONE_KEY = `${KEY_ALIAS}0`

/**
 * After an insert's statement: where it ran alone (it has a span), the kept totals hear of it, with
 * its rows' keys, read at `keyAt` (keyColumns' own, or the answer's column of the key: keyAnswered).
 */
export function reportLoneInsert (ctx: CrudContext, span: SpanOf | undefined, rows: Row[], keyAt = ONE_KEY): void {
  if (span?.span !== undefined && ctx.direct !== undefined) insertedAlone(ctx.direct, ctx.table.name, span.span, rows.map((row) => row[keyAt]))
}

/** After an update's statement: where it ran alone, the kept totals hear which columns it assigned. */
export function reportLoneUpdate (ctx: CrudContext, span: SpanOf | undefined, assigned: ReadonlySet<string>): void {
  if (span?.span !== undefined && ctx.direct !== undefined) updatedAlone(ctx.direct, ctx.table.name, span.span, assigned)
}

/**
 * The timestamps an insert sets where its values give none: set by the statement, not by triggers,
 * so they hold on both dialects whatever the DDL says.
 */
export function stampedOnInsert (ctx: CrudContext, given: (field: TableField) => boolean): TableField[] {
  const { created, updated } = ctx.table
  const stamped: TableField[] = []
  for (const field of [created, updated]) if (field !== undefined && !given(field)) stamped.push(field)
  return stamped
}

/** An update stamps the `updated` timestamp, unless it assigns that itself. */
export function stampUpdated (ctx: CrudContext, set: Map<string, Fragment>): void {
  const updated = ctx.table.updated
  if (updated !== undefined && !set.has(updated.name)) set.set(updated.name, { sql: ctx.dialect.now(), bindings: [] })
}

/**
 * Does an update that assigns `assigned` need the rows as they were (Change#before, decision D105)?
 * When every column it assigns (the `updated` timestamp too) is one some subscriber may not read (a
 * noSelect field, a field with a field rule), its event could tell of nothing but a hidden change:
 * realtime compares what each subscriber saw before with what it sees after. Any other update
 * changes what everyone sees of the row, and is sent as it is.
 */
export function capturesBefore (ctx: CrudContext, assigned: Iterable<string>): boolean {
  const table = ctx.table
  if (table.key.length === 0 || ctx.changes === undefined || !ctx.changes.wants(table.name)) return false
  const names = new Set(assigned)
  if (table.updated !== undefined) names.add(table.updated.name)
  for (const name of names) {
    if (table.fields.get(name)?.noSelect !== true && !table.fieldRules.has(name)) return false
  }
  return names.size > 0
}

/**
 * The rows a statement answers its caller: none when the caller asked for no column. A statement
 * that captures a change for realtime returns its rows anyway (one per changed row, holding only the
 * capture columns), which must not show as `[{}, ...]` where an uncaptured statement answers `[]`.
 */
export function answered (columns: OutputColumn[], rows: Row[]): Row[] {
  return columns.length === 0 ? [] : rows
}

/**
 * Reports the rows a statement on `db` changed (published after commit); `rows` carry the capture
 * columns, and so do `before`, an update's rows as they were (any order; matched by key).
 */
export function reportChange (ctx: CrudContext, db: Knex, action: ChangeAction, capture: CapturedColumn[], rows: Row[], before?: Row[]): void {
  const sink = ctx.changes
  if (capture.length === 0 && ctx.table.key.length > 0) recordUncaptured(sink, db, ctx.table.name)
  // Columns are captured only for a sink that wants them (captureColumns).
  if (capture.length === 0 || rows.length === 0 || sink === undefined) return
  const decoded = rows.map((row) => capture.map((c) => ctx.dialect.decode(c.field, row[c.key])))
  const keyAt = ctx.table.key.map((k) => capture.findIndex((c) => c.field === k))
  const keys = decoded.map((values) => keyAt.map((i) => values[i]))
  const record = (values: unknown[]): Row => Object.fromEntries(capture.map((c, i) => [c.field.name, values[i]]))
  const records = decoded.map(record)
  const change: Change = { table: ctx.table.name, action, keys, rows: records, caller: ctx.auth, requestId: ctx.requestId }
  if (before !== undefined) {
    const was = new Map(before.map((row) => capture.map((c) => ctx.dialect.decode(c.field, row[c.key]))).map((values) => [JSON.stringify(keyAt.map((i) => values[i])), record(values)]))
    change.before = keys.map((key) => was.get(JSON.stringify(key)) ?? null)
  }
  recordChange(sink, db, change)
}


export function raw (db: Knex, fragment: Fragment): Knex.Raw {
  return db.raw(fragment.sql, fragment.bindings)
}


export function keyColumns (ctx: CrudContext): OutputColumn[] {
  return ctx.table.key.map((f, i) => ({
    key: `${KEY_ALIAS}${i}`,
    fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(f.name)}`, bindings: [] },
    field: f,
    aggregate: false
  }))
}

/**
 * The key of the column among `columns` that returns a one-column table key as it is stored (its
 * plain column, no field rule's CASE): a statement answering it needs no keyColumns beside it.
 */
export function keyAnswered (ctx: CrudContext, columns: readonly OutputColumn[]): string | undefined {
  const [key, ...more] = ctx.table.key
  if (key === undefined || more.length > 0) return undefined
  const plain = `${ctx.table.quoted}.${ctx.dialect.quote(key.name)}`
  return columns.find((c) => c.field === key && c.nested === undefined && c.fragment.sql === plain && c.fragment.bindings.length === 0)?.key
}

/** Rows identified by their returned key values, as a condition. */
export function keyCondition (ctx: CrudContext, rows: Row[]): Fragment {
  const parts = rows.map((row) => {
    const eqs = ctx.table.key.map((f, i) => {
      const lit = ctx.dialect.literal(ctx.dialect.decode(f, row[`${KEY_ALIAS}${i}`]), f)
      return { sql: `${ctx.table.quoted}.${ctx.dialect.quote(f.name)} = ${lit.sql}`, bindings: lit.bindings }
    })
    return { sql: `(${eqs.map((e) => e.sql).join(' AND ')})`, bindings: eqs.flatMap((e) => e.bindings) }
  })
  return { sql: parts.map((p) => p.sql).join(' OR '), bindings: parts.flatMap((p) => p.bindings) }
}


// Bound values per statement, under SQLite's and PostgreSQL's parameter limits (32766 / 65535), and rows
// per statement under SQLite's 500 compound-select terms (Knex writes multi-row SQLite inserts as UNION ALL).
const MAX_BINDINGS = 10_000
const MAX_ROWS = 500

/** Rows naming the same columns share a statement (a row with other columns would lose its defaults), in chunks. */
export function statementBatches (rows: Record<string, Knex.Raw>[]): Record<string, Knex.Raw>[][] {
  const sameShape = rows.every((r) => Object.keys(r).join() === Object.keys(rows[0]).join())
  if (!sameShape) return rows.map((r) => [r])
  const size = Math.min(MAX_ROWS, Math.max(1, Math.floor(MAX_BINDINGS / Math.max(1, Object.keys(rows[0]).length))))
  const batches: Record<string, Knex.Raw>[][] = []
  for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size))
  return batches
}

export async function insertStatement (ctx: CrudContext, trx: Knex.Transaction, rows: Record<string, Knex.Raw>[], or: Conflict | undefined, columns: OutputColumn[]): Promise<Row[]> {
  if (or === 'REPLACE') return await replaceOnConflict(ctx, trx, rows, columns)
  const capture = captureColumns(ctx)
  const all = capture.length === 0 ? columns : [...columns, ...capture]
  const names = Object.keys(rows[0])
  let result: Row[]
  if (or !== 'IGNORE' && names.length > 0) {
    // The totals name the inserted rows by the key it returns (an action's SQL-mode insert may not).
    const span = all.some((c) => c.key === ONE_KEY) ? writeSpan(ctx) : undefined
    result = await plainInsert(ctx, trx, rows, names, all, span)
    reportLoneInsert(ctx, span, result)
  } else {
    const insert = trx(ctx.table.name).insert(rows)
    const query: Knex.QueryBuilder = or === 'IGNORE' ? insert.onConflict().ignore() : insert
    result = await runWriteQuery(trx, ctx.direct, all.length > 0 ? query.returning(selectList(trx, ctx, all)) : query)
  }
  reportChange(ctx, trx, 'insert', capture, result)
  return answered(columns, result)
}

/** The SQL text of a value made with `raw`; its bindings are appended to `bindings`. */
function sqlOf (value: Knex.Raw, bindings: Binding[]): string {
  const fragment = value as unknown as { sql: string, bindings?: Binding[] }
  bindings.push(...(fragment.bindings ?? []))
  return fragment.sql
}

/** `INSERT INTO t (a, b) VALUES `: the head of every insert the table API writes itself, planned (lib/crud/write-plans.ts) or not. */
export function insertHead (ctx: Pick<CrudContext, 'table' | 'dialect'>, names: readonly string[]): string {
  return `INSERT INTO ${ctx.table.quoted} (${names.map((name) => ctx.dialect.quote(name)).join(', ')}) VALUES `
}

/** One row's `(a, b, ...)` after an insert's head; several rows' tuples are joined by `, `. */
export function valuesTuple (values: readonly string[]): string {
  return `(${values.join(', ')})`
}

/**
 * `UPDATE t SET a = ..., b = ... [WHERE ...]`, up to its RETURNING list: the text of every update the
 * table API writes, planned (lib/crud/write-plans.ts) or not. The assignments' and the condition's
 * bindings are appended to `bindings`, in that order.
 */
export function updateHead (ctx: Pick<CrudContext, 'table' | 'dialect'>, set: Assignments, condition: Fragment | true, bindings: Binding[]): string {
  const assigned = [...set].map(([name, f]) => {
    bindings.push(...f.bindings)
    return `${ctx.dialect.quote(name)} = ${f.sql}`
  })
  const head = `UPDATE ${ctx.table.quoted} SET ${assigned.join(', ')}`
  if (condition === true) return head
  bindings.push(...condition.bindings)
  return `${head} WHERE ${condition.sql}`
}

/**
 * `INSERT INTO t (a, b) VALUES (...), (...) RETURNING ...`, the statement the common insert needs,
 * written here: Knex's insert compiler normalises every row object anew on each call and was a
 * tenth of an insert's time. Conflict handling (IGNORE, REPLACE) stays with Knex.
 */
function plainInsert (ctx: CrudContext, trx: Knex.Transaction, rows: Array<Record<string, Knex.Raw>>, names: string[], columns: OutputColumn[], span: SpanOf | undefined): Row[] | Promise<Row[]> {
  const bindings: Binding[] = []
  const tuples = rows.map((row) => valuesTuple(names.map((name) => sqlOf(row[name], bindings))))
  return runWriteStatement(trx, ctx.direct, `${insertHead(ctx, names)}${tuples.join(', ')}${returningSql(ctx, columns, bindings)}`, bindings, span)
}

/**
 * The unique keys whose columns are all among `written`, in the order an upsert tries them: the
 * primary key, then unique fields, then unique indexes (partial ones cannot be conflict targets).
 */
export function uniqueKeys (ctx: CrudContext, written: string[]): string[][] {
  const keys = [
    ctx.table.key.map((f) => f.name),
    ...ctx.table.fieldList.filter((f) => f.unique === true).map((f) => [f.name]),
    ...(ctx.table.data.indexes ?? []).filter((i) => i.unique === true && i.where === undefined).map((i) => typeof i.fields === 'string' ? [i.fields] : i.fields)
  ]
  const present = keys.filter((key) => key.length > 0 && key.every((name) => written.includes(name)))
  // A primary key may also be declared unique: one key, tried once.
  return present.filter((key, i) => present.findIndex((other) => other.join() === key.join()) === i)
}

/**
 * SQL-mode REPLACE (the developer's own SQL, no table rules: decision D19), an on-conflict replace on
 * the conflicting unique key: the row holding the key is updated with the other values, keeping its
 * primary key, uid and `created`. The table API's REPLACE is not this: it updates a met row through
 * `update` (lib/crud/write.ts#upsert).
 * PostgreSQL needs one conflict target per statement, so with several unique keys among the values each
 * row is first looked up on all of them (SQLite's own REPLACE would delete every row it meets instead):
 * the key it meets an existing row on is the target; a row meeting two different rows is a
 * unique-constraint 400, on both dialects.
 */
async function replaceOnConflict (ctx: CrudContext, trx: Knex.Transaction, rows: Record<string, Knex.Raw>[], columns: OutputColumn[]): Promise<Row[]> {
  const written = Object.keys(rows[0])
  const keys = uniqueKeys(ctx, written)
  if (keys.length === 0) throw errors.badRequest('or=REPLACE needs the values of a primary key or unique field to find the row to replace')
  const capture = captureColumns(ctx)
  const all = capture.length === 0 ? columns : [...columns, ...capture]
  const run = async (batch: Record<string, Knex.Raw>[], target: string[]): Promise<Row[]> => {
    // Which rows exist already decides each returned row's realtime action (insert or update).
    const keyCapture = capture.filter((c) => ctx.table.key.includes(c.field))
    const existing = capture.length === 0 ? undefined : await existingKeys(ctx, trx, batch, target, keyCapture)
    const result = await runWriteQuery(trx, ctx.direct, onConflictQuery(ctx, trx, batch, written, target, all))
    if (existing !== undefined) {
      // In the order the rows were returned: one change per run of inserts or updates.
      const run: Row[] = []
      let action: ChangeAction = 'insert'
      for (const row of result) {
        const rowAction: ChangeAction = existing.has(JSON.stringify(keyCapture.map((c) => ctx.dialect.decode(c.field, row[c.key])))) ? 'update' : 'insert'
        if (rowAction !== action) reportChange(ctx, trx, action, capture, run.splice(0))
        action = rowAction
        run.push(row)
      }
      reportChange(ctx, trx, action, capture, run)
    }
    return result
  }
  if (keys.length === 1) return answered(columns, await run(rows, keys[0]))
  const result: Row[] = []
  for (const row of rows) result.push(...await run([row], await metKey(ctx, trx, row, keys) ?? keys[0]))
  return answered(columns, result)
}

/** `key` columns equal to the values `row` gives them, as a condition. */
export function matchCondition (ctx: CrudContext, row: Record<string, Knex.Raw>, key: string[]): Fragment {
  const bindings: Binding[] = []
  const sql = key.map((name) => `${ctx.table.quoted}.${ctx.dialect.quote(name)} = ${sqlOf(row[name], bindings)}`).join(' AND ')
  return { sql: `(${sql})`, bindings }
}

/** The keys (as JSON of the decoded `keyCapture` columns) of the rows an on-conflict replace of `rows` on `target` would update. */
async function existingKeys (ctx: CrudContext, trx: Knex.Transaction, rows: Record<string, Knex.Raw>[], target: string[], keyCapture: OutputColumn[]): Promise<Set<string>> {
  const matches = rows.map((row) => matchCondition(ctx, row, target))
  const list = keyCapture.map((c) => `${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`).join(', ')
  const found = ctx.dialect.rawRows(await trx.raw(`SELECT ${list} FROM ${ctx.table.quoted} WHERE ${matches.map((m) => m.sql).join(' OR ')}`, matches.flatMap((m) => m.bindings)))
  return new Set(found.map((row) => JSON.stringify(keyCapture.map((c) => ctx.dialect.decode(c.field, row[c.key])))))
}

/** The first of `keys` on which `row` meets an existing row; undefined when it meets none. */
export async function metKey (ctx: CrudContext, trx: Knex.Transaction, row: Record<string, Knex.Raw>, keys: string[][]): Promise<string[] | undefined> {
  const matches = keys.map((key) => matchCondition(ctx, row, key))
  const bindings = matches.flatMap((m) => m.bindings)
  const sql = `SELECT CASE ${matches.map((m, i) => `WHEN ${m.sql} THEN ${i}`).join(' ')} END AS k FROM ${ctx.table.quoted} WHERE ${matches.map((m) => m.sql).join(' OR ')} LIMIT 2`
  const met = ctx.dialect.rawRows(await trx.raw(sql, [...bindings, ...bindings])).map((r) => Number(r.k))
  if (met.length > 1) throw constraintError('unique', keys[Math.max(...met)][0])
  return met.length === 0 ? undefined : keys[met[0]]
}

function onConflictQuery (ctx: CrudContext, db: Knex.Transaction, rows: Record<string, Knex.Raw>[], written: string[], target: string[], columns: OutputColumn[]): Knex.QueryBuilder {
  const kept = keptColumns(ctx, target)
  const merged = written.filter((name) => !kept.has(name))
  const conflict = db(ctx.table.name).insert(rows).onConflict(target)
  const query: Knex.QueryBuilder = merged.length === 0
    ? conflict.ignore()
    : conflict.merge(Object.fromEntries(merged.map((name) => [name, db.raw(`excluded.${ctx.dialect.quote(name)}`)])))
  return columns.length > 0 ? query.returning(selectList(db, ctx, columns)) : query
}

/** Columns a REPLACE (either kind) never changes in the row it meets on `target`: its keys, uid and `created`. */
export function keptColumns (ctx: CrudContext, target: string[]): Set<string | undefined> {
  return new Set([...ctx.table.key.map((f) => f.name), ctx.table.uid?.name, ctx.table.created?.name, ...target])
}


async function runUpdate (ctx: CrudContext, trx: Knex.Transaction, set: Assignments, condition: Fragment | true, columns: OutputColumn[]): Promise<Row[]> {
  const bindings: Binding[] = []
  const head = updateHead(ctx, set, condition, bindings)
  const where = condition === true ? '' : ` WHERE ${condition.sql}`
  const capture = captureColumns(ctx)
  // In the statement's transaction (lib/crud/write.ts#update opens one for it).
  const before = capture.length > 0 && capturesBefore(ctx, set.keys())
    ? ctx.dialect.rawRows(await trx.raw(`SELECT ${capture.map((c) => `${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`).join(', ')} FROM ${ctx.table.quoted}${where}`, condition === true ? [] : condition.bindings))
    : undefined
  // A span needs a RETURNING clause (one row per changed row; on PostgreSQL, the id appended to it):
  // the key, where the statement returns nothing else.
  const assigned = new Set(set.keys())
  const span = writeSpan(ctx, assigned)
  const returned = [...columns, ...capture, ...(span !== undefined && columns.length === 0 && capture.length === 0 ? keyColumns(ctx) : [])]
  const rows = await runWriteStatement(trx, ctx.direct, `${head}${returningSql(ctx, returned, bindings)}`, bindings, span)
  reportChange(ctx, trx, 'update', capture, rows, before)
  reportLoneUpdate(ctx, span, assigned)
  return answered(columns, rows)
}

/** ` RETURNING a AS "a", ...` (empty without columns); its bindings are appended to `bindings`. */
export function returningSql (ctx: CrudContext, columns: OutputColumn[], bindings: Binding[]): string {
  if (columns.length === 0) return ''
  for (const c of columns) bindings.push(...c.fragment.bindings)
  return ` RETURNING ${columns.map((c) => `${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`).join(', ')}`
}


/**
 * UPDATE OR IGNORE / OR REPLACE with the same results on both dialects. The update runs whole in a
 * savepoint; on a unique conflict it is redone row by row: IGNORE leaves a conflicting row as it was,
 * REPLACE deletes the other rows holding the new value first (as SQLite's REPLACE does), and only
 * rows the caller's deleteRule allows it to delete; one it may not delete makes the call 403.
 */
async function updateResolvingConflicts (ctx: CrudContext, trx: Knex.Transaction, a: Assignments, condition: Fragment | true, columns: OutputColumn[], mode: 'IGNORE' | 'REPLACE'): Promise<Row[]> {
  const uniqueViolation = (error: unknown) => {
    const violation = ctx.dialect.constraintViolation(error, ctx.table.data)
    return violation?.kind === 'unique' ? violation : undefined
  }
  try {
    return await trx.transaction((sp) => runUpdate(ctx, sp, a, condition, columns))
  } catch (error) {
    if (uniqueViolation(error) === undefined || ctx.table.key.length === 0) throw error
  }
  const targets: Row[] = await applyCondition(trx.from(ctx.table.name).select(selectList(trx, ctx, keyColumns(ctx))), condition)
  const result: Row[] = []
  for (const target of targets) {
    const self = keyCondition(ctx, [target])
    // Each retry clears one more unique column; more attempts than columns means the conflict is not ours to clear.
    for (let attempt = 0; ; attempt++) {
      try {
        result.push(...await trx.transaction((sp) => runUpdate(ctx, sp, a, self, columns)))
        break
      } catch (error) {
        const violation = uniqueViolation(error)
        if (violation === undefined) throw error
        if (mode === 'IGNORE') break
        if (attempt > ctx.table.fieldList.length || violation.column === undefined || !a.has(violation.column)) throw errors.forbidden()
        await deleteHolders(ctx, trx, a, target, violation.column)
      }
    }
  }
  return result
}

/**
 * Deletes the other rows whose `column` equals the value the update gives row `target`, within the
 * deleteRule, after the table's beforeDelete hooks (told those rows as an expression).
 */
async function deleteHolders (ctx: CrudContext, trx: Knex.Transaction, a: Assignments, target: Row, column: string): Promise<void> {
  const self = keyCondition(ctx, [target])
  const field = ctx.table.fields.get(column)!
  const assigned = a.get(column)!
  const [{ v }] = await trx.from(ctx.table.name).select(trx.raw(`${assigned.sql} AS v`, assigned.bindings)).whereRaw(self.sql, self.bindings)
  const decoded = ctx.dialect.decode(field, v)
  const value = ctx.dialect.literal(decoded, field)
  const holders = { sql: `${ctx.table.quoted}.${ctx.dialect.quote(column)} = ${value.sql} AND NOT (${self.sql})`, bindings: [...value.bindings, ...self.bindings] }
  const allowed = and(holders, ruleCondition(ctx, 'deleteRule'))
  if (allowed === false) throw errors.forbidden()
  if (hasBeforeHook(ctx, 'beforeDelete')) {
    const key = ctx.table.key.map((f, i) => `${f.name} == ${literalText(ctx.dialect.decode(f, target[`${KEY_ALIAS}${i}`]) as Literal)}`).join(' & ')
    await beforeDelete({ ...ctx, db: trx }, `${column} == ${literalText(decoded as Literal)} & !(${key})`)
  }
  if ((await deleteStatement(ctx, trx, allowed, keyColumns(ctx))).length === 0) throw errors.forbidden()
}

/** One UPDATE statement; `or` IGNORE/REPLACE resolve unique conflicts the same way on both dialects. */
export async function updateStatement (ctx: CrudContext, trx: Knex.Transaction, set: Assignments, condition: Fragment | true, columns: OutputColumn[], or?: Conflict): Promise<Row[]> {
  if (or !== 'IGNORE' && or !== 'REPLACE') return await runUpdate(ctx, trx, set, condition, columns)
  return await updateResolvingConflicts(ctx, trx, set, condition, columns, or)
}

/** One DELETE statement, as raw SQL: Knex drops RETURNING from SQLite deletes. */
export async function deleteStatement (ctx: CrudContext, trx: Knex.Transaction, condition: Fragment | true, columns: OutputColumn[]): Promise<Row[]> {
  const bindings = condition === true ? [] : [...condition.bindings]
  const where = condition === true ? '' : ` WHERE ${condition.sql}`
  const capture = captureColumns(ctx)
  const rows = await runWriteStatement(trx, ctx.direct, `DELETE FROM ${ctx.table.quoted}${where}${returningSql(ctx, capture.length === 0 ? columns : [...columns, ...capture], bindings)}`, bindings)
  reportChange(ctx, trx, 'delete', capture, rows)
  return answered(columns, rows)
}
