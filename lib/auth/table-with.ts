// An auth table narrowed to the columns a flow needs. Which roles a table's columns play comes from its
// config (lib/auth/fields.ts), so this is a check at run time; past it, the types say the columns exist.
import type { TableField } from '../../schemas/config.js'
import type { AuthFields } from './fields.js'
import type { AuthTable } from './types.js'

/** The roles AuthFields may lack: one column each. */
export type OptionalRole = 'username' | 'email' | 'verified' | 'password' | 'salt' | 'name' | 'avatar' | 'meta'
/** AuthFields with the columns of `K`. */
export type FieldsWith<K extends OptionalRole> = AuthFields & Record<K, TableField>
/** An auth table whose fields have the columns of `K`. */
export type AuthTableWith<K extends OptionalRole> = AuthTable & { fields: FieldsWith<K> }

/** Whether `fields` has a column for each of `roles`. */
export function fieldsHave<K extends OptionalRole> (fields: AuthFields, ...roles: K[]): fields is FieldsWith<K> {
  return roles.every((role) => fields[role] !== undefined)
}

/** Whether the table has a column for each of `roles`. */
export function tableHas<K extends OptionalRole> (at: AuthTable, ...roles: K[]): at is AuthTableWith<K> {
  return fieldsHave(at.fields, ...roles)
}
