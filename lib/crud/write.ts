// insert, update, edit and delete: each one transaction, rules enforced, values typed per column.
import type { Knex } from 'knex'
import type { TableField } from '../../schemas/config.js'
import type { Fragment } from '../dialects/types.js'
import { errors, addFieldError, type FieldErrors } from '../errors.js'
import { ValueError } from '../values.js'
import { newUid } from '../uid.js'
import { toFragment, ExpressionError, type Compiled } from '../expr/index.js'
import { and, applyCondition, ruleCondition, whereOf, idCondition, compileCaller, scopeOf, type CrudContext, type Condition } from './context.js'
import { outputColumns, selectList, decodeRow, type OutputColumn, type ListSpec } from './columns.js'
import type { HookContext } from '../table.js'
import { translateDbError } from './db-errors.js'

export type Conflict = 'ABORT' | 'FAIL' | 'IGNORE' | 'REPLACE' | 'ROLLBACK'
type Row = Record<string, unknown>

export interface InsertParams { values: Row | Row[], returning?: ListSpec, or?: Conflict }
export interface UpdateParams { where: string, set?: Record<string, string>, setValues?: Row, returning?: ListSpec, or?: Conflict }
export interface DeleteParams { where: string, returning?: ListSpec }
export interface EditQuery { returning?: ListSpec, or?: Conflict | 'INSERT' }

// Internal aliases for the key columns a write returns besides the caller's `returning`.
const KEY_ALIAS = 'fb_key_'

/** A field the caller may write: unknown -> 400, noInsert/noUpdate -> 403 (DECISIONS 25). */
function writableField (ctx: CrudContext, name: string, verb: 'insert' | 'update', fieldErrors: FieldErrors): TableField | undefined {
  const field = ctx.table.fields.get(name)
  if (field === undefined) {
    addFieldError(fieldErrors, name, 'Unknown field')
    return undefined
  }
  if (ctx.applyRules && (verb === 'insert' ? field.noInsert : field.noUpdate) === true) throw errors.cannotWrite(verb, name)
  return field
}

/** A value bound for a column; a value that does not fit is recorded as a field error. */
function valueFragment (ctx: CrudContext, field: TableField, value: unknown, fieldErrors: FieldErrors): Fragment {
  try {
    return ctx.dialect.literal(value ?? null, field)
  } catch (error) {
    if (!(error instanceof ValueError)) throw error
    addFieldError(fieldErrors, field.name, error.message)
    return { sql: 'NULL', bindings: [] }
  }
}

function raw (db: Knex, fragment: Fragment): Knex.Raw {
  return db.raw(fragment.sql, fragment.bindings as Knex.RawBinding[])
}

function throwIfErrors (fieldErrors: FieldErrors): void {
  if (Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
}

function keyColumns (ctx: CrudContext): OutputColumn[] {
  return ctx.table.key.map((f, i) => ({
    key: `${KEY_ALIAS}${i}`,
    fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(f.name)}`, bindings: [] },
    field: f,
    aggregate: false
  }))
}

/** Rows identified by their returned key values, as a condition. */
function keyCondition (ctx: CrudContext, rows: Row[]): Fragment {
  const parts = rows.map((row) => {
    const eqs = ctx.table.key.map((f, i) => {
      const lit = ctx.dialect.literal(ctx.dialect.decode(f, row[`${KEY_ALIAS}${i}`]), f)
      return { sql: `${ctx.table.quoted}.${ctx.dialect.quote(f.name)} = ${lit.sql}`, bindings: lit.bindings }
    })
    return { sql: `(${eqs.map((e) => e.sql).join(' AND ')})`, bindings: eqs.flatMap((e) => e.bindings) }
  })
  return { sql: parts.map((p) => p.sql).join(' OR '), bindings: parts.flatMap((p) => p.bindings) }
}

function withDb (ctx: CrudContext, db: Knex | Knex.Transaction): CrudContext {
  return { ...ctx, db }
}

/** Runs `work` in a transaction of its own (or a savepoint inside the caller's); database errors become 4xx/503. */
async function transaction<T> (ctx: CrudContext, written: Row[], work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await (ctx.db as Knex).transaction(work)
  } catch (error) {
    throw await translateDbError(ctx, error, written)
  }
}

// ---------------------------------------------------------------- insert

function insertRow (ctx: CrudContext, db: Knex, input: Row, fieldErrors: FieldErrors, system: Row): Record<string, Knex.Raw> {
  const row: Record<string, Knex.Raw> = {}
  for (const [name, value] of Object.entries(input)) {
    const field = writableField(ctx, name, 'insert', fieldErrors)
    if (field !== undefined) row[name] = raw(db, valueFragment(ctx, field, value, fieldErrors))
  }
  for (const [name, value] of Object.entries(system)) row[name] = raw(db, valueFragment(ctx, ctx.table.fields.get(name)!, value, fieldErrors))
  const { uid, created, updated } = ctx.table
  if (uid !== undefined && ctx.table.data.autoSetUid === true && (input[uid.name] === undefined || input[uid.name] === null || input[uid.name] === '')) {
    row[uid.name] = raw(db, ctx.dialect.literal(newUid(), uid))
  }
  // Timestamps are set here, not by triggers, so they hold on both dialects whatever the DDL says.
  for (const field of [created, updated]) {
    if (field !== undefined && input[field.name] === undefined) row[field.name] = db.raw(ctx.dialect.now())
  }
  return row
}

export async function insert (ctx: CrudContext, params: InsertParams): Promise<Row[]> {
  const inputs = Array.isArray(params.values) ? params.values : [params.values]
  if (inputs.length === 0) return []
  const createRule = ruleCondition(ctx, 'createRule', { newValues: 'row' })
  if (createRule === false) throw errors.forbidden()
  const db = ctx.db as Knex
  const fieldErrors: FieldErrors = {}
  const hooks = ctx.table.writeHooks
  const prepared = hooks === undefined ? inputs.map((values) => ({ values, system: {} })) : await hooks.beforeInsert(hookContext(ctx), inputs)
  const rows = prepared.map((p) => insertRow(ctx, db, p.values, fieldErrors, p.system))
  throwIfErrors(fieldErrors)
  const columns = params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning)
  const keys = keyColumns(ctx)
  const returned = await transaction(ctx, inputs, async (trx) => {
    const tctx = withDb(ctx, trx)
    const result: Row[] = []
    for (const batch of statementBatches(rows)) {
      result.push(...await insertStatement(tctx, trx, batch, params.or, [...columns, ...keys]))
    }
    if (params.or === 'REPLACE' && !ctx.auth.admin && ctx.applyRules && result.length < rows.length) throw errors.forbidden()
    await resyncIdentities(tctx, trx, inputs)
    await checkCreated(tctx, trx, createRule, result)
    return result
  })
  // Without `returning` the answer is [] (DECISIONS 27); the key columns were only for the rule check.
  return params.returning === undefined ? [] : returned.map((row) => decodeRow(ctx, columns, row))
}

// Bound values per statement, under SQLite's and PostgreSQL's parameter limits (32766 / 65535), and rows
// per statement under SQLite's 500 compound-select terms (Knex writes multi-row SQLite inserts as UNION ALL).
const MAX_BINDINGS = 10_000
const MAX_ROWS = 500

/** Rows naming the same columns share a statement (a row with other columns would lose its defaults), in chunks. */
function statementBatches (rows: Record<string, Knex.Raw>[]): Record<string, Knex.Raw>[][] {
  const sameShape = rows.every((r) => Object.keys(r).join() === Object.keys(rows[0]).join())
  if (!sameShape) return rows.map((r) => [r])
  const size = Math.min(MAX_ROWS, Math.max(1, Math.floor(MAX_BINDINGS / Math.max(1, Object.keys(rows[0]).length))))
  const batches: Record<string, Knex.Raw>[][] = []
  for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size))
  return batches
}

function insertStatement (ctx: CrudContext, trx: Knex.Transaction, rows: Record<string, Knex.Raw>[], or: Conflict | undefined, columns: OutputColumn[]): Promise<Row[]> {
  let query: Knex.QueryBuilder = trx(ctx.table.name).insert(rows)
  if (or === 'IGNORE') {
    query = (query as Knex.QueryBuilder).onConflict().ignore() as unknown as Knex.QueryBuilder
  } else if (or === 'REPLACE') {
    query = upsert(ctx, trx, query, Object.keys(rows[0]))
  }
  return (columns.length > 0 ? query.returning(selectList(trx, ctx, columns)) : query).then((r: unknown) => (Array.isArray(r) ? r : []) as Row[])
}

/** REPLACE = upsert on the key (DECISIONS 6); an existing row must pass the updateRule to be replaced. */
function upsert (ctx: CrudContext, trx: Knex.Transaction, query: Knex.QueryBuilder, written: string[]): Knex.QueryBuilder {
  if (ctx.table.key.length === 0) throw errors.badRequest('or=REPLACE needs a table with a primary key')
  const keyNames = ctx.table.key.map((f) => f.name)
  const created = ctx.table.created?.name
  const merged = written.filter((name) => !keyNames.includes(name) && name !== created)
  if (merged.length === 0) return query.onConflict(keyNames).ignore() as unknown as Knex.QueryBuilder
  const newValues = new Map<string, Compiled>(merged.map((name) => [name, { kind: 'sql', sql: `excluded.${ctx.dialect.quote(name)}`, bindings: [], field: ctx.table.fields.get(name) }]))
  const set = Object.fromEntries(merged.map((name) => [name, trx.raw(`excluded.${ctx.dialect.quote(name)}`)]))
  const rule = ruleCondition(ctx, 'updateRule', { newValues })
  if (rule === false) return query.onConflict(keyNames).ignore() as unknown as Knex.QueryBuilder
  const merge = query.onConflict(keyNames).merge(set)
  return (rule === true ? merge : merge.whereRaw(rule.sql, rule.bindings as Knex.RawBinding[])) as unknown as Knex.QueryBuilder
}

async function resyncIdentities (ctx: CrudContext, trx: Knex.Transaction, inputs: Row[]): Promise<void> {
  for (const field of ctx.table.fieldList) {
    if (field.autoIncrement !== true || !inputs.some((row) => row[field.name] !== undefined && row[field.name] !== null)) continue
    const sql = ctx.dialect.resyncIdentity(ctx.table.quoted, field.name)
    if (sql !== undefined) await trx.raw(sql)
  }
}

/** createRule on the inserted rows, defaults applied (DECISIONS 4): one failing row fails the batch. */
async function checkCreated (ctx: CrudContext, trx: Knex.Transaction, rule: Condition, rows: Row[]): Promise<void> {
  if (rule === true || rows.length === 0) return
  const passing = await applyCondition(trx.from(ctx.table.name).count({ n: '*' }), and(keyCondition(ctx, rows), rule) as Fragment)
  if (Number((passing as Row[])[0].n) !== rows.length) throw errors.forbidden()
}

// ---------------------------------------------------------------- update

interface Assignments { set: Map<string, Fragment>, newValues: Map<string, Compiled> }

function hookContext (ctx: CrudContext): HookContext {
  return { admin: ctx.auth.admin, uid: ctx.auth.uid, applyRules: ctx.applyRules }
}

function assignments (ctx: CrudContext, params: Pick<UpdateParams, 'set' | 'setValues'>, system: Row): Assignments {
  const fieldErrors: FieldErrors = {}
  const set = new Map<string, Fragment>()
  const newValues = new Map<string, Compiled>()
  for (const [name, value] of Object.entries(system)) {
    const field = ctx.table.fields.get(name)!
    set.set(name, valueFragment(ctx, field, value, fieldErrors))
  }
  for (const [name, value] of Object.entries(params.setValues ?? {})) {
    const field = writableField(ctx, name, 'update', fieldErrors)
    if (field === undefined) continue
    const fragment = valueFragment(ctx, field, value, fieldErrors)
    set.set(name, fragment)
    newValues.set(name, { kind: 'sql', ...fragment, field })
  }
  for (const [name, text] of Object.entries(params.set ?? {})) {
    const field = writableField(ctx, name, 'update', fieldErrors)
    if (field === undefined) continue
    if (ctx.table.writeHooks?.notSettable.has(name) === true) {
      addFieldError(fieldErrors, name, 'Can only be written with setValues')
      continue
    }
    if (set.has(name)) {
      addFieldError(fieldErrors, name, 'Given in both set and setValues')
      continue
    }
    const compiled = compileCaller(ctx, `set.${name}`, text)
    let fragment: Fragment
    try {
      fragment = toFragment(compiled, scopeOf(ctx), field)
    } catch (error) {
      if (error instanceof ExpressionError) throw errors.expression(`set.${name}`, error.message)
      throw error
    }
    set.set(name, fragment)
    newValues.set(name, { kind: 'sql', ...fragment, field })
  }
  throwIfErrors(fieldErrors)
  if (set.size === 0) throw errors.badRequest('Nothing to update: give at least one field in set or setValues')
  const updated = ctx.table.updated
  if (updated !== undefined && !set.has(updated.name)) set.set(updated.name, { sql: ctx.dialect.now(), bindings: [] })
  return { set, newValues }
}

async function runUpdate (ctx: CrudContext, trx: Knex.Transaction, a: Assignments, condition: Fragment | true, columns: OutputColumn[]): Promise<Row[]> {
  const values = Object.fromEntries([...a.set].map(([name, f]) => [name, raw(trx, f)]))
  const query = applyCondition(trx(ctx.table.name).update(values), condition)
  const result: unknown = await (columns.length > 0 ? query.returning(selectList(trx, ctx, columns)) : query)
  return Array.isArray(result) ? result as Row[] : []
}

export async function update (ctx: CrudContext, params: UpdateParams, extra?: Fragment): Promise<Row[]> {
  const hooks = ctx.table.writeHooks
  const hooked = hooks === undefined || params.setValues === undefined ? undefined : await hooks.beforeUpdate(hookContext(ctx), params.setValues)
  const a = assignments(ctx, hooked === undefined ? params : { ...params, setValues: hooked.values }, hooked?.system ?? {})
  // A password change through the table API reaches only the caller's own record.
  const own = hooked?.onlyUid === undefined ? true : idCondition(ctx, hooked.onlyUid)
  const condition = and(whereOf(ctx, params.where, { newValues: a.newValues }), extra ?? true, own, ruleCondition(ctx, 'updateRule', { newValues: a.newValues }))
  if (condition === false) return []
  const columns = params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning)
  const rows = await transaction(ctx, [params.setValues ?? {}], async (trx) => {
    if (params.or !== 'IGNORE' && params.or !== 'REPLACE') return await runUpdate(ctx, trx, a, condition, columns)
    return await updateResolvingConflicts(ctx, trx, a, condition, columns, params.or)
  })
  return rows.map((row) => decodeRow(ctx, columns, row))
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
        if (attempt > ctx.table.fieldList.length || violation.column === undefined || !a.set.has(violation.column)) throw errors.forbidden()
        await deleteHolders(ctx, trx, a, self, violation.column)
      }
    }
  }
  return result
}

/** Deletes the other rows whose `column` equals the value the update gives row `self`, within the deleteRule. */
async function deleteHolders (ctx: CrudContext, trx: Knex.Transaction, a: Assignments, self: Fragment, column: string): Promise<void> {
  const field = ctx.table.fields.get(column)!
  const assigned = a.set.get(column)!
  const [{ v }] = await trx.from(ctx.table.name).select(trx.raw(`${assigned.sql} AS v`, assigned.bindings as Knex.RawBinding[])).whereRaw(self.sql, self.bindings as Knex.RawBinding[])
  const value = ctx.dialect.literal(ctx.dialect.decode(field, v), field)
  const holders = { sql: `${ctx.table.quoted}.${ctx.dialect.quote(column)} = ${value.sql} AND NOT (${self.sql})`, bindings: [...value.bindings, ...self.bindings] }
  const allowed = and(holders, ruleCondition(ctx, 'deleteRule'))
  const deleted = allowed === false ? 0 : await applyCondition(trx(ctx.table.name).del(), allowed)
  if (deleted === 0) throw errors.forbidden()
}

// ---------------------------------------------------------------- edit

/** Update one record by id (404 when missing or hidden); `or=INSERT` creates it when it does not exist. */
export async function edit (ctx: CrudContext, id: string, body: Row, query: EditQuery): Promise<Row> {
  const uid = ctx.table.uid
  if (uid === undefined) throw errors.recordNotFound()
  if (Object.keys(body).length === 0) throw errors.badRequest('Nothing to update: the body names no field')
  const returning = query.returning ?? uid.name
  const byId = idCondition(ctx, id)
  if (query.or === 'INSERT') {
    return await transaction(ctx, [body], async (trx) => {
      const tctx = withDb(ctx, trx)
      const exists = await trx.from(ctx.table.name).select(trx.raw('1 AS one')).whereRaw(byId.sql, byId.bindings as Knex.RawBinding[]).limit(1)
      if (exists.length === 0) {
        const inserted = await insert(tctx, { values: { ...body, [uid.name]: uid.type === 'integer' ? Number(id) : id }, returning })
        return inserted[0]
      }
      return await editExisting(tctx, byId, body, returning)
    })
  }
  return await editExisting(ctx, byId, body, returning, query.or)
}

async function editExisting (ctx: CrudContext, byId: Fragment, body: Row, returning: ListSpec, or?: Conflict): Promise<Row> {
  const rows = await update(ctx, { where: '', setValues: body, returning, or }, byId)
  if (rows.length === 0) throw errors.recordNotFound()
  return rows[0]
}

// ---------------------------------------------------------------- delete

export async function remove (ctx: CrudContext, params: DeleteParams): Promise<Row[]> {
  const condition = and(whereOf(ctx, params.where), ruleCondition(ctx, 'deleteRule'))
  if (condition === false) return []
  const columns = params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning)
  // Raw SQL: Knex drops RETURNING from SQLite deletes.
  const where = condition === true ? { sql: '', bindings: [] } : { sql: ` WHERE ${condition.sql}`, bindings: condition.bindings }
  const returning = columns.length === 0 ? '' : ` RETURNING ${columns.map((c) => `${c.fragment.sql} AS ${ctx.dialect.quote(c.key)}`).join(', ')}`
  const bindings = [...where.bindings, ...columns.flatMap((c) => c.fragment.bindings)] as Knex.RawBinding[]
  const rows = await transaction(ctx, [], async (trx) =>
    ctx.dialect.rawRows(await trx.raw(`DELETE FROM ${ctx.table.quoted}${where.sql}${returning}`, bindings)))
  return rows.map((row) => decodeRow(ctx, columns, row))
}
