// Helpers for writing a fastbase config in TypeScript. Everything here returns plain JSON, so a
// config written with the helpers and the same config written as JSON are identical.
// No runtime imports: config files load these through jiti without pulling in the server.
import type { DatabaseSettings, SqlQuery, TableField } from '../../schemas/config.js'

export type { DatabaseSettings, TableData, TableField } from '../../schemas/config.js'

/**
 * A raw SQL fragment: `sql\`CURRENT_TIMESTAMP\`` -> `{ q: 'CURRENT_TIMESTAMP' }`.
 *
 * Interpolation is not allowed (a type error, and a runtime error for JS configs). Fragments end
 * up in DDL (defaults, checks, trigger bodies, index `where`), where bound parameters do not
 * exist, so `${x}` could only be spliced in as text — exactly the injection the rest of fastbase
 * avoids. Use `sqlValue(x)` for a literal and `sqlRaw(q, p)` for `{:name}` parameters.
 */
export function sql (strings: TemplateStringsArray, ...values: never[]): SqlQuery {
  if (values.length > 0) {
    throw new TypeError('sql`...` does not take ${} values: use sqlValue(x) for a literal or sqlRaw(q, { name: x }) with {:name} placeholders')
  }
  return { q: strings.join('') }
}

/** A literal value: `sqlValue(false)` -> `{ l: false }` (rendered as `0` in DDL). */
export function sqlValue<T> (value: T): { l: T } {
  return { l: value }
}

/** Raw SQL with named `{:name}` parameters: `sqlRaw('n > {:min}', { min: 3 })`. */
export function sqlRaw (q: string, p?: Record<string, unknown>): SqlQuery {
  return p === undefined ? { q } : { q, p }
}

/** Identity function that gives a config object its type (and editor completion). */
export function defineConfig (config: DatabaseSettings): DatabaseSettings {
  return config
}

// Scaffolds are shared by every config that spreads them; freezing stops one table's edit
// (`baseFields[0].name = 'uid'`) from silently changing another's.
const frozen = (fields: TableField[]): readonly TableField[] =>
  Object.freeze(fields.map((field) => Object.freeze(field)))

const now = (): SqlQuery => ({ q: 'CURRENT_TIMESTAMP' })

/** `id` (record uid, primary key), `created` and `updated` timestamps. */
export const baseFields: readonly TableField[] = frozen([
  { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true, noUpdate: true },
  { name: 'created', type: 'date', sqlType: 'timestamp', usage: 'record_created', default: now(), notNull: true, noInsert: true, noUpdate: true },
  { name: 'updated', type: 'date', sqlType: 'timestamp', usage: 'record_updated', default: now(), notNull: true, noInsert: true, noUpdate: true }
])

/** The fields an `auth` extension works with. */
export const authFields: readonly TableField[] = frozen([
  { name: 'username', type: 'text', sqlType: 'text', notNull: true, unique: true, usage: 'auth_username' },
  { name: 'email', type: 'email', sqlType: 'text', notNull: true, unique: true, noUpdate: true, usage: 'auth_email' },
  { name: 'email_verified', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false }, noInsert: true, noUpdate: true, usage: 'auth_email_verified' },
  { name: 'password', type: 'text', sqlType: 'text', notNull: true, noSelect: true, usage: 'auth_password' },
  { name: 'password_salt', type: 'text', sqlType: 'text', notNull: true, noSelect: true, noInsert: true, noUpdate: true, usage: 'auth_password_salt' },
  { name: 'name', type: 'text', sqlType: 'text', notNull: true, usage: 'auth_name' },
  { name: 'avatar', type: 'file', sqlType: 'text', usage: 'auth_avatar' },
  { name: 'role', type: 'text', sqlType: 'text', usage: 'auth_audience' },
  { name: 'meta', type: 'json', sqlType: 'json', usage: 'auth_metadata' }
])
