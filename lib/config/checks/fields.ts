// Cross-field checks of single fields: type against sqlType, defaults against notNull, and a
// select field's values against its column's storage class.
import type { DatabaseSettings, FieldType } from '../../../schemas/config.js'
import { isObject } from '../../plain.js'
import { thumbSizeProblem } from '../../files/thumb-sizes.js'
import { fieldsOf, isFieldType, sqlBase, tablesOf, type SqlBase } from './common.js'

/** `type`s each storage class can hold. `password` on text is a fastbase addition (teenybase allows it nowhere). */
const TYPES_FOR_BASE: Record<SqlBase, readonly FieldType[]> = {
  text: ['text', 'json', 'date', 'file', 'editor', 'select', 'email', 'url', 'relation', 'password'],
  integer: ['number', 'integer', 'bool', 'select', 'relation'],
  real: ['number', 'select', 'relation'],
  blob: ['blob'],
  null: ['text']
}

export function checkTypes (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      const base = sqlBase(field.sqlType)
      // An unknown type was already reported by the schema check.
      if (base === undefined || !isFieldType(field.type)) continue
      const allowed = TYPES_FOR_BASE[base]
      if (!allowed.some((type) => type === field.type)) {
        problems.push(`${path}.type: "${field.type}" is not allowed with sqlType "${field.sqlType}" (allowed: ${allowed.join(', ')})`)
      }
    }
  }
  return problems
}

/** `{l: null}`, or SQL that is just NULL. */
function isNullDefault (value: unknown): boolean {
  if (isObject(value) && 'l' in value) return value.l === null
  const sqlText = isObject(value) ? value.q : value
  return typeof sqlText === 'string' && sqlText.trim().toUpperCase() === 'NULL'
}

export function checkDefaults (c: DatabaseSettings): string[] {
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

export function checkSelectValues (c: DatabaseSettings): string[] {
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

/** `thumbs` only on file fields, each a size this server makes (lib/files/thumb-sizes.ts), none twice. */
export function checkThumbs (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      if (!Array.isArray(field.thumbs)) continue
      if (field.type !== 'file') {
        problems.push(`${path}.thumbs: only fields of type file take thumbs`)
        continue
      }
      const seen = new Set<unknown>()
      field.thumbs.forEach((size: unknown, i) => {
        const problem = thumbSizeProblem(size)
        if (problem !== undefined) problems.push(`${path}.thumbs[${i}]: ${JSON.stringify(size)} ${problem}`)
        else if (seen.has(size)) problems.push(`${path}.thumbs[${i}]: ${String(size)} is listed twice`)
        seen.add(size)
      })
    }
  }
  return problems
}
