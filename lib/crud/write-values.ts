// What a write's values become before any statement runs: the field checks (unknown, noInsert /
// noUpdate), a file field's value, each value bound for its column (a fragment, or an encoded
// binding for a plan's slot), an expression's SQL, and an update's assignments. Shared by the
// statements a request builds (lib/crud/write.ts) and the plans that keep them (lib/crud/write-plans.ts).
import type { TableField } from '../../schemas/config.js'
import type { Binding, Fragment } from '../dialects/types.js'
import { errors, addFieldError, type FieldErrors } from '../errors.js'
import { ValueError } from '../values.js'
import { toFragment, identifierPaths, ExpressionError, type Compiled } from '../expr/index.js'
import type { Trace } from '../expr/trace.js'
import { compileCaller, scopeOf, type CrudContext } from './context.js'
import { stampUpdated } from './statements.js'
import { valueSlot } from './plan-cache.js'
import { COMPUTED } from './references.js'

type Row = Record<string, unknown>

/**
 * noInsert/noUpdate -> 403 (decision D25). Checked first on every write, before a hook spends anything
 * (a password hash) on it.
 */
export function refuseLocked (ctx: CrudContext, names: Iterable<string>, verb: 'insert' | 'update'): void {
  if (!ctx.applyRules) return
  for (const name of names) {
    const field = ctx.table.fields.get(name)
    if (field !== undefined && (verb === 'insert' ? field.noInsert : field.noUpdate) === true) throw errors.cannotWrite(verb, name)
  }
}

/** A field the caller may write: unknown -> 400, noInsert/noUpdate -> 403. */
export function writableField (ctx: CrudContext, name: string, verb: 'insert' | 'update', fieldErrors: FieldErrors): TableField | undefined {
  const field = ctx.table.fields.get(name)
  if (field === undefined) {
    addFieldError(fieldErrors, name, 'Unknown field')
    return undefined
  }
  refuseLocked(ctx, [name], verb)
  return field
}

export const SKIP = Symbol('no change')
const NOT_A_FILE = Symbol('not a file of this request')

/**
 * What a file field's value writes: a file uploaded by this request (multipart `@filePayload`), or
 * null for null / '@null' (cleared); SKIP for '', which means "no change" (HTML forms send it);
 * NOT_A_FILE for anything else: a client cannot point a record at a file it did not upload.
 */
function fileChoice (ctx: CrudContext, value: unknown): unknown {
  if (value === '') return SKIP
  if (value === null || value === '@null') return null
  if (typeof value === 'string' && ctx.files?.isUploaded(ctx.table, value) === true) return value
  return NOT_A_FILE
}

/** A field's value as written: a file field's by fileChoice, where NOT_A_FILE is a field error and writes nothing. */
export function fileValue (ctx: CrudContext, field: TableField, value: unknown, fieldErrors: FieldErrors): unknown {
  if (field.type !== 'file') return value
  const chosen = fileChoice(ctx, value)
  if (chosen !== NOT_A_FILE) return chosen
  addFieldError(fieldErrors, field.name, 'Expected a file uploaded with this request (@filePayload) or null')
  return SKIP
}

/**
 * Whether a plan may write what `rows` give the file fields among `names`: each value a file of this
 * request or a clear. A row that leaves one unchanged ('') names fewer columns than the plan's shape,
 * and a value that is no file of this request is refused: the unplanned path answers both.
 */
export function plannableFiles (ctx: CrudContext, names: string[], rows: Row[]): boolean {
  for (const name of names) {
    if (ctx.table.fields.get(name)?.type !== 'file') continue
    for (const row of rows) {
      const chosen = fileChoice(ctx, row[name])
      if (chosen === SKIP || chosen === NOT_A_FILE) return false
    }
  }
  return true
}

/** A value bound for a column; a value that does not fit is recorded as a field error. */
export function valueFragment (ctx: CrudContext, field: TableField, value: unknown, fieldErrors: FieldErrors): Fragment {
  try {
    return ctx.dialect.literal(value ?? null, field)
  } catch (error) {
    if (!(error instanceof ValueError)) throw error
    addFieldError(fieldErrors, field.name, error.message)
    return { sql: 'NULL', bindings: [] }
  }
}

export function throwIfErrors (fieldErrors: FieldErrors): void {
  if (Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
}


/** An expression written to `field`, as SQL (a constant is encoded for the column), and the constant it is, if one. */
export function compiledValue (ctx: CrudContext, what: string, text: string, field: TableField): Fragment & ({ constant: true, value: unknown } | { constant: false }) {
  try {
    const node = compileCaller(ctx, what, text)
    const fragment = toFragment(node, scopeOf(ctx), field)
    return node.kind === 'lit' ? { ...fragment, constant: true, value: node.value } : { ...fragment, constant: false }
  } catch (error) {
    if (error instanceof ExpressionError) throw errors.expression(what, error.message)
    throw error
  }
}


/** A value bound for `field`, encoded; one that does not fit is recorded as a field error. */
export function encoded (ctx: CrudContext, field: TableField, value: unknown, fieldErrors: FieldErrors): Binding {
  if (value === undefined || value === null) return null
  try {
    return ctx.dialect.encode(field, value)
  } catch (error) {
    if (!(error instanceof ValueError)) throw error
    addFieldError(fieldErrors, field.name, error.message)
    return null
  }
}


/** What an update assigns: each column's SQL, the values its rule reads as `new.*`, and what the caller's values write. */
export interface Assignments {
  set: Map<string, Fragment>
  newValues: Map<string, Compiled>
  /** What the caller's set and setValues write (a value, or COMPUTED), for the reference check. */
  written: Row
}

/** What an update is given: values, expressions (`set`), and whether those are the developer's own text. */
export interface UpdateGiven {
  set?: Record<string, string>
  setValues?: Row
  /** `set` is the developer's own text (an action step), not a caller's: see checkSetAgainstRule. */
  setFromConfig?: boolean
}

/**
 * What an update assigns, decided once for a request's values or, given `slots` (a plan being built,
 * lib/crud/write-plans.ts#editPlan), for any values of the same names: each is then bound as a slot
 * the plan fills per run, and what it is was checked when the request gave it. `defaults`: columns an
 * auth flow sets back to their default (SQL of the table's DDL) unless its values give them (FlowWrite).
 */
export function assignments (ctx: CrudContext, params: UpdateGiven, system: Row, slots?: Trace, defaults?: Readonly<Record<string, string>>): Assignments {
  const fieldErrors: FieldErrors = {}
  const set = new Map<string, Fragment>()
  const newValues = new Map<string, Compiled>()
  const written: Row = {}
  if (defaults !== undefined) for (const [name, sql] of Object.entries(defaults)) set.set(name, { sql, bindings: [] })
  for (const [name, value] of Object.entries(system)) {
    const field = ctx.table.fields.get(name)!
    set.set(name, valueFragment(ctx, field, value, fieldErrors))
  }
  for (const [name, given] of Object.entries(params.setValues ?? {})) {
    const field = writableField(ctx, name, 'update', fieldErrors)
    if (field === undefined) continue
    const value = slots === undefined ? fileValue(ctx, field, given, fieldErrors) : given
    if (value === SKIP) continue
    const fragment = slots === undefined ? valueFragment(ctx, field, value, fieldErrors) : { sql: ctx.dialect.placeholder(field), bindings: [slots.token({ path: valueSlot(field.name), field })] }
    set.set(name, fragment)
    newValues.set(name, { kind: 'sql', ...fragment, field })
    written[name] = value
  }
  for (const [name, text] of Object.entries(params.set ?? {})) {
    const field = writableField(ctx, name, 'update', fieldErrors)
    if (field === undefined) continue
    if (ctx.table.writeHooks?.notSettable.has(name) === true || field.type === 'file') {
      addFieldError(fieldErrors, name, 'Can only be written with setValues')
      continue
    }
    if (set.has(name)) {
      addFieldError(fieldErrors, name, 'Given in both set and setValues')
      continue
    }
    const compiled = compiledValue(ctx, `set.${name}`, text, field)
    const fragment = { sql: compiled.sql, bindings: compiled.bindings }
    set.set(name, fragment)
    newValues.set(name, { kind: 'sql', ...fragment, field })
    written[name] = compiled.constant ? compiled.value : COMPUTED
  }
  throwIfErrors(fieldErrors)
  if (set.size === 0) throw errors.badRequest('Nothing to update: give at least one field in set or setValues')
  if (params.setFromConfig !== true) checkSetAgainstRule(ctx, params.set)
  resetDependents(ctx, set)
  stampUpdated(ctx, set)
  return { set, newValues, written }
}

/** A column given a different value resets the columns that vouched for the old one (WriteHooks.resets). */
function resetDependents (ctx: CrudContext, set: Map<string, Fragment>): void {
  for (const { when, reset, to } of ctx.table.writeHooks?.resets ?? []) {
    const given = set.get(when)
    if (given === undefined || set.has(reset)) continue
    const q = (name: string) => `${ctx.table.quoted}.${ctx.dialect.quote(name)}`
    const value = ctx.dialect.literal(to, ctx.table.fields.get(reset)!)
    set.set(reset, { sql: `CASE WHEN ${q(when)} = ${given.sql} THEN ${q(reset)} ELSE ${value.sql} END`, bindings: [...given.bindings, ...value.bindings] })
  }
}

/**
 * A caller's `set` expression that the updateRule reads as `new.<field>` would run inside the rule,
 * on rows the rule hides, where its errors or its time would reveal them (decision D38). Such a
 * value must come as a constant, in setValues.
 */
function checkSetAgainstRule (ctx: CrudContext, set: Record<string, string> | undefined): void {
  const rule = ctx.table.rules.updateRule
  if (set === undefined || rule === null || ctx.auth.admin || !ctx.applyRules) return
  const read = new Set(identifierPaths(rule).filter((p) => p.length === 2 && p[0] === 'new').map((p) => p[1]))
  const checked = Object.keys(set).filter((name) => read.has(name))
  if (checked.length > 0) throw errors.badRequest(`set.${checked[0]}: the update rule checks new.${checked[0]}, so give its value in setValues`)
}

