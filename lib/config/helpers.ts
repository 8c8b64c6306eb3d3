// Helpers for writing a fastbase config in TypeScript. Everything here returns plain JSON, so a
// config written with the helpers and the same config written as JSON are identical.
// No runtime imports: config files load these through jiti without pulling in the server.
import type { DatabaseSettings, SqlQuery, TableField, TableTrigger } from '../../schemas/config.js'

export type { DatabaseSettings, TableData, TableField } from '../../schemas/config.js'

/**
 * A raw SQL fragment: `sql\`CURRENT_TIMESTAMP\`` -> `{ q: 'CURRENT_TIMESTAMP' }`.
 *
 * As in teenybase, `${x}` values are spliced in as SQL text (`sql\`OLD.${field.name} != NEW.${field.name}\``
 * names a column). That text is the config author's own SQL, never a caller's: use `sqlValue(x)` for
 * a literal value and `sqlRaw(q, p)` for `{:name}` parameters bound at run time.
 */
export function sql (strings: TemplateStringsArray, ...values: Array<string | number | boolean | bigint>): SqlQuery {
  let q = strings[0]
  values.forEach((value, i) => {
    if (!['string', 'number', 'boolean', 'bigint'].includes(typeof value)) {
      throw new TypeError(`sql\`...\` splices \${} values as SQL text; got ${value === null ? 'null' : typeof value} (use sqlValue(x) for a literal value)`)
    }
    q += String(value) + strings[i + 1]
  })
  return { q }
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

/** A field: `tableField('title', 'text', 'text', { notNull: true })`, teenybase's shorthand. */
export function tableField<N extends string> (name: N, type: TableField['type'], sqlType: TableField['sqlType'], props: Omit<Partial<TableField>, 'name' | 'type' | 'sqlType'> = {}): TableField & { name: N } {
  return { name, type, sqlType, ...props }
}

/** teenybase's usage names as enums (`usage: TableFieldUsageRecord.record_uid`); plain strings work too. */
export enum TableFieldUsageRecord {
  record_uid = 'record_uid',
  record_created = 'record_created',
  record_updated = 'record_updated'
}

export enum TableFieldUsageAuth {
  auth_username = 'auth_username',
  auth_email = 'auth_email',
  auth_email_verified = 'auth_email_verified',
  auth_password = 'auth_password',
  auth_password_salt = 'auth_password_salt',
  auth_name = 'auth_name',
  auth_avatar = 'auth_avatar',
  auth_audience = 'auth_audience',
  auth_metadata = 'auth_metadata'
}

/** teenybase's field `type` names as an enum (`type: TableFieldDataType.relation`). */
export enum TableFieldDataType {
  text = 'text', number = 'number', bool = 'bool', email = 'email', url = 'url', editor = 'editor', date = 'date',
  select = 'select', json = 'json', file = 'file', relation = 'relation', password = 'password', integer = 'integer', blob = 'blob'
}

/** teenybase's storage types: the five SQLite affinities... */
export enum TableFieldSqlDataType0 {
  text = 'text', integer = 'integer', real = 'real', blob = 'blob', null = 'null'
}

/** ...and the aliases that map onto them. */
export enum TableFieldSqlDataType1 {
  json = 'json', date = 'date', datetime = 'datetime', time = 'time', timestamp = 'timestamp',
  float = 'float', int = 'int', boolean = 'boolean', numeric = 'numeric'
}

/** Stands for the table's own name in a trigger body (teenybase's scaffold token). */
export const TABLE_REF_TOKEN = '\u0000TABLEREF\u0000'

/**
 * Refuses a write that changes `created` (for raw SQL: the API already refuses it). On PostgreSQL
 * the `SELECT RAISE(...) WHERE ...` idiom becomes a PL/pgSQL `RAISE EXCEPTION` (lib/dialects/postgres-ddl.ts).
 */
export const createdTrigger: TableTrigger = Object.freeze({
  name: 'raise_on_created_update',
  seq: 'BEFORE',
  event: 'UPDATE',
  updateOf: ['created'],
  body: { q: "SELECT RAISE(FAIL, 'Cannot update created column') WHERE OLD.created != NEW.created" }
})

/** Sets `updated` on writes that did not (raw SQL: the API sets it itself). Assumes an `id` uid column, as teenybase's. */
export const updatedTrigger: TableTrigger = Object.freeze({
  name: 'update_updated_on_update',
  seq: 'AFTER',
  event: 'UPDATE',
  body: { q: `UPDATE ${TABLE_REF_TOKEN} SET updated = CURRENT_TIMESTAMP WHERE id = NEW.id AND OLD.updated = NEW.updated` }
})
