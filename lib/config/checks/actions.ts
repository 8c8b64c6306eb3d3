// Cross-field checks of actions: unique names, one of sql or steps, tables that exist, and param
// defaults of the param's type.
import type { DatabaseSettings } from '../../../schemas/config.js'
import { isObject } from '../../plain.js'
import { actionsOf, duplicates, oneOrMany, tablesOf } from './common.js'

/** `path.key`, or `path["odd key"]` when the key is not an identifier. */
function member (path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

const PARAM_CHECKS: Record<string, { test: (v: unknown) => boolean, kind: string }> = {
  string: { test: (v) => typeof v === 'string', kind: 'a string' },
  number: { test: (v) => typeof v === 'number' && Number.isFinite(v), kind: 'a number' },
  integer: { test: (v) => Number.isInteger(v), kind: 'an integer' },
  boolean: { test: (v) => typeof v === 'boolean', kind: 'a boolean' }
}

export function checkActions (c: DatabaseSettings): string[] {
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
