// PostgreSQL: everything the rest of the code must not know about PostgreSQL.
import type { Binding, Dialect, Fragment, ConstraintKind } from './types.js'
import type { TableField } from '../../schemas/config.js'
import { postgresDdl } from './postgres-ddl.js'
import { postgresSearch } from './postgres-fts.js'
import { ValueError, jsonText, numberInput, toDate } from '../values.js'
import { quote, commonFunction, driverMessage, columnFromMessage, columnOfConstraint, jsonPairArguments } from './common.js'
import { errorCode } from '../thrown.js'
import { isObject } from '../plain.js'
import { READS_BUSY } from './read-gate.js'
import { isCanonicalIso } from './postgres-timestamp.js'
import { writesBetween } from './postgres-snapshots.js'

const CONSTRAINT_CODES: Record<string, ConstraintKind> = {
  23505: 'unique', 23502: 'not_null', 23503: 'foreign_key', 23514: 'check',
  // triggered_action_exception: what a teenybase `RAISE(FAIL, ...)` trigger raises here (postgres-ddl.ts).
  '09000': 'trigger'
}
// Errors caused by a caller's value or expression rather than by the server, answered with 400: every
// data exception (class 22: bad casts, out-of-range numbers and dates, NUL bytes, bad substrings),
// and the type errors a caller's expression can produce (mismatched or uncastable types, unknown
// operator for these types, aggregate misuse). Other class-42 errors mean fastbase built bad SQL: a 500.
const BAD_INPUT_TYPE_ERRORS = new Set(['42883', '42804', '42803', '42P10', '42846', '42725', '42P18', '42P08'])

/** pg's error fields (code, message, detail, column, constraint), each unknown until checked. */
function fieldsOf (error: unknown): Record<string, unknown> {
  return isObject(error) ? error : {}
}

function textOf (value: unknown): string {
  return typeof value === 'string' ? value : ''
}

/** A text[] literal for `#>` paths, bound as one value. */
function pathArray (path: (string | number)[]): string {
  return `{${path.map((p) => `"${String(p).replace(/(["\\])/g, '\\$1')}"`).join(',')}}`
}

const placeholders = new WeakMap<TableField, string>()

/** `CAST(? AS <the column's type>)`, written once per field (the field objects live as long as the config). */
function placeholder (field: TableField): string {
  let text = placeholders.get(field)
  if (text === undefined) placeholders.set(field, text = `CAST(? AS ${valueType(field)})`)
  return text
}

/** The type of the column's values (its DDL type without a generated clause). */
function valueType (field: TableField): string {
  return postgresDdl.columnType(field).replace(/ generated.*$/i, '')
}

function encode (field: TableField, value: unknown): Binding {
  if (value === null || value === undefined) return null
  switch (field.type) {
    case 'bool': return value === true || value === 1 ? true : value === false || value === 0 ? false : invalid('must be true or false')
    // Stringified: the pg driver would turn a JS array into a PostgreSQL array, not JSON.
    case 'json': return jsonText(value)
    case 'date': return toDate(value).toISOString()
    case 'integer': case 'number': return numberInput(value, field.type === 'integer')
    // Text and what a field of another type takes as it is: a JSON value, which the driver binds.
    default: return value as Binding
  }
}

function invalid (message: string): never {
  throw new ValueError(message)
}

function decode (field: TableField | undefined, value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (value === undefined) return null
  // Inside an expanded relation's JSON a timestamptz is text with an offset: the same ISO form as above.
  // A column's own value is already ISO text (the connection's parser, decision D81).
  if (field?.type === 'date' && typeof value === 'string' && !isCanonicalIso(value)) {
    try { return toDate(value).toISOString() } catch { return value }
  }
  if (field?.type === 'bool' && typeof value === 'number') return value === 1
  return value
}

/**
 * Dates and booleans may be decoded, and so may any column whose SQL type pg reads as a Date (date,
 * timestamp); every other value arrives as the answer has it.
 */
function readsAsIs (field: TableField): boolean {
  return field.type !== 'date' && field.type !== 'bool' && !/date|time/i.test(field.sqlType ?? '')
}

/** Parameter type for a constant whose column is unknown: PostgreSQL cannot infer `unknown` inside functions. */
function castFor (value: unknown): string {
  if (typeof value === 'string') return 'text'
  if (typeof value === 'boolean') return 'boolean'
  return Number.isInteger(value) ? 'bigint' : 'double precision'
}

const DATE_FORMATS: Record<string, string> = { datetime: 'YYYY-MM-DD HH24:MI:SS', date: 'YYYY-MM-DD', time: 'HH24:MI:SS' }

function timestamp (arg: string | undefined): string {
  return arg === undefined ? 'CURRENT_TIMESTAMP' : `CAST(${arg} AS timestamptz)`
}

export const postgres: Dialect = {
  ...postgresDdl,
  label: 'PostgreSQL',
  sharedByInstances: true,
  plansSemiJoins: true,
  synchronous: false,
  quote,
  // An array built once (an InitPlan), which the key's index answers member by member; `IN (SELECT ...)`
  // is planned as a hash join over the whole table.
  keyIn: (column, field) => `${column} = ANY(ARRAY(SELECT CAST(k AS ${valueType(field)}) FROM jsonb_array_elements_text(CAST(? AS jsonb)) AS fb_keys(k)))`,
  writesBetween,
  statementVersion: 'pg_current_snapshot()::text',
  rowEstimate: {
    explain: (sql) => `EXPLAIN (FORMAT JSON) ${sql}`,
    rows: (result) => {
      // One JSON document: [{ Plan: { 'Plan Rows': n, ... } }].
      const plans = result[0]?.['QUERY PLAN']
      const [explained]: unknown[] = Array.isArray(plans) ? plans : []
      const plan = isObject(explained) && isObject(explained.Plan) ? explained.Plan['Plan Rows'] : undefined
      return typeof plan === 'number' ? Math.round(plan) : 0
    }
  },
  // COLLATE "C": ILIKE refuses nondeterministic collations (NOCASE columns), and "C" matches SQLite's ASCII-only case folding.
  like: (l, r, negate) => `(CAST(${l} AS text) COLLATE "C" ${negate ? 'NOT ILIKE' : 'ILIKE'} CAST(${r} AS text) ESCAPE '\\')`,
  isDistinct: (l, r, equal) => `(${l} IS ${equal ? 'NOT ' : ''}DISTINCT FROM ${r})`,
  concat: (parts) => `(${parts.map((p) => `CAST(${p} AS text)`).join(' || ')})`,
  jsonExtract (target: Fragment, path, asText, numeric): Fragment {
    const doc = `CAST(${target.sql} AS jsonb)`
    if (numeric) {
      // SQLite's ->> yields a number for JSON numbers; text vs number would be a type error here.
      return {
        sql: `(CASE WHEN jsonb_typeof(${doc} #> CAST(? AS text[])) = 'number' THEN CAST(${doc} #>> CAST(? AS text[]) AS numeric) END)`,
        bindings: [...target.bindings, pathArray(path), ...target.bindings, pathArray(path)]
      }
    }
    return { sql: `(${doc} ${asText ? '#>>' : '#>'} CAST(? AS text[]))`, bindings: [...target.bindings, pathArray(path)] }
  },
  // The table's own row type types every column exactly as stored.
  rowsAs: (quotedTable, fields, rows) => ({
    sql: `(SELECT * FROM json_populate_recordset(CAST(NULL AS ${quotedTable}), CAST(? AS json))) AS ${quotedTable}`,
    bindings: [JSON.stringify(rows.map((row) => Object.fromEntries(fields.map((f) => [f.name, row[f.name] ?? null]))))]
  }),
  jsonContains: (array, value) => `(CAST(${array} AS jsonb) @> jsonb_build_array(${value}))`,
  jsonSet: (doc, path, value) => ({ sql: `jsonb_set(CAST(${doc} AS jsonb), CAST(? AS text[]), to_jsonb(${value}), true)`, bindings: [pathArray(path)] }),
  // jsonb, not json: it can be compared, so DISTINCT and ORDER BY work on an expanded column.
  jsonObject: (pairs) => `(${jsonPairArguments(pairs).map((args) => `jsonb_build_object(${args})`).join(' || ')})`,
  callFunction (name, args) {
    switch (name) {
      case 'length': return `length(CAST(${args[0]} AS text))`
      case 'substring': case 'substr': return `substr(CAST(${args[0]} AS text), ${args.slice(1).map((a) => `CAST(${a} AS integer)`).join(', ')})`
      case 'round': return `round(CAST(${args[0]} AS numeric)${args[1] === undefined ? '' : `, CAST(${args[1]} AS integer)`})`
      case 'unixepoch': return `CAST(EXTRACT(EPOCH FROM ${timestamp(args[0])}) AS bigint)`
      case 'datetime': case 'date': case 'time':
        return `to_char(${timestamp(args[0])} AT TIME ZONE 'UTC', '${DATE_FORMATS[name]}')`
      default: return commonFunction(name, args)
    }
  },
  now: () => 'CURRENT_TIMESTAMP',
  readsClock: (sql) => /current_(timestamp|date|time)|localtime|\bnow\(|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|random\(/i.test(sql),
  // An explicit id does not advance an identity column's sequence; without this the next generated id collides.
  resyncIdentity: (table, column) => `SELECT setval(pg_get_serial_sequence('${table.replace(/'/g, "''")}', '${column}'), (SELECT COALESCE(MAX(${quote(column)}), 0) + 1 FROM ${table}), false)`,
  placeholder,
  literal (value, field): Fragment {
    if (value === null) return { sql: 'NULL', bindings: [] }
    if (field !== undefined) return { sql: placeholder(field), bindings: [encode(field, value)] }
    if (typeof value === 'object') return { sql: 'CAST(? AS jsonb)', bindings: [JSON.stringify(value)] }
    return { sql: `CAST(? AS ${castFor(value)})`, bindings: [value as Binding] }
  },
  search: postgresSearch,
  encode,
  decode,
  readsAsIs,
  rawRows: (result) => (result as { rows?: Record<string, unknown>[] }).rows ?? [],
  constraintViolation (error, table) {
    const e = fieldsOf(error)
    const kind = typeof e.code === 'string' ? CONSTRAINT_CODES[e.code] : undefined
    if (kind === undefined) return undefined
    if (kind === 'trigger') return { kind, message: driverMessage(textOf(e.message)) }
    const fromDetail = /Key \(([^)]+)\)=/.exec(textOf(e.detail))?.[1]
    const fromConstraint = columnOfConstraint(typeof e.constraint === 'string' ? e.constraint : undefined, table)
    const candidates = [e.column, fromDetail, fromConstraint].filter((c): c is string => typeof c === 'string')
    const column = candidates.find((c) => table.fields.some((f) => f.name === c)) ?? columnFromMessage(textOf(e.message), table)
    return { kind, column }
  },
  isBusy (error) {
    const code = errorCode(error)
    return code === '55P03' || code === READS_BUSY
  },
  isTimeout (error) {
    // query_canceled: by statement_timeout, the only canceller fastbase sets.
    return errorCode(error) === '57014'
  },
  badInput (error) {
    const e = fieldsOf(error)
    const bad = typeof e.code === 'string' && (e.code.startsWith('22') || BAD_INPUT_TYPE_ERRORS.has(e.code))
    return bad ? driverMessage(textOf(e.message)) : undefined
  }
}
