// SQL both dialects write the same way, and the one identifier quote. Only lib/dialects/* import this.
import type { TableData } from '../../schemas/config.js'

/** Identifiers are validated against `^[a-zA-Z_][a-zA-Z0-9_]*$` before they get here; quoting is belt and braces. */
export function quote (name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** Functions with the same name and meaning in SQLite and PostgreSQL. */
export function commonFunction (name: string, args: string[]): string | undefined {
  switch (name) {
    case 'lower': case 'upper': case 'replace': case 'sum': case 'min': case 'max': case 'avg':
    case 'coalesce': case 'abs': case 'concat':
      return `${name}(${args.join(', ')})`
    case 'count': return `count(${args[0] ?? '*'})`
    default: return undefined
  }
}

// Pairs per JSON-object call: PostgreSQL takes at most 100 function arguments (SQLite builds before
// 3.48, 127), and a select list may expand more columns than that.
const JSON_PAIRS_PER_CALL = 50

/** `'key', value, ...` argument lists of at most JSON_PAIRS_PER_CALL pairs each; keys are validated names. */
export function jsonPairArguments (pairs: Array<{ key: string, sql: string }>): string[] {
  const groups: string[] = []
  for (let i = 0; i < pairs.length; i += JSON_PAIRS_PER_CALL) {
    groups.push(pairs.slice(i, i + JSON_PAIRS_PER_CALL).map((p) => `'${p.key.replace(/'/g, "''")}', ${p.sql}`).join(', '))
  }
  return groups
}

/**
 * SQL function both dialects provide (sqlite-connection.ts registers it, postgres-ddl.ts creates
 * it): `fastbase_raise('message')` fails the statement with the message as a trigger error, what
 * `RAISE(ABORT, 'message')` in a SQL-mode action becomes (lib/actions/raise.ts).
 */
export const RAISE_FUNCTION = 'fastbase_raise'

/** Knex prefixes the driver's message with the SQL text: keep only the driver's part (never show SQL). */
export function driverMessage (message: string): string {
  return message.split(' - ').at(-1) ?? ''
}

export function columnFromMessage (fullMessage: string, table: TableData): string | undefined {
  const message = driverMessage(fullMessage)
  const qualified = new RegExp(`\\b${table.name}\\.([A-Za-z_][A-Za-z0-9_]*)`).exec(message)
  if (qualified !== null && table.fields.some((f) => f.name === qualified[1])) return qualified[1]
  const words = message.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []
  for (const word of words) {
    const column = table.fields.some((f) => f.name === word) ? word : columnOfConstraint(word, table)
    if (column !== undefined) return column
  }
  return undefined
}

/** Constraints are named `<table>_<column>_<kind>` by the DDL (PostgreSQL's own convention). */
export function columnOfConstraint (name: string | undefined, table: TableData): string | undefined {
  if (name === undefined || !name.startsWith(`${table.name}_`)) return undefined
  const column = name.slice(table.name.length + 1).replace(/_(key|check|fkey|pkey)$/, '')
  return table.fields.some((f) => f.name === column) ? column : undefined
}
