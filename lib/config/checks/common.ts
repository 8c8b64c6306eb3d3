// What the cross-field checks share: walking the config's lists with paths, duplicate names, and
// the storage class of each sqlType. The checks run even when the schema check failed (so one
// run shows every problem), which is why they only look at members of the right JS type and skip
// the rest.
import { FIELD_TYPES, type ActionData, type DatabaseSettings, type FieldType, type SqlType, type TableData, type TableField } from '../../../schemas/config.js'
import { isObject } from '../../plain.js'

export type Check = (config: DatabaseSettings) => string[]

export interface At<T> { item: T, path: string }

/** The object members of a list, each with its path; anything else was already reported by the schema. */
export function each<T> (list: unknown, path: string): At<T>[] {
  if (!Array.isArray(list)) return []
  return list.flatMap((item, i) => isObject(item) ? [{ item: item as T, path: `${path}[${i}]` }] : [])
}

/** A single object or a list of objects (actions' `sql` and `steps`). */
export function oneOrMany<T> (value: unknown, path: string): At<T>[] {
  if (Array.isArray(value)) return each<T>(value, path)
  return isObject(value) ? [{ item: value as T, path }] : []
}

export const tablesOf = (c: DatabaseSettings): At<TableData>[] => each<TableData>(c.tables, 'tables')
export const fieldsOf = (t: At<TableData>): At<TableField>[] => each<TableField>(t.item.fields, `${t.path}.fields`)
/** Checks that a column is missing only make sense when the table has a field list at all. */
export const hasFieldList = (t: At<TableData>): boolean => Array.isArray(t.item.fields)
export const actionsOf = (c: DatabaseSettings): At<ActionData>[] => each<ActionData>(c.actions, 'actions')

/** Members by name; the first of duplicates wins (the others are reported by `duplicates`). */
export function byName<T extends { name?: unknown }> (items: At<T>[]): Map<unknown, At<T>> {
  const map = new Map<unknown, At<T>>()
  for (const entry of items) if (!map.has(entry.item.name)) map.set(entry.item.name, entry)
  return map
}

/** Reports the second and later members that share a name. */
export function duplicates<T extends { name?: unknown }> (items: At<T>[], what: string): string[] {
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

export type SqlBase = 'text' | 'integer' | 'real' | 'blob' | 'null'

/** The SQLite storage class the values of each sqlType end up in (numeric is treated as real). */
export const SQL_BASE: Record<SqlType, SqlBase> = {
  text: 'text', json: 'text', date: 'text', datetime: 'text', time: 'text', timestamp: 'text',
  integer: 'integer', int: 'integer', boolean: 'integer',
  real: 'real', float: 'real', numeric: 'real',
  blob: 'blob',
  null: 'null'
}


/** Unknown types and sqlTypes were reported by the schema check; the cross checks skip them. */
export const isFieldType = (type: unknown): type is FieldType => FIELD_TYPES.some((t) => t === type)

export function sqlBase (sqlType: unknown): SqlBase | undefined {
  return isSqlType(sqlType) ? SQL_BASE[sqlType] : undefined
}

function isSqlType (sqlType: unknown): sqlType is SqlType {
  return typeof sqlType === 'string' && Object.hasOwn(SQL_BASE, sqlType)
}
