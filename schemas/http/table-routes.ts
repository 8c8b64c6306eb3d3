// Request/response schemas of the table routes. Query strings are coerced (TypeBox Convert); bodies are not.
// They are the one statement of what a request holds: the routes take their request types from them
// (the TypeBox type provider), and the compiler checks those against what lib/crud reads.
import { Type } from '@sinclair/typebox'
import type { TableData } from '../config.js'
import { insertRecordSchema, updateRecordSchema, recordSchema } from './record.js'
import { ErrorSchema } from './error.js'
import type { Limits } from '../../lib/limits.js'
import { CONFLICTS } from '../../lib/crud/statements.js'

const Conflict = Type.Union(CONFLICTS.map((c) => Type.Literal(c)), { description: 'What to do on a unique conflict' })

/** Schema builders bounded by the app's `limits` (decision D38). */
function bounded (limits: Limits) {
  const Expression = (description: string, minLength = 0) => Type.String({ minLength, maxLength: limits.expressionLength, description })
  const StringList = (description: string, maxItems: number) => Type.Union([
    Type.String({ maxLength: limits.expressionLength }),
    Type.Array(Type.String({ maxLength: limits.expressionLength }), { maxItems })
  ], { description })
  return {
    Expression,
    Columns: (description: string) => StringList(description, limits.columns),
    /** Relations are bounded per list: the route's description says how many. */
    relations: `at most ${limits.relations} relations, every level counting one`,
    Terms: (description: string) => StringList(description, limits.orderTerms)
  }
}

/**
 * Query (and select/list body) schemas shared by every table's routes. Parameters they do not name are
 * ignored (decision D36: teenybase clients send some, e.g. `list?fields=id`); nothing reads them.
 */
export function querySchemas (limits: Limits) {
  const { Expression, Columns, Terms, relations } = bounded(limits)
  return {
    read: Type.Object({
      where: Type.Optional(Expression('Filter expression, e.g. `views > 10 & title ~ \'%news%\'`')),
      order: Type.Optional(Terms('`-created`, `title`, `created DESC`; comma-separated or array')),
      sort: Type.Optional(Terms('Alias of order')),
      limit: Type.Optional(Type.Integer({ minimum: 0, description: `Max rows (capped by maxLimit, ${limits.maxLimit}, and by ${limits.cells} values per answer)` })),
      offset: Type.Optional(Type.Integer({ minimum: 0 })),
      select: Type.Optional(Columns(`Columns, \`expr as name\`, or relations such as \`owner(name, id)\` (${relations}); comma-separated or array`)),
      distinct: Type.Optional(Type.Boolean()),
      skipTotal: Type.Optional(Type.Boolean({ description: 'list: skip counting the matching rows (`total` is -1), as PocketBase does; for large tables' })),
      estimateTotal: Type.Optional(Type.Boolean({ description: 'list: on PostgreSQL, `total` is the query planner\'s estimate when that is 10,000 rows or more (exact below; always exact on SQLite), as PostgREST\'s `count=estimated`' })),
      group: Type.Optional(Terms('Columns to group by'))
    }),
    view: Type.Object({
      select: Type.Optional(Columns(`Columns, \`expr as name\`, or relations such as \`owner(name)\` (${relations})`)),
      where: Type.Optional(Expression('Additional filter'))
    }),
    edit: Type.Object({
      returning: Type.Optional(Columns(`Columns to return (relations too: \`owner(name)\`, ${relations}); default: the uid field`)),
      or: Type.Optional(Type.Union([...CONFLICTS, 'INSERT' as const].map((c) => Type.Literal(c)), { description: 'INSERT creates the record when it does not exist' }))
    })
  }
}

export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) })

export function tableSchemas (table: TableData, limits: Limits) {
  const { Expression, Columns, relations } = bounded(limits)
  const Returning = Columns(`Columns to return (\`*\` for all; relations such as \`owner(name)\`, ${relations}); omitted: empty response`)
  const record = recordSchema(table)
  const insertRecord = insertRecordSchema(table)
  const updateRecord = updateRecordSchema(table)
  return {
    record,
    records: Type.Array(record),
    list: Type.Object({ items: Type.Array(record), total: Type.Integer() }),
    insertBody: Type.Object({
      values: Type.Union([insertRecord, Type.Array(insertRecord, { maxItems: limits.writeRows })]),
      returning: Type.Optional(Returning),
      or: Type.Optional(Conflict)
    }, { additionalProperties: false }),
    updateBody: Type.Object({
      where: Expression('Rows to update', 1),
      setValues: Type.Optional(updateRecord),
      set: Type.Optional(Type.Record(Type.String(), Expression('Expression over the current row, e.g. `views + 1`'), { maxProperties: table.fields.length })),
      returning: Type.Optional(Returning),
      or: Type.Optional(Conflict)
    }, { additionalProperties: false }),
    editBody: updateRecord,
    deleteBody: Type.Object({
      where: Expression('Rows to delete', 1),
      returning: Type.Optional(Returning)
    }, { additionalProperties: false })
  }
}

export const errorResponses = {
  400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 503: ErrorSchema
}
