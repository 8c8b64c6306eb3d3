// The finishing pass over the OpenAPI document @fastify/swagger builds from the route schemas
// (plugins/docs.ts runs it as `transformObject`). The route schemas are what the server validates
// and serializes with, and they are deliberately lenient (a select may narrow a record to any keys,
// teenybase clients send fields the server then refuses with 403, multipart bodies are turned into
// JSON before validation). This pass gives clients the view they need, from the same config:
// - shared components per table (`<table>` record, `<table>.list`, `<table>.new`, `<table>.changes`,
//   `<table>.insert` / `.update` / `.delete` request bodies, `<table>.session`), referenced, not inlined;
// - records with required and nullable keys from the fields (primary key and notNull fields are
//   required and non-null; noSelect fields are optional, admins only);
// - write bodies without the fields the server refuses (noInsert / noUpdate bind everyone,
//   decision D25), multipart bodies as `@filePayload` binary parts plus an `@jsonPayload` JSON part;
// - file downloads with a named `{path}` parameter and binary answers (200, 206, 304);
// - every status a route answers, with the `{ code, message, data? }` body; operationIds, tags,
//   descriptions, a `servers` entry and examples that work against a database holding the example records.
// Nothing here reads a secret: only table, field and action names, types and descriptions.
import type { TableDescriptor } from '../lib/table.js'
import { ERROR_CODE_HEADER, ERROR_CODES_BY_STATUS } from '../lib/errors.js'
import type { ActionData, AuthExtension, DatabaseSettings, TableField } from './config.js'
import { authExtensionOf, authFieldsOf, type AuthFields } from '../lib/auth/fields.js'

type Json = Record<string, any>

export interface DocumentSource {
  prefix: string
  config: DatabaseSettings
  tables: TableDescriptor[]
  /** `code`: written in code, answering what its handler returns (its route's response schema stands). */
  actions: Array<ActionData & { code?: boolean }>
  version: string
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const MULTIPART = 'multipart/form-data'
const EXAMPLE_DATE = '2026-01-02T03:04:05.000Z'
export const EXAMPLE_PASSWORD = 'correct horse battery staple'

/** The example id of a table's records: the test database (and Swagger UI users) seed records under it. */
export function exampleId (table: TableDescriptor): string | number {
  const key = table.uid ?? table.key[0]
  if (key !== undefined && (key.type === 'integer' || key.sqlType === 'integer' || key.sqlType === 'int')) return 1
  return `example-${table.name}-1`
}

// ------------------------------------------------------------------ errors and responses

const STATUS: Record<number, { name: string, description: string, example: Json }> = {
  400: { name: 'BadRequest', description: 'Invalid parameters or body: a validation error names each field in `data`, a constraint violation (unique, not null, foreign key, check) too', example: { code: 400, message: 'Validation Error', data: { title: { _errors: ['Required'] } } } },
  401: { name: 'Unauthorized', description: 'No valid token where one is needed, or a token that is invalid, expired or revoked', example: { code: 401, message: 'Invalid or expired token' } },
  403: { name: 'Forbidden', description: 'A rule, a guard or the caller\'s role refuses the operation, or the body writes a field nobody may write', example: { code: 403, message: 'Forbidden' } },
  404: { name: 'NotFound', description: 'No such record (or the viewRule hides it), file or action', example: { code: 404, message: 'Not found' } },
  409: { name: 'Conflict', description: 'The database refused a migration: nothing was applied', example: { code: 409, message: 'Migration 00002_posts failed, nothing was applied: UNIQUE constraint failed: posts.slug', data: { migration: '00002_posts' } } },
  413: { name: 'PayloadTooLarge', description: 'The body, a multipart field or an uploaded file is larger than the configured limit', example: { code: 413, message: 'Request body is too large' } },
  415: { name: 'UnsupportedMediaType', description: 'A Content-Type this route does not take', example: { code: 415, message: 'Unsupported Content-Type: application/xml' } },
  416: { name: 'RangeNotSatisfiable', description: 'The Range header asks for bytes the file does not have (`Content-Range: bytes */<size>`)', example: { code: 416, message: 'Range not satisfiable' } },
  429: { name: 'TooManyRequests', description: 'Rate limited: retry after the `retry-after` header\'s seconds', example: { code: 429, message: 'Too many requests, retry in 42s' } },
  500: { name: 'InternalError', description: 'A server error (details are hidden in production and logged with the request id)', example: { code: 500, message: 'Internal Server Error (request req-1)' } },
  502: { name: 'BadGateway', description: 'The identity provider could not be reached or answered an error', example: { code: 502, message: 'The identity provider did not answer: token endpoint' } },
  503: { name: 'ServiceUnavailable', description: 'The database is busy or unreachable, or the server is closing: retry', example: { code: 503, message: 'Database is busy, try again' } }
}

// ------------------------------------------------------------------ field schemas

function baseSchema (field: TableField, target: TableDescriptor | undefined): Json {
  const description = field.description === undefined ? {} : { description: field.description }
  if (field.values !== undefined) return { ...description, type: 'string', enum: [...field.values] }
  switch (field.type) {
    case 'email': return { ...description, type: 'string', format: 'email' }
    case 'url': return { ...description, type: 'string', format: 'uri' }
    case 'integer': return { ...description, type: 'integer' }
    case 'number': return { ...description, type: 'number' }
    case 'bool': return { ...description, type: 'boolean' }
    case 'date': return { ...description, type: 'string', format: 'date-time' }
    case 'json': return { description: field.description ?? 'Any JSON value' }
    case 'file': return { type: 'string', description: field.description ?? 'Stored file name: download it from `/files/{table}/{rid}/{path}`' }
    case 'relation': {
      const key = target === undefined ? undefined : (target.fields.get(field.foreignKey?.column ?? '') ?? target.uid)
      const integer = field.sqlType === 'integer' || field.sqlType === 'int' || key?.type === 'integer'
      return { description: field.description ?? (target === undefined ? 'Reference' : `A \`${target.name}\` record's ${key?.name ?? 'key'}`), type: integer ? 'integer' : 'string' }
    }
    default: return { ...description, type: 'string' }
  }
}

function withNull (schema: Json): Json {
  if (schema.type === undefined) return schema
  const out: Json = { ...schema, type: [schema.type, 'null'] }
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null]
  return out
}

const isKey = (table: TableDescriptor, field: TableField): boolean => field.primary === true || table.key.includes(field)
const neverNull = (table: TableDescriptor, field: TableField): boolean => field.notNull === true || isKey(table, field)

function exampleValue (table: TableDescriptor, field: TableField, target: TableDescriptor | undefined, variant = 0): unknown {
  if (field === table.uid || (isKey(table, field) && table.uid === undefined)) return exampleId(table)
  if (field.values !== undefined) return field.values[0]
  switch (field.usage) {
    case 'auth_email': return ['ada@example.com', 'grace@example.com'][variant]
    case 'auth_username': return ['ada', 'grace'][variant]
    case 'auth_name': return ['Ada Lovelace', 'Grace Hopper'][variant]
    case 'auth_password': return EXAMPLE_PASSWORD
    case 'auth_audience': return 'user'
    case 'record_created': case 'record_updated': return EXAMPLE_DATE
  }
  switch (field.type) {
    case 'email': return 'someone@example.com'
    case 'url': return 'https://example.com/'
    case 'integer': return 1
    case 'number': return 1.5
    case 'bool': return true
    case 'date': return EXAMPLE_DATE
    case 'json': return { example: true }
    case 'file': return `${field.name}_a1b2c3d4e5f6.png`
    case 'relation': return target === undefined ? 'example' : exampleId(target)
    default: return `Example ${field.name}`
  }
}

// ------------------------------------------------------------------ the builder

interface TableView {
  table: TableDescriptor
  auth?: { ext: AuthExtension, fields: AuthFields }
  hasFiles: boolean
  insertable: TableField[]
  updatable: TableField[]
}

class Builder {
  readonly schemas: Json = {}
  readonly responses: Json = {}
  readonly parameters: Json = {}
  readonly views = new Map<string, TableView>()
  readonly rateLimited: boolean

  constructor (readonly source: DocumentSource) {
    this.rateLimited = source.config.rateLimit !== false
    for (const table of source.tables) {
      const ext = authExtensionOf(table.data)
      this.views.set(table.name, {
        table,
        auth: ext === undefined ? undefined : { ext, fields: authFieldsOf(table.data, ext) },
        hasFiles: table.fieldList.some((f) => f.type === 'file'),
        // noInsert / noUpdate bind every caller (decision D25): the server answers 403.
        insertable: table.fieldList.filter((f) => f.noInsert !== true),
        updatable: table.fieldList.filter((f) => f.noUpdate !== true)
      })
    }
  }

  ref (name: string): Json { return { $ref: `#/components/schemas/${name}` } }

  target (field: TableField): TableDescriptor | undefined {
    return field.foreignKey === undefined ? undefined : this.views.get(field.foreignKey.table)?.table
  }

  error (): Json {
    this.schemas.Error ??= {
      type: 'object',
      description: 'Every error: `code` equals the HTTP status.',
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer', description: 'The HTTP status' },
        message: { type: 'string' },
        data: { type: 'object', additionalProperties: true, description: 'Details: per field `{ _errors: [...] }` (validation) or `{ code, message }` (constraints)' }
      }
    }
    return this.ref('Error')
  }

  response (status: number): Json {
    const s = STATUS[status]
    const codes = ERROR_CODES_BY_STATUS[status]
    this.responses[s.name] ??= {
      description: s.description,
      headers: { [ERROR_CODE_HEADER]: { description: 'The error\'s stable code (see the error code table in docs/errors.md)', schema: { type: 'string', enum: codes }, example: codes[0] } },
      content: { [JSON_TYPE]: { schema: this.error(), example: s.example } }
    }
    return { $ref: `#/components/responses/${s.name}` }
  }

  /** The record as answers carry it. */
  record (view: TableView): Json {
    const { table } = view
    const name = table.name
    if (this.schemas[name] === undefined) {
      const visible = table.fieldList
      const properties: Json = {}
      const example: Json = {}
      for (const field of visible) {
        const target = this.target(field)
        let schema = baseSchema(field, target)
        if (!neverNull(table, field)) schema = withNull(schema)
        if (target !== undefined) {
          schema = { anyOf: [schema, { type: 'object', additionalProperties: true, description: `The referenced \`${target.name}\` record, where the select expands the relation (\`${field.name}(name, id)\`)` }], description: schema.description }
        }
        if (field.noSelect === true) schema = { ...schema, description: `${schema.description ?? ''}${schema.description === undefined ? '' : ' '}(noSelect: sent to admins only)`.trim() }
        properties[field.name] = schema
        if (field.noSelect !== true) example[field.name] = exampleValue(table, field, target)
      }
      this.schemas[name] = {
        type: 'object',
        description: `A \`${name}\` record: every column but the noSelect ones (sent to admins only). \`select\` / \`returning\` narrow it to the columns they name and may add computed keys.`,
        // Every column but the noSelect ones is in a full answer (null where it holds none).
        required: visible.filter((f) => f.noSelect !== true).map((f) => f.name),
        properties,
        additionalProperties: true,
        example
      }
    }
    return this.ref(name)
  }

  /** What an edit answers: the uid field alone by default, the `returning` columns when given. */
  edited (view: TableView): Json {
    const { table } = view
    const name = `${table.name}.edited`
    if (this.schemas[name] === undefined) {
      const record = this.schemas[this.record(view).$ref.split('/').pop()]
      const uid = table.uid?.name ?? 'id'
      this.schemas[name] = {
        type: 'object',
        description: `An edited \`${table.name}\` record: only its \`${uid}\` by default; with \`returning\`, the columns (and computed keys) it names, typed as in \`${table.name}\`.`,
        properties: { [uid]: record.properties[uid] },
        additionalProperties: true
      }
    }
    return this.ref(name)
  }

  recordExample (view: TableView): Json { return this.schemas[view.table.name]?.example ?? {} }

  list (view: TableView): Json {
    const name = `${view.table.name}.list`
    this.schemas[name] ??= {
      type: 'object',
      required: ['items', 'total'],
      properties: {
        items: { type: 'array', items: this.record(view) },
        total: { type: 'integer', description: 'Matching rows (groups with `group`); -1 with `skipTotal`' }
      }
    }
    return this.ref(name)
  }

  records (view: TableView): Json {
    return { type: 'array', items: this.record(view) }
  }

  /** A write's fields: `mode` insert (one new record) or update (the changes). */
  fields (view: TableView, mode: 'insert' | 'update'): Json {
    const { table, auth } = view
    const name = `${table.name}.${mode === 'insert' ? 'new' : 'changes'}`
    if (this.schemas[name] === undefined) {
      const fields = mode === 'insert' ? view.insertable : view.updatable
      const properties: Json = {}
      const required: string[] = []
      for (const field of fields) {
        const target = this.target(field)
        let schema = baseSchema(field, target)
        if (field.type === 'file') {
          schema = { type: 'string', description: 'In a multipart body: `@filePayload.<n>`, the n-th `@filePayload` part (0 first). `null` removes the file; any other value is refused.' }
        }
        if (!neverNull(table, field) || field.type === 'file') schema = withNull(schema)
        if (field === table.uid && table.data.autoSetUid === true) schema.description = 'Generated (22 random url-safe characters) when omitted'
        if (field.autoIncrement === true) schema.description = 'Assigned by the database when omitted'
        if (field.noSelect === true && field.usage !== 'auth_password') schema.description = `${schema.description ?? ''} (noSelect: never sent back to non-admins)`.trim()
        if (field.usage === 'auth_password') schema = { ...schema, description: 'Stored hashed; never sent back', writeOnly: true }
        properties[field.name] = schema
        if (mode === 'insert' && requiredOnInsert(table, field)) required.push(field.name)
      }
      if (auth?.fields.confirmName !== undefined && auth.fields.password !== undefined && fields.includes(auth.fields.password)) {
        properties[auth.fields.confirmName] = { type: 'string', writeOnly: true, description: `Must equal \`${auth.fields.password.name}\` whenever it is written` }
        if (mode === 'insert') required.push(auth.fields.confirmName)
      }
      this.schemas[name] = {
        type: 'object',
        description: mode === 'insert'
          ? `A new \`${table.name}\` record. Fields the server refuses to set (noInsert) are left out.`
          : `Changes to \`${table.name}\` records. Fields the server refuses to change (noUpdate) are left out.`,
        ...(required.length > 0 ? { required } : {}),
        properties,
        additionalProperties: false
      }
    }
    return this.ref(name)
  }

  /** A write's example values; `variant` 1 is the sign-up account, distinct from the insert example. */
  writeExample (view: TableView, mode: 'insert' | 'update', variant = 0): Json {
    const { table, auth } = view
    const fields = mode === 'insert' ? view.insertable : view.updatable
    const out: Json = {}
    for (const field of fields) {
      if (field.type === 'file' || field === table.uid || field.autoIncrement === true || field.usage === 'record_created' || field.usage === 'record_updated') continue
      if (mode === 'update' && (field.usage === 'auth_password' || field.unique === true || field.foreignKey !== undefined || isKey(table, field))) continue
      if (mode === 'insert' && !requiredOnInsert(table, field) && field.noSelect === true && field.usage !== 'auth_password') continue
      out[field.name] = mode === 'update' && field.type === 'text' ? `Changed ${field.name}` : exampleValue(table, field, this.target(field), variant)
      if (mode === 'update') break
    }
    if (mode === 'insert' && auth?.fields.confirmName !== undefined && out[auth.fields.password?.name ?? ''] !== undefined) out[auth.fields.confirmName] = EXAMPLE_PASSWORD
    return out
  }

  /** `where` selecting the example record. */
  whereExample (view: TableView): string {
    const key = view.table.uid ?? view.table.key[0]
    if (key === undefined) return 'true'
    const id = exampleId(view.table)
    return typeof id === 'number' ? `${key.name} == ${id}` : `${key.name} == '${id}'`
  }

  requestSchema (view: TableView, kind: 'insert' | 'update' | 'delete', limits: { writeRows: number }): Json {
    const name = `${view.table.name}.${kind}`
    const returning = { description: 'Columns to return (`*` for all; relations such as `owner(name)`); omitted: `[]`', anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
    const or = { type: 'string', enum: ['ABORT', 'FAIL', 'IGNORE', 'REPLACE', 'ROLLBACK'], description: 'What to do on a unique conflict (REPLACE updates the conflicting row)' }
    if (this.schemas[name] === undefined) {
      if (kind === 'insert') {
        const one = this.fields(view, 'insert')
        this.schemas[name] = { type: 'object', required: ['values'], additionalProperties: false, properties: { values: { description: 'One record, or an array for a batch (all or nothing)', anyOf: [one, { type: 'array', items: one, maxItems: limits.writeRows }] }, returning, or } }
      } else if (kind === 'update') {
        this.schemas[name] = { type: 'object', required: ['where'], additionalProperties: false, properties: { where: { type: 'string', minLength: 1, description: 'Rows to update (the updateRule narrows them)' }, setValues: this.fields(view, 'update'), set: { type: 'object', additionalProperties: { type: 'string' }, description: 'Field -> expression over the current row, e.g. `views + 1`' }, returning, or } }
      } else {
        this.schemas[name] = { type: 'object', required: ['where'], additionalProperties: false, properties: { where: { type: 'string', minLength: 1, description: 'Rows to delete (the deleteRule narrows them)' }, returning } }
      }
    }
    return this.ref(name)
  }

  /** An insert as a form: one record (`values[title]=...`); a batch needs JSON, since form names cannot index a list. */
  insertForm (view: TableView, limits: { writeRows: number }): Json {
    const name = `${view.table.name}.insert.form`
    const { properties, ...rest } = this.schemas[this.requestSchema(view, 'insert', limits).$ref.split('/').pop()]
    this.schemas[name] ??= { ...rest, properties: { ...properties, values: { ...this.fields(view, 'insert'), description: 'One record, its fields as `values[<field>]` (a batch needs a JSON body)' } } }
    return this.ref(name)
  }

  session (view: TableView): Json {
    const name = `${view.table.name}.session`
    this.schemas[name] ??= {
      type: 'object',
      required: ['token', 'refresh_token', 'record'],
      properties: {
        token: { type: 'string', description: 'Access token (JWT): send it as `Authorization: Bearer <token>`' },
        refresh_token: { type: 'string', description: 'Single-use refresh token (rotated by refresh-token)' },
        record: { ...this.record(view), description: 'The signed-in account (noSelect fields omitted)' },
        verified: { type: 'boolean', description: 'Whether the email address is verified' }
      }
    }
    return this.ref(name)
  }
}

function requiredOnInsert (table: TableDescriptor, field: TableField): boolean {
  return field.notNull === true && field.default === undefined && field.autoIncrement !== true &&
    !(field === table.uid && table.data.autoSetUid === true) && field.type !== 'file' &&
    field.usage !== 'record_created' && field.usage !== 'record_updated' && field.noInsert !== true
}

// ------------------------------------------------------------------ operations


const json = (schema: Json, example?: unknown): Json => ({ [JSON_TYPE]: example === undefined ? { schema } : { schema, example } })

function setResponses (b: Builder, op: Json, statuses: number[]): void {
  const responses: Json = {}
  for (const [code, response] of Object.entries(op.responses ?? {})) {
    if (/^[23]/.test(code)) responses[code] = response
  }
  for (const status of [...new Set(statuses)].sort((x, y) => x - y)) responses[String(status)] = b.response(status)
  op.responses = responses
}

function ok (op: Json, description: string, content?: Json, code = '200'): void {
  op.responses = { ...(op.responses ?? {}), [code]: content === undefined ? { description } : { description, content } }
}

function setBody (op: Json, content: Json, description?: string): void {
  op.requestBody = { required: true, ...(description === undefined ? {} : { description }), content }
}

/**
 * A form body (`application/x-www-form-urlencoded`) as OpenAPI clients and Swagger UI send it: each
 * object-valued field in `nested` as `name[key]=value` (`deepObject`), which the server reads like
 * `name.key=value`; a list as the name repeated. The example fills Swagger UI's form.
 */
function form (schema: Json, example: Json, nested: string[] = []): Json {
  const encoding = Object.fromEntries(nested.map((name) => [name, { style: 'deepObject', explode: true }]))
  return { [FORM_TYPE]: { schema, example, ...(nested.length > 0 ? { encoding } : {}) } }
}

/** Every media type the write routes take: JSON, forms (teenybase clients), and multipart for tables with files. */
function writeContent (view: TableView, schema: Json, example: Json, multipartExample?: Json, formBody: Json = form(schema, example)): Json {
  const content: Json = { ...json(schema, example), ...formBody }
  if (view.hasFiles && multipartExample !== undefined) {
    content[MULTIPART] = {
      schema: {
        type: 'object',
        required: ['@jsonPayload'],
        properties: {
          '@jsonPayload': { ...schema, description: 'The JSON body; a file field holds `@filePayload.<n>` to take the n-th `@filePayload` part', example: multipartExample },
          '@filePayload': { type: 'array', description: 'The files, in the order `@filePayload.<n>` counts them', items: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } }
        }
      }
      // No `encoding`: an object part is application/json by default (OpenAPI 3.1, 4.8.15), and naming
      // it makes Swagger UI send the part as a file (a Blob named "blob"), which the server refuses.
    }
  }
  return content
}

function tableOperation (b: Builder, view: TableView, kind: string, method: string, op: Json, limits: { writeRows: number }): void {
  const { table } = view
  const t = table.name
  const rule = (name: string) => table.rules[name as keyof typeof table.rules] === null ? 'admins only (no rule)' : `the ${name}`
  const common = [400, 401, 403, 500, 503]
  const bodied = [413, 415]
  switch (kind) {
    case 'select':
    case 'list': {
      const isList = kind === 'list'
      op.operationId = `${t}_${kind}${method === 'post' ? '_post' : ''}`
      op.description = `${isList ? 'A page of' : 'The'} \`${t}\` records the caller may see (${rule('listRule')}), filtered, ordered and paged by the ${method === 'get' ? 'query parameters' : 'body'}${isList ? ', with the total of matching rows' : ''}.`
      ok(op, isList ? `The page and the total` : 'The records', json(isList ? b.list(view) : b.records(view), isList ? { items: [b.recordExample(view)], total: 1 } : [b.recordExample(view)]))
      if (method === 'post') {
        // One schema for every table's select and list bodies.
        b.schemas.ReadQuery ??= { ...(op.requestBody?.content?.[JSON_TYPE]?.schema ?? { type: 'object' }), description: 'What to read: filter, order, page, columns' }
        setBody(op, { [JSON_TYPE]: { schema: b.ref('ReadQuery'), example: { limit: 10 } }, ...form(b.ref('ReadQuery'), { limit: 10 }) })
      } else {
        // The query parameters are the same for every table: shared components.
        op.parameters = ((op.parameters ?? []) as Json[]).map((p) => {
          if (p.in !== 'query') return p
          b.parameters[`read.${p.name}`] ??= p
          return { $ref: `#/components/parameters/read.${p.name}` }
        })
      }
      setResponses(b, op, [...common, ...(method === 'post' ? bodied : [])])
      return
    }
    case 'view':
      op.operationId = `${t}_view`
      op.description = `One \`${t}\` record by its ${table.uid?.name ?? 'id'} (${rule('viewRule')}; a hidden record is a 404).`
      ok(op, 'The record', json(b.record(view), b.recordExample(view)))
      setResponses(b, op, [...common, 404])
      exampleParam(op, 'id', exampleId(table))
      return
    case 'insert': {
      op.operationId = `${t}_insert`
      op.description = `Inserts one record or a batch (${rule('createRule')}, checked against each new row). Without \`returning\` the answer is \`[]\`.` +
        (view.hasFiles ? ' Files are uploaded as multipart `@filePayload` parts referenced from the `@jsonPayload` part.' : '')
      const values = b.writeExample(view, 'insert')
      const files = table.fieldList.filter((f) => f.type === 'file' && f.noInsert !== true)
      const withFiles = { values: { ...values, ...Object.fromEntries(files.slice(0, 1).map((f) => [f.name, '@filePayload.0'])) }, returning: '*' }
      setBody(op, writeContent(view, b.requestSchema(view, 'insert', limits), { values, returning: '*' }, withFiles, form(b.insertForm(view, limits), { values, returning: '*' }, ['values'])))
      ok(op, 'The `returning` columns of the inserted records (`[]` without `returning`)', json(b.records(view), [b.recordExample(view)]))
      setResponses(b, op, [...common, ...bodied])
      return
    }
    case 'update': {
      op.operationId = `${t}_update`
      op.description = `Updates the rows \`where\` selects that the ${rule('updateRule')} lets the caller change. Without \`returning\` the answer is \`[]\`.`
      const example = { where: b.whereExample(view), setValues: b.writeExample(view, 'update'), returning: '*' }
      const files = table.fieldList.filter((f) => f.type === 'file' && f.noUpdate !== true)
      const withFiles = { ...example, setValues: { ...example.setValues, ...Object.fromEntries(files.slice(0, 1).map((f) => [f.name, '@filePayload.0'])) } }
      setBody(op, writeContent(view, b.requestSchema(view, 'update', limits), example, withFiles, form(b.requestSchema(view, 'update', limits), example, ['setValues', 'set'])))
      ok(op, 'The `returning` columns of the changed records (`[]` without `returning`)', json(b.records(view), [b.recordExample(view)]))
      setResponses(b, op, [...common, ...bodied])
      return
    }
    case 'delete': {
      op.operationId = `${t}_delete`
      op.description = `Deletes the rows \`where\` selects that the ${rule('deleteRule')} lets the caller delete (their files too). Without \`returning\` the answer is \`[]\`.`
      const example = { where: b.whereExample(view), returning: '*' }
      setBody(op, { ...json(b.requestSchema(view, 'delete', limits), example), ...form(b.requestSchema(view, 'delete', limits), example) })
      ok(op, 'The `returning` columns of the deleted records (`[]` without `returning`)', json(b.records(view), [b.recordExample(view)]))
      setResponses(b, op, [...common, ...bodied])
      return
    }
    case 'edit': {
      op.operationId = `${t}_edit`
      op.description = `Changes one record by its ${table.uid?.name ?? 'id'} (${rule('updateRule')}); the body is the bare fields. \`or=INSERT\` creates it when missing (createRule). Answers the \`returning\` columns (default: the ${table.uid?.name ?? 'id'}).`
      const example = b.writeExample(view, 'update')
      const files = table.fieldList.filter((f) => f.type === 'file' && f.noUpdate !== true)
      setBody(op, writeContent(view, b.fields(view, 'update'), example, { ...example, ...Object.fromEntries(files.slice(0, 1).map((f) => [f.name, '@filePayload.0'])) }))
      ok(op, `The record's ${table.uid?.name ?? 'id'} (the \`returning\` columns when given)`, json(b.edited(view), { [table.uid?.name ?? 'id']: exampleId(table) }))
      setResponses(b, op, [...common, ...bodied, 404])
      exampleParam(op, 'id', exampleId(table))
    }
  }
}

function exampleParam (op: Json, name: string, example: unknown): void {
  const param = (op.parameters as Json[] | undefined)?.find((p) => p.in === 'path' && p.name === name)
  if (param !== undefined) param.example = example
}

function authOperation (b: Builder, view: TableView, suffix: string, op: Json): void {
  const t = view.table.name
  const limited = b.rateLimited ? [429] : []
  const session = (description: string) => ok(op, description, json(b.session(view), { token: 'eyJhbGciOiJIUzI1NiJ9.e30.signature', refresh_token: 'r1Xq9-example-refresh-token', record: b.recordExample(view) }))
  const success = { [JSON_TYPE]: { schema: { type: 'object', required: ['success'], properties: { success: { type: 'boolean' } } }, example: { success: true } } }
  const id = suffix.replace(/[^A-Za-z0-9]+/g, '_')
  op.operationId = `${t}_auth_${id === 'login_password' ? 'login' : id}`
  op.description ??= op.summary
  const fields = view.auth?.fields
  const password = fields?.password?.name ?? 'password'
  const media = op.requestBody?.content?.[JSON_TYPE] as Json | undefined
  const bodyExample = (example: Json) => { if (media !== undefined) media.example = example }
  const confirm = fields?.confirmName === undefined ? {} : { [fields.confirmName]: EXAMPLE_PASSWORD }
  const email = fields?.email === undefined ? undefined : exampleValue(view.table, fields.email, undefined, 1)
  switch (suffix) {
    case 'change-password':
      bodyExample({ [password]: EXAMPLE_PASSWORD, ...confirm, ...(fields?.currentName === undefined ? {} : { [fields.currentName]: EXAMPLE_PASSWORD }) })
      break
    case 'request-password-reset':
      if (fields?.email !== undefined) bodyExample({ [fields.email.name]: email })
      break
    case 'confirm-password-reset':
      bodyExample({ token: 'the token from the reset email', [password]: EXAMPLE_PASSWORD, ...confirm })
      break
    case 'confirm-verification':
      bodyExample({ token: 'the token from the verification email' })
      break
    case 'refresh-token':
      bodyExample({ refresh_token: 'the refresh_token of the last sign-in or refresh' })
      break
  }
  switch (suffix) {
    case 'sign-up': {
      const name = `${t}.sign-up`
      const insert = b.fields(view, 'insert')
      b.schemas[name] ??= { ...b.schemas[insert.$ref.split('/').pop()], description: `A new \`${t}\` account; keys that name no field are ignored.`, additionalProperties: true }
      setBody(op, json(b.ref(name), b.writeExample(view, 'insert', 1)))
      session('The new account\'s session')
      setResponses(b, op, [400, 401, 403, 413, 415, 500, 503, ...limited])
      return
    }
    case 'login-password': {
      bodyExample({ identity: exampleValue(view.table, fields?.email ?? fields?.username ?? view.table.fieldList[0], undefined, 1), password: EXAMPLE_PASSWORD })
      session('A new session')
      setResponses(b, op, [400, 401, 413, 415, 500, 503, ...limited])
      return
    }
    case 'refresh-token':
      session('New tokens (the refresh token is rotated)')
      setResponses(b, op, [400, 401, 413, 415, 500, 503, ...limited])
      return
    case 'confirm-password-reset':
      session('A new session (every other session is revoked)')
      setResponses(b, op, [400, 401, 413, 415, 500, 503, ...limited])
      return
    case 'confirm-verification': {
      const session = b.session(view)
      ok(op, 'The verified account (with a new session when the caller was not signed in as it)', json({ anyOf: [session, { type: 'object', required: ['record'], properties: { record: b.record(view) } }] }))
      setResponses(b, op, [400, 401, 413, 415, 500, 503, ...limited])
      return
    }
    case 'login-token':
      session('A session for the external token\'s user (found by verified email, or created)')
      setResponses(b, op, [400, 401, 403, 500, 503, ...limited])
      return
    case 'logout':
    case 'change-password':
    case 'request-password-reset':
    case 'request-verification':
      ok(op, { logout: 'The session is ended and the auth cookie cleared', 'change-password': 'Changed', 'request-password-reset': 'Accepted (sent when the account exists)', 'request-verification': 'Sent' }[suffix]!, success)
      setResponses(b, op, [400, 401, 500, 503, ...(suffix === 'logout' ? [] : [413, 415, ...limited])])
      return
    case 'oauth/{provider}':
      op.operationId = `${t}_auth_oauth`
      op.responses = { 302: { description: 'To the provider\'s authorization page (sets the state cookie)', headers: { Location: { description: 'The provider\'s authorization URL', schema: { type: 'string', format: 'uri' } } } } }
      setResponses(b, op, [400, 401, 404, 500, 502, 503, ...limited])
      // This route never answers 2xx: every other outcome is one of the errors above.
      op.responses.default = { description: 'Any other error', content: json(b.error()) }
      return
    case 'oauth/{provider}/callback':
      op.operationId = `${t}_auth_oauth_callback`
      session('The session, when no authCookie is configured')
      op.responses['302'] = { description: 'With authCookie configured: the cookie is set and the browser sent to the flow\'s redirect (with `error` and `error_description` on a refusal)', headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } } }
      setResponses(b, op, [400, 401, 403, 404, 500, 502, 503, ...limited])
      return
    default:
      if (suffix.endsWith('-login')) {
        session('The session (the auth cookie is set when authCookie is configured)')
        setResponses(b, op, [400, 401, 403, 413, 415, 500, 503, ...limited])
      }
  }
}

function actionOperation (b: Builder, action: ActionData & { code?: boolean }, op: Json): void {
  op.operationId = `action_${action.name.replace(/[^A-Za-z0-9_]+/g, '_')}`
  op.description = action.description ?? `Runs the \`${action.name}\` action${action.requireAuth === true ? ' (a signed-in user is required)' : ''}.`
  op.summary ??= `Run the ${action.name} action`
  const params: Json = {}
  for (const [name, p] of Object.entries(action.params ?? {})) {
    const full = typeof p === 'string' ? { type: p } : p
    if ((full as { optional?: boolean }).optional === true && (full as { default?: unknown }).default === undefined) continue
    params[name] = (full as { default?: unknown }).default ?? ({ string: 'example', number: 1, integer: 1, boolean: true } as Json)[full.type]
  }
  const body = op.requestBody?.content?.[JSON_TYPE]
  if (body !== undefined) body.example = params
  if (action.code !== true) ok(op, 'One array of rows per query or step, in order', json({ type: 'array', items: { type: 'array', items: { type: 'object', additionalProperties: true } } }, [[{ n: 1 }]]))
  setResponses(b, op, [400, 401, 403, 404, 413, 415, 500, 503])
}

function filesOperation (b: Builder, op: Json, fileTables: TableView[]): void {
  op.operationId = 'files_download'
  op.description = 'A file stored in a record\'s file field: the record must exist, `path` must be the value of one of its file fields, and the caller must pass the table\'s viewRule. ' +
    'Supports conditional GET (ETag, Last-Modified) and single byte ranges. Types a browser could run (HTML, SVG...) are sent as attachments.'
  for (const param of (op.parameters ?? []) as Json[]) {
    if (param.in !== 'path') continue
    if (param.name === '*') {
      param.name = 'path'
      param.description = 'The stored file name: the value of the record\'s file field'
      param.example = 'photo_a1b2c3d4e5f6.png'
    }
    if (param.name === 'table') {
      param.description = 'A table with file fields'
      if (fileTables.length > 0) {
        param.schema = { type: 'string', enum: fileTables.map((v) => v.table.name) }
        param.example = fileTables[0].table.name
      }
    }
    if (param.name === 'rid') {
      param.description = 'The record\'s id'
      if (fileTables.length > 0) param.example = exampleId(fileTables[0].table)
    }
  }
  const binary = { '*/*': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file, with its stored Content-Type' } } }
  const headers = {
    ETag: { description: 'The file\'s entity tag', schema: { type: 'string' } },
    'Last-Modified': { description: 'When the file was stored', schema: { type: 'string' } },
    'Content-Disposition': { description: '`inline` for images, PDF, plain text, audio and video; `attachment` otherwise', schema: { type: 'string' } }
  }
  op.responses = {
    200: { description: 'The whole file', headers, content: binary },
    206: { description: 'The requested byte range', headers: { ...headers, 'Content-Range': { description: '`bytes <start>-<end>/<size>`', schema: { type: 'string' } } }, content: binary },
    304: { description: 'Not modified (If-None-Match / If-Modified-Since)' }
  }
  op.parameters = [...(op.parameters ?? []),
    { in: 'header', name: 'Range', required: false, description: 'One byte range: `bytes=<start>-<end>`, `bytes=<start>-` or `bytes=-<n>`', schema: { type: 'string' } },
    { in: 'header', name: 'If-None-Match', required: false, description: 'An ETag from an earlier answer: 304 when unchanged', schema: { type: 'string' } }]
  setResponses(b, op, [400, 401, 404, 416, 500, 503])
}

function otherOperation (b: Builder, rel: string, method: string, op: Json): void {
  const limited = b.rateLimited ? [429] : []
  const ids: Record<string, [string, number[]]> = {
    'get /health': ['health', [401, 503]],
    'get /health/ready': ['health_ready', [401, 503]],
    'get /backups': ['admin_backups', [401, 403, 500, 503]],
    'post /backups': ['admin_backup_create', [401, 403, 409, 500, 503]],
    'get /backups/{name}': ['admin_backup_download', [401, 403, 404, 500]],
    'delete /backups/{name}': ['admin_backup_delete', [401, 403, 404, 500]],
    'get /settings': ['admin_settings', [401, 403, 500]],
    'post /setup-db': ['admin_setup_db', [401, 403, 413, 415, 500, 503]],
    'get /migrations': ['admin_migrations', [401, 403, 500, 503]],
    'post /migrations': ['admin_migrations_apply', [400, 401, 403, 409, 413, 415, 500, 503]],
    'post /admin/login': ['admin_login', [400, 401, 413, 415, 500, ...limited]],
    'post /auth/logout': ['auth_logout', [401, 500]]
  }
  const known = ids[`${method} ${rel}`]
  if (known === undefined) {
    // A route this pass does not know (added by a later feature): a stable id from its path, and the
    // answers every fastbase route can give (a bad token is a 401, an unexpected failure a 500).
    op.operationId ??= `${method}_${rel.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`
    // Its error answers become the shared responses (same `{ code, message, data? }` body).
    const responses: Json = op.responses ?? {}
    for (const code of Object.keys(responses)) if (STATUS[Number(code)] !== undefined) responses[code] = b.response(Number(code))
    for (const code of [401, 500]) responses[code] ??= b.response(code)
    op.responses = responses
    return
  }
  op.operationId = known[0]
  if (known[1].length > 0) setResponses(b, op, known[1])
  // A backup's record, once in the components (the list and the new backup answer it).
  if (rel === '/backups') {
    const media = op.responses?.[200]?.content?.[JSON_TYPE]
    const holder = method === 'get' ? media?.schema?.properties?.backups : media
    const record = method === 'get' ? holder?.items : holder?.schema
    if (record !== undefined) {
      b.schemas.backup ??= record
      if (method === 'get') holder.items = b.ref('backup')
      else holder.schema = b.ref('backup')
    }
  }
  if (rel === '/backups/{name}' && method === 'get') {
    op.responses[200] = {
      description: 'The archive: a gzipped tar of the database, the local files and manifest.json',
      headers: { 'X-Content-SHA256': { description: 'The archive\'s SHA-256 (hex), as its record names it', schema: { type: 'string' } } },
      content: { 'application/gzip': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/gzip' } } }
    }
  }
  if (rel === '/setup-db' && op.requestBody === undefined) {
    // Teenybase clients send `{}`; the body is optional and ignored.
    op.requestBody = { required: false, content: json({ type: 'object', additionalProperties: false }, {}) }
  }
  if (rel === '/migrations' && method === 'post' && op.requestBody !== undefined) {
    op.requestBody.required = false
    const media = op.requestBody.content?.[JSON_TYPE]
    if (media !== undefined) media.example = { dryRun: true }
  }
}

const TAG_TEXT: Record<string, string> = {
  meta: 'Health of the server',
  files: 'Downloads of stored files (uploads are multipart writes of the tables)',
  actions: 'Server-side actions of the project',
  admin: 'Admin endpoints (service token or an admin token from /admin/login)',
  auth: 'Cookie sign-out'
}

/** Rewrites the document @fastify/swagger built into the finished one (in place) and returns it. */
export function finishDocument (doc: Json, source: DocumentSource, limits: { writeRows: number }): Json {
  const b = new Builder(source)
  const { prefix, config } = source
  const actions = new Map(source.actions.map((a) => [a.name, a]))
  // Account tables last: the examples name the first table, and an account's files are its own.
  const fileTables = [...b.views.values()].filter((v) => v.hasFiles && v.table.uid !== undefined)
    .sort((x, y) => Number(x.auth !== undefined) - Number(y.auth !== undefined))
  const paths: Json = {}
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    const rel = path.startsWith(prefix) ? path.slice(prefix.length) : path
    const named = path.replace('/{*}', '/{path}')
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (op === undefined) continue
      const table = /^\/table\/([^/]+)\/(select|list|insert|update|delete|view\/\{id\}|edit\/\{id\})$/.exec(rel)
      const auth = /^\/table\/([^/]+)\/auth\/(.+)$/.exec(rel)
      const action = /^\/action\/([^/]+)$/.exec(rel)
      if (table !== null && b.views.has(table[1])) tableOperation(b, b.views.get(table[1])!, table[2].split('/')[0], method, op, limits)
      else if (auth !== null && b.views.has(auth[1])) authOperation(b, b.views.get(auth[1])!, auth[2], op)
      else if (action !== null && actions.has(action[1])) actionOperation(b, actions.get(action[1])!, op)
      else if (rel.startsWith('/files/')) filesOperation(b, op, fileTables)
      else otherOperation(b, rel, method, op)
      op.description ??= op.summary
      for (const [code, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
        if (response.description === 'Default Response') response.description = /^2/.test(code) ? 'Success' : `Status ${code}`
      }
    }
    paths[named] = item
  }
  doc.paths = paths
  const tags = new Set<string>()
  for (const item of Object.values(paths) as Json[]) for (const m of METHODS) for (const tag of item[m]?.tags ?? []) tags.add(tag as string)
  doc.tags = [...tags].map((name) => {
    const view = b.views.get(name)
    const authOf = / auth$/.test(name) ? b.views.get(name.slice(0, -5)) : undefined
    return { name, description: view !== undefined ? `Records of the \`${name}\` table` : authOf !== undefined ? `Accounts of the \`${authOf.table.name}\` table: sign-up, sign-in, sessions, password and email flows` : TAG_TEXT[name] ?? name }
  })
  const appName = config.appName ?? 'fastbase'
  doc.info = {
    title: appName,
    version: source.version,
    description: `The HTTP API of ${appName}, served by fastbase. Tables are read and written under \`${prefix}/table/{table}/\` subject to each table's rules; ` +
      'accounts live under `.../auth/`; files are uploaded with multipart writes and downloaded from `/files/`. ' +
      `Every error answers \`{ code, message, data? }\` with \`code\` equal to the HTTP status, and its stable code (\`FB_ERR_...\`) in the \`${ERROR_CODE_HEADER}\` header. ` +
      'Send a user\'s access token, or the admin service token, as `Authorization: Bearer <token>`; without one the caller is anonymous.',
    contact: { name: appName, url: config.appUrl },
    license: { name: 'MIT (fastbase, the server software)', identifier: 'MIT' }
  }
  doc.servers = [{ url: '/', description: `This server (paths carry the API prefix ${prefix})` }]
  doc.components = { ...(doc.components ?? {}), schemas: { ...(doc.components?.schemas ?? {}), ...b.schemas }, responses: { ...(doc.components?.responses ?? {}), ...b.responses }, parameters: { ...(doc.components?.parameters ?? {}), ...b.parameters } }
  return doc
}
