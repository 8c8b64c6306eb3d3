// A table's record schemas, generated from its fields (decision D2): they validate writes and
// document records in the OpenAPI output.
import { Kind, Type, type TSchema, type TObject } from '@sinclair/typebox'
import type { TableData, TableField } from '../config.js'
import { authExtensionOf, authFieldsOf } from '../../lib/auth/fields.js'

function valueSchema (field: TableField): TSchema {
  const description = field.description
  if (field.values !== undefined) return Type.Union(field.values.map((v) => Type.Literal(v)), { description })
  switch (field.type) {
    case 'email': return Type.String({ format: 'email', description })
    case 'url': return Type.String({ format: 'uri', description })
    case 'integer': return Type.Integer({ description })
    case 'number': return Type.Number({ description })
    case 'bool': return Type.Boolean({ description })
    case 'date': return Type.String({ format: 'date-time', description })
    case 'json': return Type.Unknown({ description: description ?? 'Any JSON value' })
    case 'relation': return field.sqlType === 'integer' || field.sqlType === 'int' ? Type.Integer({ description }) : Type.String({ description })
    default: return Type.String({ description })
  }
}

function nullable (field: TableField, schema: TSchema): TSchema {
  return field.notNull === true || field.type === 'json' ? schema : Type.Union([schema, Type.Null()])
}

/** A field must be given on insert when the database could not fill it. */
function requiredOnInsert (table: TableData, field: TableField): boolean {
  return field.notNull === true && field.default === undefined && field.autoIncrement !== true &&
    !(field.usage === 'record_uid' && table.autoSetUid === true) &&
    field.usage !== 'record_created' && field.usage !== 'record_updated' && field.noInsert !== true
}

/** An auth table's password confirm / current fields: written alongside the password, never stored. */
function passwordCompanions (table: TableData): Record<string, TSchema> {
  const ext = authExtensionOf(table)
  if (ext === undefined) return {}
  const fields = authFieldsOf(table, ext)
  const names = [fields.confirmName, fields.currentName].filter((n): n is string => n !== undefined)
  return Object.fromEntries(names.map((n) => [n, Type.Optional(Type.String())]))
}

/** A stored value of `field` as JSON (null where the column may hold NULL): the type of a record's key. */
export function fieldValueSchema (field: TableField): TSchema {
  return nullable(field, valueSchema(field))
}

/** Insert body of one record. */
export function insertRecordSchema (table: TableData): TObject {
  const properties = Object.fromEntries(table.fields.map((f) => {
    const schema = nullable(f, valueSchema(f))
    return [f.name, requiredOnInsert(table, f) ? schema : Type.Optional(schema)]
  }))
  return Type.Object({ ...properties, ...passwordCompanions(table) }, { additionalProperties: false, title: `${table.name} insert` })
}

/** Update body: any subset of the fields. */
export function updateRecordSchema (table: TableData): TObject {
  const properties = Object.fromEntries(table.fields.map((f) => [f.name, Type.Optional(nullable(f, valueSchema(f)))]))
  return Type.Object({ ...properties, ...passwordCompanions(table) }, { additionalProperties: false, title: `${table.name} update` })
}

const NULL = { type: 'null' }
// An object of any keys, written as it is: fast-json-stringify drops the keys an object schema does
// not list, and the keys of an expanded record depend on the request.
const ANY_RECORD = { type: 'object', additionalProperties: true }

/**
 * `schema` or one of `others` (plain single-type schemas), as a type list (`type: ['string', 'null']`)
 * where `schema` has one plain type: the response serializer writes those directly, while an anyOf
 * makes it validate every value against each branch (date-time formats included) to choose how to write it.
 */
function orElse (schema: TSchema, others: Array<{ type: string }>): TSchema {
  const type = (schema as { type?: unknown }).type
  if (typeof type !== 'string') return Type.Union([schema, ...others.map((o) => Type.Unsafe(o))])
  const { [Kind]: _kind, ...plain } = schema as TSchema & Record<string, unknown>
  return Type.Unsafe(Object.assign({}, ...others, plain, { type: [type, ...others.map((o) => o.type)] }))
}

/**
 * A record in responses: the table's fields (a select may add computed keys). A foreign key field may
 * also hold the record it references, when a select expands the relation under its name (`owner(name)`).
 */
export function recordSchema (table: TableData): TObject {
  const properties = Object.fromEntries(table.fields.map((f) => [f.name, Type.Optional(orElse(valueSchema(f), f.foreignKey === undefined ? [NULL] : [NULL, ANY_RECORD]))]))
  return Type.Object(properties, { additionalProperties: true, title: `${table.name} record` })
}
