// Write plans: the common insert (plain values or files of the request, no conflict clause) and edit
// (one record by id) compiled once per shape and caller class (plan-cache.ts), as reads are: the
// statement's text with and without the realtime capture columns, where each binding comes from (the
// values given, the record id, the caller's globals), the fields the values are encoded for, the
// rule's decision, the returned columns and their decoders. A request then only encodes its values and fills the slots.
// Everything the text depends on is in the shape: the names of the fields given, in order, the
// returning list and the caller's class; the values never are (null is bound like any value).
import type { TableField } from '../../schemas/config.js'
import { fieldsNamed } from '../table/descriptor.js'
import type { Binding } from '../dialects/types.js'
import { slotOf, type Trace } from '../expr/trace.js'
import { and, ruleCondition, ID_SLOT, type Condition, type CrudContext } from './context.js'
import { answeredAsIs, outputColumns, type ListSpec, type OutputColumn } from './columns.js'
import { captureColumns, insertHead, keyAnswered, keyColumns, returningSql, stampedOnInsert, updateHead, valuesTuple } from './statements.js'
import { assignments } from './write-values.js'
import { repeatedPlan, slotFiller, type PlanningContext, type SlotFiller } from './plan-cache.js'
import { FastbaseError } from '../errors.js'

/**
 * A statement's text and bindings (slots filled per run: `fill`, compiled with the text), without or
 * with the realtime capture columns.
 */
export type PlannedWrite = (captured: boolean) => { sql: string, bindings: readonly Binding[], fill: SlotFiller }

export interface InsertPlan {
  /** The fields of the values given, in the order given, and their names. */
  fields: TableField[]
  names: readonly string[]
  /** The uid generated when a row gives none (an autoSetUid table), and where it is bound: the position of the uid among `fields`, or appended. */
  uid?: { field: TableField, given: number }
  /** The caller's `returning` columns (the answer); the statement also returns the key columns (for the createRule check, the kept totals) unless the answer holds the key as it is stored. */
  answer: () => OutputColumn[]
  /** Where a returned row holds the table's one-column key (statements.ts#reportLoneInsert). */
  keyAt: string | undefined
  /** The statement returns exactly the answer's columns, each read as is: uncaptured, its rows are the answer. */
  asIs: boolean
  /** The createRule on the inserted rows, for this caller's class; slots filled per run. */
  createRule: Condition
  /** The statement of one row. */
  single: PlannedWrite
  /** Of several: `INSERT INTO t (...) VALUES `, one row's `(?, ?, CURRENT_TIMESTAMP)`, ` RETURNING ...`. */
  head: string
  tuple: string
  returning: PlannedWrite
}

/** A shape whose plan could not be built (a rule or flag refuses it, a bad returning list): the unplanned path answers it. */
export const UNPLANNED = Symbol('unplanned')

/** A planned insert is one statement: at most this many values and rows, as the unplanned path puts in one (statements.ts). */
export const MAX_PLANNED_BINDINGS = 10_000
export const MAX_PLANNED_ROWS = 500

export type EditPlan = {
  fields: TableField[]
  /** The columns the statement assigns: the fields given and the `updated` timestamp. */
  assigned: ReadonlySet<string>
  columns: OutputColumn[]
  /** Every column is read as is: the statement's row, uncaptured, is the answer. */
  asIs: boolean
} & (
  /** The updateRule refuses every row for this caller (nothing found). */
  | { statement: false }
  /** The statement, and its condition (the id and the updateRule; slots filled per run) to read the rows it will change first. */
  | { statement: PlannedWrite, where: { sql: string, fill: SlotFiller } }
)

/** The text a shape's key holds for a returning list. */
function listKey (spec: ListSpec): string {
  return spec === undefined ? '-' : typeof spec === 'string' ? `s${spec}` : JSON.stringify(spec)
}

/** A write's plan from the cache (plan-cache.ts#repeatedPlan): its shape is the names given, in order, and the returning list. */
function writePlan<P> (ctx: CrudContext, op: 'insert' | 'edit', names: readonly string[], returning: ListSpec, build: (ctx: PlanningContext) => P, bytesOf: (plan: P) => number): P {
  return repeatedPlan(ctx, op, [names, returning], () => `${op}\n${names.join(',')}\n${listKey(returning)}`, build, bytesOf)
}

/**
 * A plan, or UNPLANNED when building it meets an error the request must answer: the unplanned path
 * then gives that answer, after the checks it makes first (the values), exactly as without plans.
 */
function unlessRefused<P> (build: () => P | typeof UNPLANNED): P | typeof UNPLANNED {
  try {
    return build()
  } catch (error) {
    if (error instanceof FastbaseError) return UNPLANNED
    throw error
  }
}

/** Bindings as a plan keeps them: a token of the trace becomes its slot. */
function slotted (trace: Trace, bindings: readonly Binding[]): Binding[] {
  return bindings.map((b) => slotOf(trace, b) ?? b)
}

function condition (trace: Trace, rule: Condition): Condition {
  return typeof rule === 'object' ? { ...rule, bindings: slotted(trace, rule.bindings) } : rule
}

/**
 * A statement `head` followed by its RETURNING clause; each of its two texts is written when first
 * asked for. `fields`: those whose values the statement binds, in the order a run gives them.
 */
function withReturning (ctx: CrudContext, trace: Trace, head: string, headBindings: readonly Binding[], columns: OutputColumn[], fields: readonly TableField[]): PlannedWrite {
  const texts: Array<ReturnType<PlannedWrite> | undefined> = [undefined, undefined]
  return (captured) => {
    const i = captured ? 1 : 0
    let text = texts[i]
    if (text === undefined) {
      const bindings = [...headBindings]
      const sql = head + returningSql(ctx, captured ? [...columns, ...captureColumns(ctx, true)] : columns, bindings)
      const slots = slotted(trace, bindings)
      texts[i] = text = { sql, bindings: slots, fill: slotFiller(slots, fields) }
    }
    return text
  }
}

/**
 * The plan of an insert of rows naming `names` (every one a field the caller may write: the caller
 * checks that first). Throws what the request must answer when the rule refuses this caller.
 */
export function insertPlan (ctx: CrudContext, names: string[], returning: ListSpec): InsertPlan | typeof UNPLANNED {
  return writePlan(ctx, 'insert', names, returning, (c) => unlessRefused(() => {
    const trace = c.trace
    // The caller checked every name; one that is no field is left to the unplanned path, which answers for it.
    const fields = fieldsNamed(c.table, names)
    if (fields === undefined || (c.applyRules && fields.some((f) => f.noInsert === true))) return UNPLANNED
    const createRule = condition(trace, ruleCondition(c, 'createRule', { newValues: 'row' }))
    const columns = returning === undefined ? [] : outputColumns(c, 'returning', returning)
    // The key beside the answer, unless the answer holds it and no createRule check reads the rows by it.
    const keyAt = createRule === true ? keyAnswered(c, columns) : undefined
    const returned = keyAt === undefined ? [...columns, ...keyColumns(c)] : columns
    const written = fields.map((f) => f.name)
    const slots = fields.map((f) => c.dialect.placeholder(f))
    const uid = c.table.uid
    let generated: InsertPlan['uid']
    if (uid !== undefined && c.table.data.autoSetUid === true) {
      const at = fields.indexOf(uid)
      generated = { field: uid, given: at }
      if (at < 0) {
        written.push(uid.name)
        slots.push(c.dialect.placeholder(uid))
      }
    }
    for (const field of stampedOnInsert(c, (f) => fields.includes(f))) {
      written.push(field.name)
      slots.push(c.dialect.now())
    }
    const head = insertHead(c, written)
    const tuple = valuesTuple(slots)
    return {
      fields,
      names: fields.map((f) => f.name),
      uid: generated,
      answer: () => columns,
      keyAt,
      asIs: keyAt !== undefined && answeredAsIs(c, columns),
      createRule,
      single: withReturning(c, trace, head + tuple, [], returned, fields),
      head,
      tuple,
      returning: withReturning(c, trace, '', [], returned, fields)
    }
  }), (plan) => plan === UNPLANNED ? 0 : plan.head.length + plan.tuple.length)
}

/**
 * The plan of an edit giving `names` (every one a field the caller may write):
 * `UPDATE t SET ... WHERE <id> AND <updateRule> RETURNING ...`. The updateRule reads `new.<field>`
 * as the value given, bound where it is written.
 */
export function editPlan (ctx: CrudContext, names: string[], returning: ListSpec): EditPlan | typeof UNPLANNED {
  return writePlan(ctx, 'edit', names, returning, (c) => unlessRefused(() => {
    const trace = c.trace
    const fields = fieldsNamed(c.table, names)
    if (fields === undefined) return UNPLANNED
    // What the update assigns, as the unplanned one decides it, each value a slot: a field the caller
    // may not write refuses the plan (noUpdate), and the unplanned path answers it.
    const { set, newValues } = assignments(c, { setValues: Object.fromEntries(names.map((name) => [name, null])) }, {}, trace)
    const columns = outputColumns(c, 'returning', returning)
    // The record id is bound per run; it is never null (lib/crud/context.ts#idValue, which also answered 404 already for a table without a uid).
    const uid = c.table.uid
    if (uid === undefined) return UNPLANNED
    const byId = { sql: `${c.table.quoted}.${c.dialect.quote(uid.name)} = ${c.dialect.placeholder(uid)}`, bindings: [trace.token({ path: ID_SLOT, field: uid })] }
    const where = and(byId, ruleCondition(c, 'updateRule', { newValues }))
    const decided = { fields, assigned: new Set(set.keys()), columns, asIs: answeredAsIs(c, columns) }
    if (where === false) return { ...decided, statement: false }
    const bindings: Binding[] = []
    const head = updateHead(c, set, where, bindings)
    return { ...decided, statement: withReturning(c, trace, head, bindings, columns, fields), where: { sql: where.sql, fill: slotFiller(slotted(trace, where.bindings), fields) } }
  }), (plan) => plan === UNPLANNED || plan.statement === false ? 0 : plan.statement(false).sql.length)
}
