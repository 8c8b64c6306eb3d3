// insert, update, edit and delete: each one transaction, rules enforced, values typed per column.
// Planned or not, every insert ends in writeInsert and every update, edit and delete in writeChange:
// a plan (write-plans.ts) only holds the decisions, and the values are checked and bound by the same
// code either way (write-values.ts); before-hooks.ts runs every before-hook.
import type { Knex } from 'knex'
import type { TableField } from '../../schemas/config.js'
import type { Binding, Fragment } from '../dialects/types.js'
import { errors, type FieldErrors } from '../errors.js'
import { rowsFor } from '../limits.js'
import { newUid } from '../uid.js'
import { and, applyCondition, ruleCondition, ruleFirst, whereOf, idCondition, idValue, type CrudContext, type Condition } from './context.js'
import { outputColumns, decodeRow, columnWidth, type ListSpec, type OutputColumn } from './columns.js'
import { fileFields } from '../files/tracker.js'
import { translateDbError, isUniqueViolation } from './db-errors.js'
import { beforeBatch, beforeDelete, beforeInsert, beforeUpdate, hasBeforeHook, inHookTransaction, needsHookTransaction, type FlowWrite } from './before-hooks.js'
import { raw, keyColumns, keyCondition, keptColumns, matchCondition, metKey, uniqueKeys, statementBatches, insertStatement, updateStatement, deleteStatement, captureColumns, capturesBefore, stampedOnInsert, reportChange, reportLoneInsert, reportLoneUpdate, writeSpan, type Conflict } from './statements.js'
import { insertPlan, editPlan, UNPLANNED, MAX_PLANNED_BINDINGS, MAX_PLANNED_ROWS, type InsertPlan } from './write-plans.js'
import { fillSlots } from './plan-cache.js'
import { assertAssurance } from './write-gate.js'
import { decidedBeforeWriting } from './create-precheck.js'
import { runWriteStatement } from '../db/statement.js'
import { assertReferencesViewable, checkedReferences, COMPUTED } from './references.js'
import { andThen, type MaybePromise } from '../maybe-async.js'
import { assignments, compiledValue, encoded, fileValue, plannableFiles, refuseLocked, SKIP, throwIfErrors, valueFragment, writableField, type UpdateGiven } from './write-values.js'

export type { Conflict } from './statements.js'

type Row = Record<string, unknown>

export interface InsertParams {
  values: Row | Row[]
  /** Per-column expressions (action steps): one map for every row, or one per row. */
  expr?: Record<string, string> | Array<Record<string, string>>
  returning?: ListSpec
  or?: Conflict
}
export interface UpdateParams extends UpdateGiven {
  where: string
  returning?: ListSpec
  or?: Conflict
  /** The rows the condition names must be changed: none (refused by the updateRule) is 403 (an upsert's update). */
  mustChange?: boolean
}
export interface DeleteParams { where: string, returning?: ListSpec }
export interface EditQuery { returning?: ListSpec, or?: Conflict | 'INSERT' }

function withDb (ctx: CrudContext, db: Knex): CrudContext {
  return { ...ctx, db }
}

/**
 * Runs `work` in a transaction of its own (or a savepoint inside the caller's); database errors become
 * 4xx/503. A write that is one statement is atomic already: `needed` false runs it without BEGIN/COMMIT,
 * on the caller's connection (only hooks' `after`, which forces `needed`, needs a real transaction),
 * and a SQLite statement's rows then come back at once, with no promise (decision D109).
 */
function transaction<T> (ctx: CrudContext, written: Row[], work: (trx: Knex.Transaction) => MaybePromise<T>, needed = true): MaybePromise<T> {
  // The error handler is made where an error may come, not on every write.
  if (needed) return ctx.db.transaction(async (trx) => await work(trx)).catch(async (error: unknown) => await translated(ctx, written, error))
  let result: MaybePromise<T>
  try {
    result = work(ctx.db as Knex.Transaction)
  } catch (error) {
    return translated(ctx, written, error)
  }
  return result instanceof Promise ? result.catch(async (error: unknown) => await translated(ctx, written, error)) : result
}

/** A write's database error as the answer it gives (4xx/503). */
async function translated (ctx: CrudContext, written: Row[], error: unknown): Promise<never> {
  throw await translateDbError(ctx, error, written)
}

// ---------------------------------------------------------------- insert

function insertRow (ctx: CrudContext, db: Knex, input: Row, fieldErrors: FieldErrors, system: Row): Record<string, Knex.Raw> {
  const row: Record<string, Knex.Raw> = {}
  for (const [name, given] of Object.entries(input)) {
    const field = writableField(ctx, name, 'insert', fieldErrors)
    const value = field === undefined ? SKIP : fileValue(ctx, field, given, fieldErrors)
    if (field !== undefined && value !== SKIP) row[name] = raw(db, valueFragment(ctx, field, value, fieldErrors))
  }
  for (const [name, value] of Object.entries(system)) row[name] = raw(db, valueFragment(ctx, ctx.table.fields.get(name)!, value, fieldErrors))
  const uid = ctx.table.uid
  if (uid !== undefined && generatesUid(ctx, input)) row[uid.name] = raw(db, ctx.dialect.literal(newUid(), uid))
  for (const field of stampedOnInsert(ctx, (f) => input[f.name] !== undefined)) row[field.name] = db.raw(ctx.dialect.now())
  return row
}

/** An autoSetUid table gives a row without a uid a new one. */
function generatesUid (ctx: CrudContext, input: Row): boolean {
  const uid = ctx.table.uid
  return uid !== undefined && ctx.table.data.autoSetUid === true && (input[uid.name] === undefined || input[uid.name] === null || input[uid.name] === '')
}

/**
 * Expression-valued columns of an inserted row (no row to read yet: constants, `auth.*`, `params.*`);
 * what each writes is recorded in `written` (its value, or COMPUTED) for the reference check.
 */
function exprColumns (ctx: CrudContext, db: Knex, exprs: Record<string, string> | undefined, fieldErrors: FieldErrors, written: Row): Record<string, Knex.Raw> {
  const row: Record<string, Knex.Raw> = {}
  for (const [name, text] of Object.entries(exprs ?? {})) {
    const field = writableField(ctx, name, 'insert', fieldErrors)
    if (field === undefined) continue
    const value = compiledValue(ctx, `expr.${name}`, text, field)
    row[name] = raw(db, value)
    written[name] = value.constant ? value.value : COMPUTED
  }
  return row
}

/**
 * Inserts rows; a planned insert on SQLite answers at once (decision D109), any other is a promise.
 * `flow`: an auth flow's own write of one row (lib/auth/user-writes.ts, decision D143), never a
 * caller's; it has hooks to run (an auth table's own), so no plan takes it, and no conflict clause.
 */
export function insert (ctx: CrudContext, params: InsertParams, flow?: FlowWrite): MaybePromise<Row[]> {
  assertAssurance(ctx)
  const expr = Array.isArray(params.expr) ? params.expr : params.expr === undefined ? [] : [params.expr]
  const inputs = Array.isArray(params.values) ? [...params.values] : [params.values]
  // Rows given only by expressions still need one (empty) values object each.
  while (inputs.length < expr.length) inputs.push({})
  if (inputs.length === 0) return []
  if (params.or === 'REPLACE') return upsert(ctx, params, inputs)
  const names = plannedNames(ctx, params, inputs)
  const plan = names === undefined ? UNPLANNED : insertPlan(ctx, names, params.returning)
  if (plan !== UNPLANNED) return plannedInsert(ctx, plan, params, inputs)
  return unplannedInsert(ctx, params, inputs, expr, flow)
}

/**
 * An insert no plan covers (expressions, hooks, a conflict clause, rows of different shapes, an
 * identity value): its values through the hooks, then checked and written by `writeInsert`.
 */
async function unplannedInsert (ctx: CrudContext, params: InsertParams, inputs: Row[], expr: Array<Record<string, string>>, flow: FlowWrite | undefined): Promise<Row[]> {
  const sqlRule = ruleCondition(ctx, 'createRule', { newValues: 'row' })
  if (sqlRule === false) throw errors.forbidden()
  refuseLocked(ctx, [...inputs, ...expr].flatMap(Object.keys), 'insert')
  if (needsHookTransaction(ctx, 'beforeInsert')) return await inHookTransaction(ctx, async (tctx) => await insert(tctx, params, flow))
  const db = ctx.db
  const fieldErrors: FieldErrors = {}
  const prepared = await beforeInsert(ctx, inputs, flow)
  const written = prepared.map((p) => ({ ...p.values }))
  const rows = prepared.map((p, i) => ({ ...insertRow(ctx, db, p.values, fieldErrors, p.system), ...exprColumns(ctx, db, Array.isArray(params.expr) ? params.expr[i] : params.expr, fieldErrors, written[i]) }))
  throwIfErrors(fieldErrors)
  const keys = keyColumns(ctx)
  const batches = statementBatches(rows)
  const explicitIdentity = ctx.table.fieldList.some((f) => f.autoIncrement === true && inputs.some((row) => row[f.name] !== undefined && row[f.name] !== null))
  return await writeInsert(ctx, inputs, {
    createRule: sqlRule,
    decidable: params.expr === undefined ? prepared.map((p) => p.values) : undefined,
    answer: () => params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning),
    asIs: false,
    referenced: written.flatMap(Object.keys),
    written,
    several: batches.length > 1 || explicitIdentity,
    statements: async (trx, columns) => {
      const tctx = withDb(ctx, trx)
      const result: Row[] = []
      for (const batch of batches) result.push(...await insertStatement(tctx, trx, batch, params.or, [...columns, ...keys]))
      await resyncIdentities(tctx, trx, inputs)
      return result
    }
  }, params.returning)
}

/** An insert once its values are checked, planned or not: what it writes, and how. */
interface InsertWrite {
  /** The createRule for this caller, its slots filled; `decidable` rows decide it before writing where they can. */
  createRule: Condition
  decidable: Row[] | undefined
  /** The answer's columns, read after the values were checked (a bad list is answered after bad values). */
  answer: () => OutputColumn[]
  /** The statements' rows are the answer as they are (write-plans.ts#InsertPlan.asIs, nothing captured). */
  asIs: boolean
  /** The fields each row writes, and what it writes there (a value, or COMPUTED): for the reference check. */
  referenced: readonly string[]
  written: readonly Row[]
  /** The statements need a transaction even when no rule is checked after them. */
  several: boolean
  /** Runs the statements: the rows come back with the answer's columns and the key columns. */
  statements: (trx: Knex.Transaction, columns: OutputColumn[]) => MaybePromise<Row[]>
}

/**
 * Every insert ends here: the createRule decided on the values where it can be, the answer's size
 * bounded, the references checked, then the statements, with the createRule checked on the inserted
 * rows (defaults applied) in the same transaction when it was not decided. With nothing to look up
 * first and one statement, a SQLite insert answers at once (decision D109).
 */
function writeInsert (ctx: CrudContext, inputs: Row[], w: InsertWrite, returning: ListSpec | undefined): MaybePromise<Row[]> {
  const createRule = w.createRule === true || w.decidable === undefined ? w.createRule : decidedBeforeWriting(ctx, w.decidable) ?? w.createRule
  if (createRule === false) throw errors.forbidden()
  const columns = w.answer()
  checkCells(ctx, inputs.length, columnWidth(columns))
  const write = (): MaybePromise<Row[]> => transaction(ctx, inputs, (trx) => {
    const inserted = w.statements(trx, columns)
    if (createRule === true) return inserted
    return Promise.resolve(inserted).then(async (result) => { await checkCreated(withDb(ctx, trx), trx, createRule, result); return result })
  }, createRule !== true || w.several)
  const references = checkedReferences(ctx, w.referenced)
  const returned = references.length === 0 ? write() : assertReferencesViewable(ctx, ctx.db, references, w.written).then(write)
  // Without `returning` the answer is [] (decision D27); the key columns were only for the rule check.
  return andThen(returned, (rows) => returning === undefined ? [] : w.asIs ? rows : rows.map((row) => decodeRow(ctx, columns, row)))
}

/**
 * The names of the fields every row gives, when the insert can run from a plan (lib/crud/write-plans.ts):
 * plain values naming the same known fields, file fields given a file of this request or cleared
 * (plannableFiles), no identity value (its sequence is resynced after), no expressions, no conflict
 * clause, no write hooks.
 */
function plannedNames (ctx: CrudContext, params: InsertParams, inputs: Row[]): string[] | undefined {
  if (params.expr !== undefined || params.or === 'IGNORE' || hasBeforeHook(ctx, 'beforeInsert')) return undefined
  const names = Object.keys(inputs[0])
  if (names.length === 0 || inputs.length > MAX_PLANNED_ROWS || inputs.length * (names.length + 3) > MAX_PLANNED_BINDINGS) return undefined
  let files = false
  for (const name of names) {
    const field = ctx.table.fields.get(name)
    if (field === undefined || field.autoIncrement === true) return undefined
    if (field.type === 'file') files = true
  }
  for (let i = 1; i < inputs.length; i++) {
    const other = Object.keys(inputs[i])
    if (other.length !== names.length || other.some((name, j) => name !== names[j])) return undefined
  }
  return !files || plannableFiles(ctx, names, inputs) ? names : undefined
}

/** An insert from its plan: the values encoded for the plan's fields, the plan's statement, written by `writeInsert`. */
function plannedInsert (ctx: CrudContext, plan: InsertPlan, params: InsertParams, inputs: Row[]): MaybePromise<Row[]> {
  if (plan.createRule === false) throw errors.forbidden()
  const fieldErrors: FieldErrors = {}
  const values: Binding[] = []
  for (const row of inputs) {
    const start = values.length
    for (const field of plan.fields) values.push(encoded(ctx, field, fileValue(ctx, field, row[field.name], fieldErrors), fieldErrors))
    const uid = plan.uid
    if (uid !== undefined && generatesUid(ctx, row)) {
      const fresh = encoded(ctx, uid.field, newUid(), fieldErrors)
      if (uid.given < 0) values.push(fresh)
      else values[start + uid.given] = fresh
    }
  }
  throwIfErrors(fieldErrors)
  const captured = captureColumns(ctx)
  return writeInsert(ctx, inputs, {
    createRule: plan.createRule === true ? true : { sql: plan.createRule.sql, bindings: fillSlots(ctx, plan.createRule.bindings) },
    decidable: inputs,
    answer: plan.answer,
    asIs: plan.asIs && captured.length === 0,
    referenced: plan.names,
    written: inputs,
    several: false,
    statements: (trx) => {
      const planned = inputs.length === 1 ? plan.single(captured.length > 0) : plan.returning(captured.length > 0)
      const sql = inputs.length === 1 ? planned.sql : `${plan.head}${Array(inputs.length).fill(plan.tuple).join(', ')}${planned.sql}`
      const span = writeSpan(ctx)
      return andThen(runWriteStatement(trx, ctx.direct, sql, planned.bindings.length === 0 ? values : [...values, ...fillSlots(ctx, planned.bindings)], span), (result) => {
        reportChange(ctx, trx, 'insert', captured, result)
        reportLoneInsert(ctx, span, result, plan.keyAt)
        return result
      })
    }
  }, params.returning)
}

// ---------------------------------------------------------------- upsert

/**
 * REPLACE (and edit?or=INSERT, which comes here): each row that meets an existing row on one of its
 * unique keys UPDATES that row through `update`, so every update rule holds exactly as there: the
 * updateRule with `new.*` (a row it refuses is 403), noUpdate, the update hooks (current password,
 * sessions ended, email unverified). A row that meets none is an ordinary insert (createRule, noInsert,
 * the insert hooks). A row inserted by someone else between the look-up and the insert is met again
 * and updated.
 */
async function upsert (ctx: CrudContext, params: InsertParams, inputs: Row[]): Promise<Row[]> {
  // An upsert would drop the replaced row's file without releasing it.
  if (inputs.some((row) => fileFields(ctx.table).some((f) => row[f.name] !== undefined))) throw errors.badRequest('or=REPLACE cannot write file fields')
  beforeBatch(ctx, inputs)
  const exprs = inputs.map((_, i) => Array.isArray(params.expr) ? params.expr[i] : params.expr)
  const returned = await transaction(ctx, inputs, async (trx) => {
    const tctx = withDb(ctx, trx)
    const result: Row[] = []
    for (const [i, values] of inputs.entries()) result.push(...await upsertRow(tctx, trx, values, exprs[i], params.returning))
    return result
  })
  return params.returning === undefined ? [] : returned
}

async function upsertRow (ctx: CrudContext, trx: Knex.Transaction, values: Row, expr: Record<string, string> | undefined, returning: ListSpec | undefined): Promise<Row[]> {
  const keyValues = keyFragments(ctx, trx, values, expr)
  const keys = uniqueKeys(ctx, Object.keys(keyValues))
  // A row whose only key is the uid it is about to be given meets nothing.
  const uid = ctx.table.uid
  const fresh = keys.length === 0 && uid !== undefined && generatesUid(ctx, values) && uniqueKeys(ctx, [uid.name]).length > 0
  if (keys.length === 0 && !fresh) throw errors.badRequest('or=REPLACE needs the values of a primary key or unique field to find the row to replace')
  let target = fresh ? undefined : await metKey(ctx, trx, keyValues, keys)
  if (target === undefined) {
    try {
      return await trx.transaction(async (sp) => await insert(withDb(ctx, sp), { values, expr, returning }))
    } catch (error) {
      if (!isUniqueViolation(ctx, error) || fresh) throw error
      target = await metKey(ctx, trx, keyValues, keys)
      if (target === undefined) throw error
    }
  }
  const kept = keptColumns(ctx, target)
  const setValues = Object.fromEntries(Object.entries(values).filter(([name]) => !kept.has(name)))
  const set = Object.fromEntries(Object.entries(expr ?? {}).filter(([name]) => !kept.has(name)))
  if (Object.keys(setValues).length === 0 && Object.keys(set).length === 0) throw errors.badRequest('or=REPLACE: the values hold only the keys of the record they meet, so there is nothing to update')
  return await update(ctx, { where: '', setValues, set, setFromConfig: true, returning, mustChange: true }, matchCondition(ctx, keyValues, target))
}

/** The values (or action-step expressions) `row` gives the fields of its unique keys, as SQL. */
function keyFragments (ctx: CrudContext, db: Knex.Transaction, values: Row, expr: Record<string, string> | undefined): Record<string, Knex.Raw> {
  const fieldErrors: FieldErrors = {}
  const given = uniqueKeys(ctx, [...Object.keys(values), ...Object.keys(expr ?? {})]).flat()
  const row: Record<string, Knex.Raw> = {}
  for (const name of new Set(given)) {
    const field = ctx.table.fields.get(name)!
    row[name] = raw(db, expr?.[name] !== undefined ? compiledValue(ctx, `expr.${name}`, expr[name], field) : valueFragment(ctx, field, values[name], fieldErrors))
  }
  throwIfErrors(fieldErrors)
  return row
}

async function resyncIdentities (ctx: CrudContext, trx: Knex.Transaction, inputs: Row[]): Promise<void> {
  for (const field of ctx.table.fieldList) {
    if (field.autoIncrement !== true || !inputs.some((row) => row[field.name] !== undefined && row[field.name] !== null)) continue
    const sql = ctx.dialect.resyncIdentity(ctx.table.quoted, field.name)
    if (sql !== undefined) await trx.raw(sql)
  }
}

/** createRule on the inserted rows, defaults applied (decision D4): one failing row fails the batch. */
async function checkCreated (ctx: CrudContext, trx: Knex.Transaction, rule: Condition, rows: Row[]): Promise<void> {
  if (rule === true || rows.length === 0) return
  const passing = await applyCondition(trx.from(ctx.table.name).count({ n: '*' }), and(keyCondition(ctx, rows), rule) as Fragment)
  if (Number((passing as Row[])[0].n) !== rows.length) throw errors.forbidden()
}

// ---------------------------------------------------------------- answer size

/** rows x returning columns of a write's answer stay within `limits.cells` (decision D38). */
function checkCells (ctx: CrudContext, rows: number, columns: number): void {
  if (columns > 0 && rows * columns > ctx.limits.cells) {
    throw errors.badRequest(`returning ${rows} rows of ${columns} columns is more than the ${ctx.limits.cells} values one answer may hold: return fewer columns or change fewer rows per request`)
  }
}

/** Before an update or delete with `returning`: count, up to one past the bound, the rows it would change. */
async function checkReturningCells (ctx: CrudContext, trx: Knex.Transaction, condition: Fragment | true, columns: number): Promise<void> {
  if (columns === 0) return
  const matching = applyCondition(trx.from(ctx.table.name).select(trx.raw('1 AS one')), condition).limit(rowsFor(ctx.limits, columns) + 1)
  const [{ n }] = await trx.count({ n: '*' }).from(matching.as('fb_matching')) as Row[]
  checkCells(ctx, Number(n), columns)
}

// ---------------------------------------------------------------- update

/** Updates the rows `where` names. `flow`: an auth flow's own write (lib/auth/user-writes.ts, decision D143), never a caller's. */
export async function update (ctx: CrudContext, params: UpdateParams, extra?: Fragment, flow?: FlowWrite): Promise<Row[]> {
  assertAssurance(ctx)
  refuseLocked(ctx, [...Object.keys(params.setValues ?? {}), ...Object.keys(params.set ?? {})], 'update')
  if (needsHookTransaction(ctx, 'beforeUpdate')) return await inHookTransaction(ctx, async (tctx) => await update(tctx, params, extra, flow))
  const hooked = await beforeUpdate(ctx, params.setValues, params.set, params.where, flow)
  const a = assignments(ctx, { ...params, setValues: hooked.values }, hooked.system, undefined, flow?.defaults)
  // A password change through the table API reaches only the caller's own record.
  const own = hooked.onlyUid === undefined ? true : idCondition(ctx, hooked.onlyUid)
  const condition = and(extra ?? true, own, ruleFirst(ruleCondition(ctx, 'updateRule', { newValues: a.newValues }), whereOf(ctx, params.where, { newValues: a.newValues })))
  if (condition === false) {
    if (params.mustChange === true) throw errors.forbidden()
    return []
  }
  const columns = params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning)
  // The changed rows' uids, for a hook that acts on them, and their keys, to count them.
  const after = hooked.after
  const internal = [...(after === undefined ? [] : uidColumn(ctx)), ...(params.mustChange === true ? keyColumns(ctx) : [])]
  // edit (`extra` = one id) changes one row at most.
  const countFirst = extra === undefined && columns.length > 0
  const rows = await writeChange(ctx, {
    given: [params.setValues ?? {}],
    changing: () => condition,
    counted: countFirst ? columnWidth(columns) : 0,
    released: ctx.files === undefined ? [] : fileFields(ctx.table).filter((f) => a.set.has(f.name)),
    referenced: Object.keys(a.written),
    written: [a.written],
    transaction: params.or === 'IGNORE' || params.or === 'REPLACE' || after !== undefined || capturesBefore(ctx, a.set.keys()),
    statement: async (trx) => {
      const changed = await updateStatement(ctx, trx, a.set, condition, [...columns, ...internal], params.or)
      if (params.mustChange === true && changed.length === 0) throw errors.forbidden()
      await after?.(trx, changed.map((row) => String(row[UID_ALIAS])))
      return changed
    }
  })
  return rows.map((row) => decodeRow(ctx, columns, row))
}

/** An update, edit or delete once decided, planned or not: which rows it changes, what it writes, and how. */
interface ChangeWrite {
  /** The values given, for the answer to a database error. */
  given: Row[]
  /** The condition of the rows it changes (slots filled), read first to count them or to release their files. */
  changing: () => Fragment | true
  /** The width of the answer's rows, when they are counted against `limits.cells` first (0: not counted). */
  counted: number
  /** The file fields whose current files the change orphans. */
  released: TableField[]
  /** The fields written, and what they are given (a value, or COMPUTED): for the reference check. */
  referenced: readonly string[]
  written: readonly Row[]
  /** The statement needs a transaction even when nothing is read before it. */
  transaction: boolean
  statement: (trx: Knex.Transaction) => MaybePromise<Row[]>
}

/**
 * Every update, edit and delete ends here: the references checked, then, in one transaction, the
 * changed rows counted and their files released where it must be, and the statement. A lone
 * statement needs no transaction, and on SQLite answers at once (decision D109).
 */
function writeChange (ctx: CrudContext, w: ChangeWrite): MaybePromise<Row[]> {
  const first = w.counted > 0 || w.released.length > 0
  const write = (): MaybePromise<Row[]> => transaction(ctx, w.given, !first
    ? w.statement
    : async (trx) => {
      const condition = w.changing()
      await checkReturningCells(ctx, trx, condition, w.counted)
      await releaseFiles(ctx, trx, condition, w.released)
      return await w.statement(trx)
    }, first || w.transaction)
  const references = checkedReferences(ctx, w.referenced)
  return references.length === 0 ? write() : assertReferencesViewable(ctx, ctx.db, references, w.written).then(write)
}

const UID_ALIAS = 'fb_uid'

function uidColumn (ctx: CrudContext): OutputColumn[] {
  const uid = ctx.table.uid
  if (uid === undefined) return []
  return [{ key: UID_ALIAS, fragment: { sql: `${ctx.table.quoted}.${ctx.dialect.quote(uid.name)}`, bindings: [] }, field: uid, aggregate: false }]
}

/** The current values of `fields` in the rows a write is about to change: their files may be orphaned after it. */
async function releaseFiles (ctx: CrudContext, trx: Knex.Transaction, condition: Fragment | true, fields: TableField[]): Promise<void> {
  if (ctx.files === undefined || fields.length === 0) return
  // Which of the old files the caller may know of (they are reported when removed): those of fields
  // it sees, in rows its viewRule shows; a write may reach rows the caller cannot read.
  const seen = new Set(ctx.table.visibleFields(ctx.auth.admin).map((f) => f.name))
  const viewable = ctx.table.rules.viewRule === null && !ctx.auth.admin && ctx.applyRules ? false : ruleCondition(ctx, 'viewRule')
  const select: Array<Record<string, string> | Knex.Raw> = fields.map((f) => ({ [f.name]: f.name }))
  if (typeof viewable === 'object') select.push(trx.raw(`CASE WHEN ${viewable.sql} THEN 1 ELSE 0 END AS ${ctx.dialect.quote(SHOWN_ALIAS)}`, viewable.bindings))
  const rows: Row[] = await applyCondition(trx.from(ctx.table.name).select(select), condition)
  ctx.files.release(ctx.table, rows.flatMap((row) => {
    const shown = viewable === true || (typeof viewable === 'object' && Number(row[SHOWN_ALIAS]) === 1)
    return fields.map((f) => ({ name: row[f.name], shown: shown && seen.has(f.name) }))
  }))
}

const SHOWN_ALIAS = 'fb_shown'

// ---------------------------------------------------------------- edit

/** Update one record by id (404 when missing or hidden); `or=INSERT` creates it when it does not exist. */
export function edit (ctx: CrudContext, id: string, body: Row, query: EditQuery): MaybePromise<Row> {
  assertAssurance(ctx)
  const uid = ctx.table.uid
  if (uid === undefined) throw errors.recordNotFound()
  const names = Object.keys(body)
  if (names.length === 0) throw errors.badRequest('Nothing to update: the body names no field')
  const returning = query.returning ?? uid.name
  return plannedEdit(ctx, idValue(ctx, id), body, names, returning, query.or) ?? unplannedEdit(ctx, id, body, query, uid, returning)
}

async function unplannedEdit (ctx: CrudContext, id: string, body: Row, query: EditQuery, uid: TableField, returning: ListSpec): Promise<Row> {
  const byId = idCondition(ctx, id)
  if (query.or === 'INSERT') {
    return await transaction(ctx, [body], async (trx) => {
      const tctx = withDb(ctx, trx)
      const exists = await trx.from(ctx.table.name).select(trx.raw('1 AS one')).whereRaw(byId.sql, byId.bindings).limit(1)
      if (exists.length === 0) {
        // A conflict on another unique key (a slug, an email) updates the row holding it, as insert's
        // REPLACE does (decision D36); not with files, which an upsert could not release.
        const or = fileFields(ctx.table).some((f) => body[f.name] !== undefined) ? undefined : 'REPLACE'
        const inserted = await insert(tctx, { values: { ...body, [uid.name]: uid.type === 'integer' ? Number(id) : id }, returning, or })
        return inserted[0]
      }
      return await editExisting(tctx, byId, body, returning)
    })
  }
  return await editExisting(ctx, byId, body, returning, query.or)
}

/**
 * An edit run from a plan (lib/crud/write-plans.ts) when it can be: known fields (file fields given a
 * file of this request or cleared), no conflict clause, no write hooks, no before-update record hook.
 * Otherwise, or when the plan says the request is refused, undefined: the unplanned path answers it.
 * With nothing to look up first, a SQLite edit answers at once (decision D109); one that replaces a
 * file reads the file it releases first, in one transaction with the change.
 */
function plannedEdit (ctx: CrudContext, id: string | number, body: Row, names: string[], returning: ListSpec, or: EditQuery['or']): MaybePromise<Row> | undefined {
  if (or === 'IGNORE' || or === 'REPLACE' || or === 'INSERT' || hasBeforeHook(ctx, 'beforeUpdate')) return undefined
  let files = false
  for (const name of names) {
    const field = ctx.table.fields.get(name)
    if (field === undefined) return undefined
    if (field.type === 'file') files = true
  }
  if (files && !plannableFiles(ctx, names, [body])) return undefined
  // An edit whose event needs the rows as they were reads them first (lib/crud/statements.ts#runUpdate).
  if (capturesBefore(ctx, names)) return undefined
  const plan = editPlan(ctx, names, returning)
  if (plan === UNPLANNED) return undefined
  const fieldErrors: FieldErrors = {}
  // In the plan's field order, which its statement's filler binds them by.
  const values: Binding[] = []
  for (const field of plan.fields) values.push(encoded(ctx, field, fileValue(ctx, field, body[field.name], fieldErrors), fieldErrors))
  throwIfErrors(fieldErrors)
  if (plan.statement === false) throw errors.recordNotFound()
  const { statement, where } = plan
  const captured = captureColumns(ctx)
  const run = (db: Knex.Transaction): MaybePromise<Row[]> => {
    const planned = statement(captured.length > 0)
    const span = writeSpan(ctx, plan.assigned)
    return andThen(runWriteStatement(db, ctx.direct, planned.sql, planned.fill(ctx, id, values), span), (changed) => {
      reportChange(ctx, db, 'update', captured, changed)
      reportLoneUpdate(ctx, span, plan.assigned)
      return changed
    })
  }
  const rows = writeChange(ctx, {
    given: [body],
    changing: () => ({ sql: where.sql, bindings: where.fill(ctx, id, values) }),
    counted: 0,
    released: files && ctx.files !== undefined ? plan.fields.filter((f) => f.type === 'file') : [],
    referenced: names,
    written: [body],
    transaction: false,
    statement: run
  })
  return andThen(rows, (changed) => {
    if (changed.length === 0) throw errors.recordNotFound()
    return plan.asIs && captured.length === 0 ? changed[0] : decodeRow(ctx, plan.columns, changed[0])
  })
}

async function editExisting (ctx: CrudContext, byId: Fragment, body: Row, returning: ListSpec, or?: Conflict): Promise<Row> {
  const rows = await update(ctx, { where: '', setValues: body, returning, or }, byId)
  if (rows.length === 0) throw errors.recordNotFound()
  return rows[0]
}

// ---------------------------------------------------------------- delete

export async function remove (ctx: CrudContext, params: DeleteParams): Promise<Row[]> {
  assertAssurance(ctx)
  // Before the where is compiled: compiled twice, its searches would count twice (decision D85).
  if (needsHookTransaction(ctx, 'beforeDelete')) return await inHookTransaction(ctx, async (tctx) => await remove(tctx, params))
  const condition = ruleFirst(ruleCondition(ctx, 'deleteRule'), whereOf(ctx, params.where))
  if (condition === false) return []
  await beforeDelete(ctx, params.where)
  const columns = params.returning === undefined ? [] : outputColumns(ctx, 'returning', params.returning)
  const rows = await writeChange(ctx, {
    given: [],
    changing: () => condition,
    counted: columnWidth(columns),
    released: ctx.files === undefined ? [] : fileFields(ctx.table),
    referenced: [],
    written: [],
    transaction: false,
    statement: async (trx) => await deleteStatement(ctx, trx, condition, columns)
  })
  return rows.map((row) => decodeRow(ctx, columns, row))
}
