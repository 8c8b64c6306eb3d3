// SQLite: everything the rest of the code must not know about SQLite.
import type { Binding, Dialect, Fragment, ConstraintKind } from './types.js'
import type { TableField } from '../../schemas/config.js'
import { sqliteDdl } from './sqlite-ddl.js'
import { sqliteSearch } from './sqlite-fts.js'
import { writesBetween } from './sqlite-versions.js'
import { READ_TIMEOUT, READERS_BUSY } from './sqlite-readers.js'
import { ValueError, jsonText, numberInput, toDate, sqliteDateText } from '../values.js'
import { quote, commonFunction, driverMessage, columnFromMessage, jsonPairArguments } from './common.js'
import { errorCode, errorMessage } from '../thrown.js'

const CONSTRAINT_CODES: Record<string, ConstraintKind> = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_NOTNULL: 'not_null',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign_key',
  SQLITE_CONSTRAINT_CHECK: 'check',
  SQLITE_CONSTRAINT_TRIGGER: 'trigger'
}

/** `$.a.b[0]` path text from path parts. */
function pathText (path: (string | number)[]): string {
  return '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? `.${p}` : `."${p}"`)).join('')
}

function encode (field: TableField, value: unknown): Binding {
  if (value === null || value === undefined) return null
  switch (field.type) {
    case 'bool': return value === true || value === 1 ? 1 : value === false || value === 0 ? 0 : invalid('must be true or false')
    case 'json': return jsonText(value)
    case 'date': return sqliteDateText(toDate(value))
    case 'integer': case 'number': return numberInput(value, field.type === 'integer')
    // Text and what a field of another type takes as it is: a JSON value, which the driver binds.
    default: return value as Binding
  }
}

function invalid (message: string): never {
  throw new ValueError(message)
}

function decode (field: TableField | undefined, value: unknown): unknown {
  if (value === null || value === undefined || field === undefined) return value ?? null
  switch (field.type) {
    case 'bool': return value === 1 || value === true
    case 'json':
      if (typeof value !== 'string') return value
      try { return JSON.parse(value) } catch { return value }
    case 'date':
      // What fastbase stores (`YYYY-MM-DD HH:MM:SS.SSS`, UTC) maps to ISO by position; anything else is parsed.
      if (typeof value === 'string' && value.length === 23 && value[4] === '-' && value[10] === ' ' && value[13] === ':' && value[19] === '.') return `${value.slice(0, 10)}T${value.slice(11)}Z`
      try { return toDate(value).toISOString() } catch { return value }
    default: return value
  }
}

/** Booleans (0/1), json (text) and dates (stored text) are decoded; every other value is answered as read. */
function readsAsIs (field: TableField): boolean {
  return field.type !== 'bool' && field.type !== 'json' && field.type !== 'date'
}

/** SQLite's affinity rules on a declared type, where CAST gives the same storage class: TEXT, INTEGER or REAL. */
function affinityOf (field: TableField): string | undefined {
  const type = sqliteDdl.columnType(field)
  if (type.includes('INT')) return 'INTEGER'
  if (/CHAR|CLOB|TEXT/.test(type)) return 'TEXT'
  if (type.includes('BLOB') || type === '') return undefined
  if (/REAL|FLOA|DOUB/.test(type)) return 'REAL'
  return undefined
}

const DATE_FORMATS: Record<string, string> = { datetime: '%Y-%m-%d %H:%M:%S', date: '%Y-%m-%d', time: '%H:%M:%S' }

export const sqlite: Dialect = {
  ...sqliteDdl,
  label: 'SQLite',
  // One file, one process (better-sqlite3 runs each statement synchronously).
  sharedByInstances: false,
  plansSemiJoins: false,
  synchronous: true,
  quote,
  like: (l, r, negate) => `(${l} ${negate ? 'NOT LIKE' : 'LIKE'} ${r} ESCAPE '\\')`,
  isDistinct: (l, r, equal) => `(${l} IS ${equal ? '' : 'NOT '}${r})`,
  concat: (parts) => `(${parts.join(' || ')})`,
  jsonExtract (target: Fragment, path, asText): Fragment {
    return { sql: `(${target.sql} ${asText ? '->>' : '->'} ?)`, bindings: [...target.bindings, pathText(path)] }
  },
  jsonContains: (array, value) => `EXISTS (SELECT 1 FROM json_each(${array}) WHERE json_each.value = ${value})`,
  keyIn: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  writesBetween,
  jsonSet: (doc, path, value) => ({ sql: `json_set(${doc}, ?, ${value})`, bindings: [pathText(path)] }),
  // json_patch drops the patch's null members: harmless, a missing key reads as null (types.ts).
  jsonObject: (pairs) => jsonPairArguments(pairs).map((args) => `json_object(${args})`).reduce((a, b) => `json_patch(${a}, ${b})`),
  callFunction (name, args) {
    switch (name) {
      case 'length': case 'round': return `${name}(${args.join(', ')})`
      case 'substring': case 'substr': return `substr(${args.join(', ')})`
      case 'unixepoch': return `unixepoch(${args[0] ?? '\'now\''})`
      case 'datetime': case 'date': case 'time':
        return `strftime('${DATE_FORMATS[name]}', ${args[0] ?? '\'now\''})`
      default: return commonFunction(name, args)
    }
  },
  now: () => 'strftime(\'%Y-%m-%d %H:%M:%f\', \'now\')',
  // Every clock this compiler writes is `'now'` (now, and datetime/date/time/unixepoch without an
  // argument); a caller's 'now' is a bound value, never statement text.
  readsClock: (sql) => /'now'|random(blob)?\(/i.test(sql),
  // AUTOINCREMENT follows explicit ids by itself.
  resyncIdentity: () => undefined,
  rowsAs (quotedTable, fields, rows): Fragment {
    const bindings: Binding[] = []
    const selects = rows.map((row) => 'SELECT ' + fields.map((field) => {
      const value = row[field.name]
      const lit = value === null || value === undefined ? { sql: 'NULL', bindings: [] } : sqlite.literal(value, field)
      bindings.push(...lit.bindings)
      // The column's affinity where a CAST gives it without changing the value (never NUMERIC, whose CAST truncates text).
      const affinity = affinityOf(field)
      return `${affinity === undefined || lit.sql === 'NULL' ? lit.sql : `CAST(${lit.sql} AS ${affinity})`} AS ${quote(field.name)}`
    }).join(', '))
    return { sql: `(${selects.join(' UNION ALL ')}) AS ${quotedTable}`, bindings }
  },
  placeholder: () => '?',
  literal (value, field): Fragment {
    if (value === null) return { sql: 'NULL', bindings: [] }
    if (field !== undefined) return { sql: '?', bindings: [encode(field, value)] }
    // better-sqlite3 binds every JS number as a REAL: `'a' || 100` would read `a100.0`. A whole
    // number is bound as an INTEGER, as PostgreSQL types it.
    if (typeof value === 'number' && Number.isSafeInteger(value)) return { sql: '?', bindings: [BigInt(value) as unknown as Binding] }
    return { sql: '?', bindings: [typeof value === 'boolean' ? Number(value) : value as Binding] }
  },
  search: sqliteSearch,
  encode,
  decode,
  readsAsIs,
  rawRows: (result) => (Array.isArray(result) ? result : []),
  constraintViolation (error, table) {
    const code = errorCode(error)
    const kind = typeof code === 'string' ? CONSTRAINT_CODES[code] : undefined
    if (kind === undefined) return undefined
    const message = errorMessage(error)
    return kind === 'trigger' ? { kind, message: driverMessage(message) } : { kind, column: columnFromMessage(message, table) }
  },
  isBusy (error) {
    const code = errorCode(error)
    return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === READERS_BUSY)
  },
  // Only reads on reader threads have a timeout (lib/dialects/sqlite-readers.ts): the others are bounded by what requests may ask.
  isTimeout: (error) => errorCode(error) === READ_TIMEOUT,
  badInput (error) {
    const message = errorMessage(error)
    return /malformed JSON|datatype mismatch|bad JSON path|integer overflow|JSON cannot hold BLOB/i.test(message) ? driverMessage(message) : undefined
  }
}
