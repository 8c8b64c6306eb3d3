// Start-up validation of the project config, the one entry point. Every problem is collected
// (never just the first) and reported as `path: message`, where the path is written the way a
// developer would index the config object: `tables[1].fields[3].type`.
//   - teenybase keys: lib/config/teenybase.ts (used, or dropped with a warning)
//   - the schema (TypeBox), explained: lib/config/explain.ts
//   - cross-field checks: lib/config/checks/
import type { DatabaseSettings } from '../../schemas/config.js'
import { adaptTeenybaseKeys } from './teenybase.js'
import { schemaProblems } from './explain.js'
import { CROSS_CHECKS } from './checks/index.js'
import { clonePlain, isObject } from '../plain.js'

export { ConfigError } from '../errors.js'

/** A usable config with the warnings to log once at start (teenybase keys dropped), or every problem. */
export type ValidationResult = { config: DatabaseSettings, warnings: string[] } | { problems: string[] }

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
