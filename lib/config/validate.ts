// Start-up validation of the project config. Every problem is collected (never just the first)
// and reported as `path: message`, where the path is written the way a developer would index the
// config object: `tables[1].fields[3].type`.
import { Value } from '@sinclair/typebox/value'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { TSchema } from '@sinclair/typebox'
import {
  DatabaseSettingsSchema, FIELD_TYPES, SqlValueSchema, type ActionData, type DatabaseSettings, type FieldType, type SqlType,
  type TableData, type TableField
} from '../../schemas/config.js'
import { formatPath } from './paths.js'
import { adaptTeenybaseKeys } from './teenybase.js'
import { oauthConfigProblems } from '../auth/oauth-providers.js'

/** A usable config with the warnings to log once at start (teenybase keys dropped), or every problem. */
export type ValidationResult = { config: DatabaseSettings, warnings: string[] } | { problems: string[] }

/** A config that cannot be used. The message lists every problem, one per line. */
export class ConfigError extends Error {
  declare readonly code: 'FB_ERR_CONFIG'
  declare readonly problems: string[]

  constructor (problems: string[]) {
    const message = `Invalid fastbase config:\n${problems.map((p) => `  - ${p}`).join('\n')}`
    super(message)
    // Not enumerable, so console.error (what fastify-cli does) prints the list once, not again as properties.
    Object.defineProperties(this, {
      name: { value: 'ConfigError', configurable: true, writable: true },
      code: { value: 'FB_ERR_CONFIG' },
      problems: { value: problems }
    })
    // fastify-cli prints `err.stack`; a stack trace would only bury the list of problems.
    this.stack = message
  }
}

export function validateConfig (input: unknown): ValidationResult {
  const config = normalise(input)
  const { warnings, problems: adaptProblems } = adaptTeenybaseKeys(config)
  const problems = [...adaptProblems, ...schemaProblems(config)]
  if (isObject(config)) {
    for (const check of CROSS_CHECKS) problems.push(...check(config as unknown as DatabaseSettings))
  }
  return problems.length > 0 ? { problems: inConfigOrder(problems) } : { config: config as DatabaseSettings, warnings }
}

/** Sorts by path (numbers compared as numbers) so each table's problems read together; stable otherwise. */
function inConfigOrder (problems: string[]): string[] {
  const pathOf = (problem: string): string => problem.slice(0, problem.indexOf(': '))
  return [...problems].sort((a, b) => pathOf(a).localeCompare(pathOf(b), 'en', { numeric: true }))
}

// ---------------------------------------------------------------------------------------------
// Normalisation

/**
 * A deep copy of the plain data in `input` (the caller's object is never touched), with
 * `undefined` members dropped (as JSON would) and every field's `sqlType` lower-cased, since
 * teenybase treats it case-insensitively.
 */
function normalise (input: unknown): unknown {
  const config = clonePlain(input)
  if (isObject(config) && Array.isArray(config.tables)) {
    for (const table of config.tables) {
      if (!isObject(table) || !Array.isArray(table.fields)) continue
      for (const field of table.fields) {
        if (isObject(field) && typeof field.sqlType === 'string') field.sqlType = field.sqlType.toLowerCase()
      }
    }
  }
  return config
}

/** Copies arrays and plain objects; anything else (functions, class instances) is kept as is for the schema to reject. */
export function clonePlain (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clonePlain)
  if (!isPlainObject(value)) return value
  const copy: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) copy[key] = clonePlain(member)
  }
  return copy
}

// ---------------------------------------------------------------------------------------------
// Paths

/** `path.key`, or `path["odd key"]` when the key is not an identifier. */
function member (path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** TypeBox's JSON pointer (`/tables/1/name`) as segments, numbers where the value is an array. */
function pointerSegments (pointer: string, root: unknown): (string | number)[] {
  const segments: (string | number)[] = []
  let node: unknown = root
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const index = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : undefined
    segments.push(index ?? key)
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined
  }
  return segments
}

// ---------------------------------------------------------------------------------------------
// Schema problems (TypeBox), rewritten into messages a developer can act on

interface Problem { pointer: string, message: string }

function schemaProblems (config: unknown): string[] {
  const seen = new Set<string>()
  const problems: string[] = []
  const required = new Set<string>()
  for (const problem of explain([...Value.Errors(DatabaseSettingsSchema, config)])) {
    // A missing key is reported once as "is required", not again as "must be a string".
    if (required.has(problem.pointer) && problem.message !== 'is required') continue
    if (problem.message === 'is required') required.add(problem.pointer)
    const text = `${formatPath(pointerSegments(problem.pointer, config))}: ${problem.message}`
    if (!seen.has(text)) problems.push(text)
    seen.add(text)
  }
  return problems
}

function * explain (errors: ValueError[]): Iterable<Problem> {
  for (const error of errors) {
    if (error.type === ValueErrorType.Union) yield * explainUnion(error)
    else if (error.type === ValueErrorType.ObjectAdditionalProperties) yield unknownKey(error)
    else yield { pointer: error.path, message: messageFor(error) }
  }
}

function unknownKey (error: ValueError): Problem {
  const cut = error.path.lastIndexOf('/')
  const key = error.path.slice(cut + 1).replace(/~1/g, '/').replace(/~0/g, '~')
  const patterns = Object.keys(error.schema.patternProperties ?? {})
  if (patterns.length > 0) {
    // A record whose keys must match a pattern (action param names): say what a key must look like.
    const rule = PATTERN_HINTS[patterns[0]] ?? `must match ${patterns[0]}`
    return { pointer: error.path.slice(0, cut), message: `key ${JSON.stringify(key)} ${rule}` }
  }
  const known = Object.keys(error.schema.properties ?? {})
  const guess = suggest(key, known)
  return {
    pointer: error.path.slice(0, cut),
    message: `unknown key ${JSON.stringify(key)}${guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`}`
  }
}

/**
 * TypeBox says only "Expected union value". Instead: a union of literals lists its values; for
 * other unions the variant that fits the value best (same JSON kind, same discriminator such as
 * an extension's `name`, fewest errors) explains what is wrong inside it.
 */
function * explainUnion (error: ValueError): Iterable<Problem> {
  const variants = error.schema.anyOf as TSchema[]
  const kindMatches = variants.map((variant, i) => ({ variant, errors: [...error.errors[i]] }))
    .filter(({ variant }) => fitsKind(variant, error.value))
  const candidates = kindMatches.filter(({ variant }) => sameDiscriminator(variant, error.value))
  if (candidates.length > 0) {
    // Fewest distinct paths: a missing key yields two errors at one path, which should count once.
    const weight = (errors: ValueError[]): number => new Set(errors.map((e) => e.path)).size
    candidates.sort((a, b) => weight(a.errors) - weight(b.errors))
    yield * explain(candidates[0].errors)
    return
  }
  // Optional() copies the union object, but keeps its variant list.
  if (error.schema.anyOf === SqlValueSchema.anyOf) {
    const hint = error.value === null || typeof error.value !== 'object' ? ` (for a literal write sqlValue(${JSON.stringify(error.value)}))` : ''
    yield { pointer: error.path, message: `must be sql\`...\` ({ q }), sqlValue(x) ({ l }) or a SQL string${hint}` }
    return
  }
  const discriminator = kindMatches.length > 0 ? discriminatorKey(kindMatches.map((m) => m.variant)) : undefined
  if (discriminator !== undefined) {
    const allowed = variants.map((v) => literalOf(v.properties[discriminator] as TSchema))
    yield { pointer: `${error.path}/${discriminator}`, message: `must be one of ${allowed.join(', ')}` }
    return
  }
  yield { pointer: error.path, message: describeChoices(variants) + typoHint(variants, error.value) }
}

/** ` (did you mean "integer"?)` when a string is close to one of a union's string literals. */
function typoHint (variants: TSchema[], value: unknown): string {
  if (typeof value !== 'string') return ''
  const literals = variants.filter((v) => typeof v.const === 'string').map((v) => v.const as string)
  const guess = suggest(value, literals)
  return guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`
}

/** Does the value have the JSON kind the schema accepts (for literals: is it that literal)? */
function fitsKind (schema: TSchema, value: unknown): boolean {
  if ('const' in schema) return schema.const === value
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).some((s) => fitsKind(s, value))
  switch (schema.type) {
    case 'string': return typeof value === 'string'
    case 'number': return typeof value === 'number'
    case 'integer': return typeof value === 'number'
    case 'boolean': return typeof value === 'boolean'
    case 'null': return value === null
    case 'array': return Array.isArray(value)
    case 'object': return isObject(value)
    default: return true
  }
}

/** False when an object variant's literal property (e.g. `name: 'auth'`) disagrees with the value. */
function sameDiscriminator (schema: TSchema, value: unknown): boolean {
  if (schema.type !== 'object' || !isObject(value) || schema.properties === undefined) return true
  return Object.entries(schema.properties as Record<string, TSchema>)
    .every(([key, property]) => !('const' in property) || !(key in value) || property.const === value[key])
}

function discriminatorKey (variants: TSchema[]): string | undefined {
  const [first, ...rest] = variants
  const keys = Object.entries((first.properties ?? {}) as Record<string, TSchema>)
    .filter(([, property]) => 'const' in property).map(([key]) => key)
  return keys.find((key) => rest.every((v) => v.properties?.[key] !== undefined && 'const' in v.properties[key]))
}

function literalOf (schema: TSchema): string {
  return String(schema.const)
}

/** "must be one of text, number, ..." / "must be a string or an array" / "must be false or an object". */
function describeChoices (variants: TSchema[]): string {
  const literals: string[] = []
  const kinds: string[] = []
  const collect = (schema: TSchema): void => {
    if ('const' in schema) literals.push(literalOf(schema))
    else if (Array.isArray(schema.anyOf)) (schema.anyOf as TSchema[]).forEach(collect)
    else {
      const kind = KIND_NAMES[String(schema.type)] ?? 'something else'
      if (!kinds.includes(kind)) kinds.push(kind)
    }
  }
  variants.forEach(collect)
  const literalText = literals.length === 1 ? literals[0] : `one of ${literals.join(', ')}`
  return `must be ${alternatives(literals.length === 0 ? kinds : [literalText, ...kinds])}`
}

/** `a`, `a or b`, `a, b or c`. */
function alternatives (items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}

const KIND_NAMES: Record<string, string> = {
  string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', null: 'null', array: 'an array', object: 'an object'
}

const PATTERN_HINTS: Record<string, string> = {
  '^[a-zA-Z_][a-zA-Z0-9_]*$': 'must start with a letter or underscore and contain only letters, digits and underscores',
  '^[a-zA-Z_][a-zA-Z0-9_-]*$': 'must start with a letter or underscore and contain only letters, digits, underscores and hyphens',
  '^_[a-zA-Z0-9_]*$': 'must start with an underscore and contain only letters, digits and underscores'
}

function messageFor (error: ValueError): string {
  const s = error.schema as Record<string, unknown>
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty: return 'is required'
    case ValueErrorType.String: return 'must be a string'
    case ValueErrorType.Number: return 'must be a number'
    case ValueErrorType.Integer: return 'must be an integer'
    case ValueErrorType.Boolean: return 'must be a boolean'
    case ValueErrorType.Null: return 'must be null'
    case ValueErrorType.Array: return 'must be an array'
    case ValueErrorType.Object: return 'must be an object'
    case ValueErrorType.Literal: return `must be ${String(s.const)}`
    case ValueErrorType.StringPattern: return PATTERN_HINTS[String(s.pattern)] ?? `must match ${String(s.pattern)}`
    case ValueErrorType.StringMinLength: return s.minLength === 1 ? 'must not be empty' : `must be at least ${String(s.minLength)} characters`
    case ValueErrorType.StringMaxLength: return `must be at most ${String(s.maxLength)} characters`
    case ValueErrorType.ArrayMinItems: return s.minItems === 1 ? 'must not be empty' : `must have at least ${String(s.minItems)} items`
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum: return `must be at least ${String(s.minimum)}`
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum: return `must be at most ${String(s.maximum)}`
    default: return error.message
  }
}

/** The known key closest to a misspelt one, if it is close enough to be a plausible typo. */
export function suggest (key: string, known: readonly string[]): string | undefined {
  const limit = key.length <= 4 ? 1 : key.length <= 8 ? 2 : 3
  let best: string | undefined
  let bestDistance = limit + 1
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) { best = candidate; bestDistance = d }
  }
  return best
}

/** Levenshtein distance, one row at a time. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}

// ---------------------------------------------------------------------------------------------
// Cross-field checks. They run even when the schema check failed (so one run shows every
// problem), which is why they only look at members of the right JS type and skip the rest.

type Check = (config: DatabaseSettings) => string[]

interface At<T> { item: T, path: string }

/** The object members of a list, each with its path; anything else was already reported by the schema. */
function each<T> (list: unknown, path: string): At<T>[] {
  if (!Array.isArray(list)) return []
  return list.flatMap((item, i) => isObject(item) ? [{ item: item as T, path: `${path}[${i}]` }] : [])
}

/** A single object or a list of objects (actions' `sql` and `steps`). */
function oneOrMany<T> (value: unknown, path: string): At<T>[] {
  if (Array.isArray(value)) return each<T>(value, path)
  return isObject(value) ? [{ item: value as T, path }] : []
}

const tablesOf = (c: DatabaseSettings): At<TableData>[] => each<TableData>(c.tables, 'tables')
const fieldsOf = (t: At<TableData>): At<TableField>[] => each<TableField>(t.item.fields, `${t.path}.fields`)
/** Checks that a column is missing only make sense when the table has a field list at all. */
const hasFieldList = (t: At<TableData>): boolean => Array.isArray(t.item.fields)
const actionsOf = (c: DatabaseSettings): At<ActionData>[] => each<ActionData>(c.actions, 'actions')

/** Members by name; the first of duplicates wins (the others are reported by `duplicates`). */
function byName<T extends { name?: unknown }> (items: At<T>[]): Map<unknown, At<T>> {
  const map = new Map<unknown, At<T>>()
  for (const entry of items) if (!map.has(entry.item.name)) map.set(entry.item.name, entry)
  return map
}

/** Reports the second and later members that share a name. */
function duplicates<T extends { name?: unknown }> (items: At<T>[], what: string): string[] {
  const first = new Map<string, string>()
  const problems: string[] = []
  for (const { item, path } of items) {
    if (typeof item.name !== 'string') continue
    const earlier = first.get(item.name)
    if (earlier === undefined) first.set(item.name, path)
    else problems.push(`${path}.name: duplicate ${what} name "${item.name}" (also ${earlier})`)
  }
  return problems
}

function checkTableNames (c: DatabaseSettings): string[] {
  return duplicates(tablesOf(c), 'table')
}

function checkFieldNames (c: DatabaseSettings): string[] {
  return tablesOf(c).flatMap((t) => duplicates(fieldsOf(t), 'field'))
}

function checkForeignKeys (c: DatabaseSettings): string[] {
  const tables = byName(tablesOf(c))
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      const fk = field.foreignKey
      if (!isObject(fk) || typeof fk.table !== 'string' || typeof fk.column !== 'string') continue
      const target = tables.get(fk.table)
      if (target === undefined) {
        problems.push(`${path}.foreignKey.table: table "${fk.table}" does not exist`)
        continue
      }
      if (!hasFieldList(target)) continue
      const column = fieldsOf(target).find((f) => f.item.name === fk.column)?.item
      if (column === undefined) {
        problems.push(`${path}.foreignKey.column: column "${fk.column}" does not exist in table "${fk.table}"`)
      } else if (sqlBase(field.sqlType) !== undefined && sqlBase(column.sqlType) !== undefined && field.sqlType !== column.sqlType) {
        // Compared exactly, not by affinity: PostgreSQL maps e.g. json and text to different column types.
        problems.push(`${path}.sqlType: "${field.sqlType}" does not match the sqlType "${column.sqlType}" of ${fk.table}.${fk.column} it references`)
      }
    }
  }
  return problems
}

type SqlBase = 'text' | 'integer' | 'real' | 'blob' | 'null'

/** Storage class of each sqlType (reference §1.4). */
const SQL_BASE: Record<SqlType, SqlBase> = {
  text: 'text', json: 'text', date: 'text', datetime: 'text', time: 'text', timestamp: 'text',
  integer: 'integer', int: 'integer', boolean: 'integer',
  real: 'real', float: 'real', numeric: 'real',
  blob: 'blob',
  null: 'null'
}

/** `type`s each storage class can hold. `password` on text is a fastbase addition (teenybase allows it nowhere). */
const TYPES_FOR_BASE: Record<SqlBase, readonly FieldType[]> = {
  text: ['text', 'json', 'date', 'file', 'editor', 'select', 'email', 'url', 'relation', 'password'],
  integer: ['number', 'integer', 'bool', 'select', 'relation'],
  real: ['number', 'select', 'relation'],
  blob: ['blob'],
  null: ['text']
}

/** Unknown types and sqlTypes were reported by the schema check; the cross checks skip them. */
const isFieldType = (type: unknown): type is FieldType => (FIELD_TYPES as readonly unknown[]).includes(type)

function sqlBase (sqlType: unknown): SqlBase | undefined {
  return typeof sqlType === 'string' && Object.hasOwn(SQL_BASE, sqlType) ? SQL_BASE[sqlType as SqlType] : undefined
}

function checkTypes (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      const base = sqlBase(field.sqlType)
      // An unknown type was already reported by the schema check.
      if (base === undefined || !isFieldType(field.type)) continue
      const allowed = TYPES_FOR_BASE[base]
      if (!(allowed as readonly string[]).includes(field.type)) {
        problems.push(`${path}.type: "${field.type}" is not allowed with sqlType "${field.sqlType}" (allowed: ${allowed.join(', ')})`)
      }
    }
  }
  return problems
}

const RECORD_USAGES = ['record_uid', 'record_created', 'record_updated'] as const

function checkRecordUsages (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const usage of RECORD_USAGES) {
      const [first, ...others] = fieldsOf(t).filter((f) => f.item.usage === usage)
      for (const other of others) {
        problems.push(`${other.path}.usage: only one field per table may have usage ${usage} (already ${first.path})`)
      }
    }
  }
  return problems
}

function checkTableFlags (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    const uid = fieldsOf(t).find((f) => f.item.usage === 'record_uid')?.item
    if (t.item.autoSetUid === true && hasFieldList(t) && uid?.type !== 'text') {
      problems.push(`${t.path}.autoSetUid: needs a field with usage record_uid and type text`)
    }
    if (t.item.allowWildcard === true) {
      problems.push(`${t.path}.allowWildcard: true is not supported (* always expands to the table's columns)`)
    }
  }
  return problems
}

function checkExtensions (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    const extensions = each<{ name?: unknown }>(t.item.extensions, `${t.path}.extensions`)
    for (const name of ['rules', 'auth']) {
      const [, ...extra] = extensions.filter((e) => e.item.name === name)
      for (const e of extra) problems.push(`${e.path}.name: only one ${name} extension is allowed per table`)
    }
    const auth = extensions.find((e) => e.item.name === 'auth')
    if (auth !== undefined && hasFieldList(t)) problems.push(...authRequirements(t, auth.path))
    // teenybase accepts an empty jwtSecret (projects without auth tables use one); user tokens need a key.
    if (auth !== undefined && c.jwtSecret === '') problems.push(`jwtSecret: must not be empty: ${t.path} has an auth extension`)
  }
  return problems
}

/** An external-JWT or OAuth provider is known by a name, an issuer, a JWKS URL or a secret (teenybase's rule). */
function checkProviders (c: DatabaseSettings): string[] {
  const identified = (p: Record<string, unknown>): boolean => ['name', 'issuer', 'jwksUrl', 'secret'].some((k) => p[k] !== undefined)
  return each<Record<string, unknown>>(c.authProviders, 'authProviders')
    .filter((p) => isObject(p.item) && !identified(p.item))
    .map((p) => `${p.path}: needs one of name, issuer, jwksUrl or secret`)
}

function authRequirements (t: At<TableData>, path: string): string[] {
  const usages = new Set(fieldsOf(t).map((f) => f.item.usage))
  const problems: string[] = []
  for (const usage of ['record_uid', 'auth_email', 'auth_password'] as const) {
    if (!usages.has(usage)) problems.push(`${path}: the auth extension needs a field with usage ${usage}`)
  }
  if (t.item.autoSetUid !== true) problems.push(`${path}: the auth extension needs autoSetUid: true on the table`)
  return problems
}

/** `{l: null}`, or SQL that is just NULL. */
function isNullDefault (value: unknown): boolean {
  if (isObject(value) && 'l' in value) return value.l === null
  const sqlText = isObject(value) ? value.q : value
  return typeof sqlText === 'string' && sqlText.trim().toUpperCase() === 'NULL'
}

function checkDefaults (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      if (field.notNull === true && isNullDefault(field.default)) {
        problems.push(`${path}.default: a null default contradicts notNull`)
      }
    }
  }
  return problems
}

const VALUE_KINDS: Record<SqlBase, { test: (v: unknown) => boolean, kind: string }> = {
  text: { test: (v) => typeof v === 'string', kind: 'a string' },
  integer: { test: (v) => Number.isInteger(v), kind: 'an integer' },
  real: { test: (v) => typeof v === 'number', kind: 'a number' },
  blob: { test: () => false, kind: 'not a blob' },
  null: { test: () => false, kind: 'not null' }
}

function checkSelectValues (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      if (!Array.isArray(field.values) || !isFieldType(field.type)) continue
      if (field.type !== 'select') {
        problems.push(`${path}.values: only fields of type select take values`)
        continue
      }
      const base = sqlBase(field.sqlType)
      if (base === undefined) continue
      const { test, kind } = VALUE_KINDS[base]
      field.values.forEach((value, i) => {
        if (!test(value)) problems.push(`${path}.values[${i}]: must be ${kind} (sqlType ${String(field.sqlType)})`)
      })
    }
  }
  return problems
}

/** Column name of an index entry such as `name COLLATE NOCASE` or `created DESC`. */
const columnOf = (entry: string): string => entry.trim().split(/\s+/)[0]

/** Index, full-text and trigger `updateOf` entries must name columns of their table. */
function checkColumnRefs (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c).filter(hasFieldList)) {
    const columns = new Set(fieldsOf(t).map((f) => f.item.name))
    const check = (entry: unknown, path: string): void => {
      if (typeof entry === 'string' && !columns.has(columnOf(entry))) {
        problems.push(`${path}: column "${columnOf(entry)}" does not exist in table "${String(t.item.name)}"`)
      }
    }
    for (const { item: index, path } of each<{ fields?: unknown }>(t.item.indexes, `${t.path}.indexes`)) {
      if (typeof index.fields === 'string') index.fields.split(',').forEach((entry) => check(entry, `${path}.fields`))
      else if (Array.isArray(index.fields)) index.fields.forEach((entry, i) => check(entry, `${path}.fields[${i}]`))
    }
    const fts = t.item.fullTextSearch as { fields?: unknown } | undefined
    if (isObject(fts) && Array.isArray(fts.fields)) {
      fts.fields.forEach((entry, i) => check(entry, `${t.path}.fullTextSearch.fields[${i}]`))
    }
    for (const { item: trigger, path } of each<{ updateOf?: unknown }>(t.item.triggers, `${t.path}.triggers`)) {
      if (typeof trigger.updateOf === 'string') check(trigger.updateOf, `${path}.updateOf`)
      else if (Array.isArray(trigger.updateOf)) trigger.updateOf.forEach((entry, i) => check(entry, `${path}.updateOf[${i}]`))
    }
  }
  return problems
}

/**
 * fullTextSearch fields hold text on both databases (not json or date, which PostgreSQL stores as
 * jsonb and timestamptz); `content_rowid` is FTS5's rowid: an integer column without a foreign key.
 */
function checkFullTextSearch (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c).filter(hasFieldList)) {
    const fts = t.item.fullTextSearch as Record<string, unknown> | undefined
    if (!isObject(fts)) continue
    const path = `${t.path}.fullTextSearch`
    const fields = new Map(fieldsOf(t).map((f) => [f.item.name, f.item]))
    const names = Array.isArray(fts.fields) ? fts.fields : []
    names.forEach((name, i) => {
      const field = fields.get(name as string)
      if (field !== undefined && (sqlBase(field.sqlType) !== 'text' || field.type === 'json' || field.type === 'date')) {
        problems.push(`${path}.fields[${i}]: "${field.name}" is not a text field (type ${field.type}, sqlType ${field.sqlType})`)
      }
    })
    if (typeof fts.content_rowid !== 'string') continue
    const rowid = fields.get(fts.content_rowid)
    if (fts.contentless === false) problems.push(`${path}.content_rowid: only used when contentless is true (the default)`)
    else if (rowid === undefined) problems.push(`${path}.content_rowid: column "${fts.content_rowid}" does not exist in table "${String(t.item.name)}"`)
    else if (sqlBase(rowid.sqlType) !== 'integer' || rowid.foreignKey !== undefined) problems.push(`${path}.content_rowid: "${rowid.name}" must be an integer column without a foreignKey`)
  }
  return problems
}

const PARAM_CHECKS: Record<string, { test: (v: unknown) => boolean, kind: string }> = {
  string: { test: (v) => typeof v === 'string', kind: 'a string' },
  number: { test: (v) => typeof v === 'number' && Number.isFinite(v), kind: 'a number' },
  integer: { test: (v) => Number.isInteger(v), kind: 'an integer' },
  boolean: { test: (v) => typeof v === 'boolean', kind: 'a boolean' }
}

function checkActions (c: DatabaseSettings): string[] {
  const tableNames = new Set(tablesOf(c).map((t) => t.item.name))
  const actions = actionsOf(c)
  const problems = duplicates(actions, 'action')
  for (const { item: action, path } of actions) {
    if ((action.sql === undefined) === (action.steps === undefined)) {
      problems.push(`${path}: must have exactly one of sql or steps`)
    }
    const statements = [...oneOrMany<{ table?: unknown }>(action.sql, `${path}.sql`),
      ...oneOrMany<{ table?: unknown }>(action.steps, `${path}.steps`)]
    for (const { item: statement, path: at } of statements) {
      if (typeof statement.table === 'string' && !tableNames.has(statement.table)) {
        problems.push(`${at}.table: table "${statement.table}" does not exist`)
      }
    }
    if (!isObject(action.params)) continue
    for (const [name, param] of Object.entries(action.params)) {
      if (!isObject(param) || !('default' in param) || typeof param.type !== 'string') continue
      const rule = PARAM_CHECKS[param.type]
      if (rule !== undefined && !rule.test(param.default)) {
        problems.push(`${member(`${path}.params`, name)}.default: must be ${rule.kind} (the param's type is ${param.type})`)
      }
    }
  }
  return problems
}

const CROSS_CHECKS: Check[] = [
  checkTableNames, checkFieldNames, checkForeignKeys, checkTypes, checkRecordUsages, checkTableFlags,
  checkExtensions, checkProviders, oauthConfigProblems, checkDefaults, checkSelectValues, checkColumnRefs, checkFullTextSearch, checkActions
]

// ---------------------------------------------------------------------------------------------

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
