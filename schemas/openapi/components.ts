// The shared parts of the API document, from the config: per table the `<table>` record, `<table>.list`,
// `<table>.new` / `<table>.changes`, the `<table>.insert` / `.update` / `.delete` request bodies and
// `<table>.session`; the `{ code, message, data? }` error and one shared response per error status;
// examples that work against a database holding the example records. Routes take references from here
// for what they declare of themselves (`x-document`, schemas/openapi/operation.ts); a component exists
// once a route refers to it, so the document holds no unused one.
// The route schemas are what the server validates and serializes with, and they are deliberately
// lenient (a select may narrow a record to any keys, teenybase clients send fields the server then
// refuses with 403, multipart bodies are turned into JSON before validation). These give clients the
// view they need: records with required and nullable keys from the fields (primary key and notNull
// fields are required and non-null; noSelect fields are optional, admins only); write bodies without
// the fields the server refuses (noInsert / noUpdate bind everyone, decision D25); multipart bodies as
// `@filePayload` binary parts plus an `@jsonPayload` JSON part.
// Nothing here reads a secret: only table, field and action names, types and descriptions.
import type { TableDescriptor } from '../../lib/table/descriptor.js'
import { ERROR_CODE_HEADER, ERROR_CODES_BY_STATUS } from '../../lib/errors.js'
import type { AuthExtension, DatabaseSettings, TableField } from '../config.js'
import { authExtensionOf, authFieldsOf, type AuthFields } from '../../lib/auth/fields.js'
import type { Limits } from '../../lib/limits.js'
import { querySchemas } from '../http/table-routes.js'
import type { Json } from './operation.js'

/** What the components are made from: one fastbase instance's config, tables and limits. */
export interface ComponentSource {
  config: DatabaseSettings
  descriptors: Map<string, TableDescriptor>
  limits: Limits
}

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
  400: { name: 'BadRequest', description: 'Invalid parameters or body: a validation error names each field in `data`, a constraint violation (unique, not null, foreign key, check) too', example: { code: 400, message: 'Validation Error', data: { _errors: [], title: { _errors: ['title is required'] } } } },
  401: { name: 'Unauthorized', description: 'No valid token where one is needed, or a token that is invalid, expired or revoked', example: { code: 401, message: 'Invalid or expired token', data: {} } },
  403: { name: 'Forbidden', description: 'A rule, a guard or the caller\'s role refuses the operation, or the body writes a field nobody may write', example: { code: 403, message: 'Forbidden', data: {} } },
  404: { name: 'NotFound', description: 'No such record (or the viewRule hides it), file or action', example: { code: 404, message: 'Not found', data: {} } },
  409: { name: 'Conflict', description: 'The database refused a migration: nothing was applied', example: { code: 409, message: 'Migration 00002_posts failed, nothing was applied: UNIQUE constraint failed: posts.slug', data: { migration: '00002_posts' } } },
  413: { name: 'PayloadTooLarge', description: 'The body, a multipart field or an uploaded file is larger than the configured limit', example: { code: 413, message: 'Request body is too large', data: {} } },
  415: { name: 'UnsupportedMediaType', description: 'A Content-Type this route does not take', example: { code: 415, message: 'Unsupported Content-Type: application/xml', data: {} } },
  416: { name: 'RangeNotSatisfiable', description: 'The Range header asks for bytes the file does not have (`Content-Range: bytes */<size>`)', example: { code: 416, message: 'Range not satisfiable', data: {} } },
  422: { name: 'UnprocessableImage', description: 'No thumbnail can be made of this image (over `limits.thumbnailPixels`, unreadable, too slow); the file itself still downloads', example: { code: 422, message: 'No thumbnail can be made of this file: the image has more than 25000000 pixels', data: {} } },
  429: { name: 'TooManyRequests', description: 'Rate limited: retry after the `retry-after` header\'s seconds', example: { code: 429, message: 'Too many requests, retry in 42s', data: {} } },
  500: { name: 'InternalError', description: 'A server error (details are hidden in production and logged with the request id)', example: { code: 500, message: 'Internal Server Error (request req-1)', data: {} } },
  502: { name: 'BadGateway', description: 'The identity provider could not be reached or answered an error', example: { code: 502, message: 'The identity provider did not answer: token endpoint', data: {} } },
  503: { name: 'ServiceUnavailable', description: 'The database is busy or unreachable, or the server is closing: retry', example: { code: 503, message: 'Database is busy, try again', data: {} } }
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

export function exampleValue (table: TableDescriptor, field: TableField, target: TableDescriptor | undefined, variant = 0): unknown {
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

export interface TableView {
  table: TableDescriptor
  auth?: { ext: AuthExtension, fields: AuthFields }
  hasFiles: boolean
  insertable: TableField[]
  updatable: TableField[]
}

export class DocumentComponents {
  readonly schemas: Json = {}
  readonly responses: Json = {}
  readonly parameters: Json = {}
  readonly views = new Map<string, TableView>()
  readonly rateLimited: boolean
  readonly limits: Limits

  constructor (source: ComponentSource) {
    this.rateLimited = source.config.rateLimit !== false
    this.limits = source.limits
    for (const table of source.descriptors.values()) {
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

  view (table: TableDescriptor): TableView { return this.views.get(table.name)! }

  /** One schema for every table's select and list bodies: the routes' own, as JSON. */
  readQuery (): Json {
    this.schemas.ReadQuery ??= { ...JSON.parse(JSON.stringify(querySchemas(this.limits).read)), description: 'What to read: filter, order, page, columns' }
    return this.ref('ReadQuery')
  }

  target (field: TableField): TableDescriptor | undefined {
    return field.foreignKey === undefined ? undefined : this.views.get(field.foreignKey.table)?.table
  }

  error (): Json {
    this.schemas.Error ??= {
      type: 'object',
      description: 'Every error: `code` equals the HTTP status; `data` is `{}` when there are no details.',
      required: ['code', 'message', 'data'],
      properties: {
        code: { type: 'integer', description: 'The HTTP status' },
        message: { type: 'string' },
        data: { type: 'object', additionalProperties: true, description: 'Details: validation errors have the root\'s own `_errors: [...]` and per field `{ _errors: [...] }`; constraints per field `{ code, message }`' }
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

  recordExample (view: TableView): Json {
    this.record(view)
    return this.schemas[view.table.name].example
  }

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

  requestSchema (view: TableView, kind: 'insert' | 'update' | 'delete'): Json {
    const name = `${view.table.name}.${kind}`
    const returning = { description: 'Columns to return (`*` for all; relations such as `owner(name)`); omitted: `[]`', anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
    const or = { type: 'string', enum: ['ABORT', 'FAIL', 'IGNORE', 'REPLACE', 'ROLLBACK'], description: 'What to do on a unique conflict (REPLACE updates the conflicting row)' }
    if (this.schemas[name] === undefined) {
      if (kind === 'insert') {
        const one = this.fields(view, 'insert')
        this.schemas[name] = { type: 'object', required: ['values'], additionalProperties: false, properties: { values: { description: 'One record, or an array for a batch (all or nothing)', anyOf: [one, { type: 'array', items: one, maxItems: this.limits.writeRows }] }, returning, or } }
      } else if (kind === 'update') {
        this.schemas[name] = { type: 'object', required: ['where'], additionalProperties: false, properties: { where: { type: 'string', minLength: 1, description: 'Rows to update (the updateRule narrows them)' }, setValues: this.fields(view, 'update'), set: { type: 'object', additionalProperties: { type: 'string' }, description: 'Field -> expression over the current row, e.g. `views + 1`' }, returning, or } }
      } else {
        this.schemas[name] = { type: 'object', required: ['where'], additionalProperties: false, properties: { where: { type: 'string', minLength: 1, description: 'Rows to delete (the deleteRule narrows them)' }, returning } }
      }
    }
    return this.ref(name)
  }

  /** An insert as a form: one record (`values[title]=...`); a batch needs JSON, since form names cannot index a list. */
  insertForm (view: TableView): Json {
    const name = `${view.table.name}.insert.form`
    const { properties, ...rest } = this.schemas[this.requestSchema(view, 'insert').$ref.split('/').pop()]
    this.schemas[name] ??= { ...rest, properties: { ...properties, values: { ...this.fields(view, 'insert'), description: 'One record, its fields as `values[<field>]` (a batch needs a JSON body)' } } }
    return this.ref(name)
  }

  session (view: TableView): Json {
    const name = `${view.table.name}.session`
    this.schemas[name] ??= {
      type: 'object',
      required: ['token', 'refresh_token', 'record', 'aal'],
      properties: {
        token: { type: 'string', description: 'Access token (JWT): send it as `Authorization: Bearer <token>`' },
        refresh_token: { type: 'string', description: 'Single-use refresh token (rotated by refresh-token)' },
        record: { ...this.record(view), description: 'The signed-in account (noSelect fields omitted)' },
        verified: { type: 'boolean', description: 'Whether the email address is verified' },
        aal: { type: 'integer', enum: [1, 2], description: 'Authenticator assurance level: 2 when the sign-in proved a second factor (rules read it as `auth.aal`)' }
      }
    }
    return this.ref(name)
  }

  /** What a sign-in answers: the session, or the challenge of the second factor (decision D115). */
  signIn (view: TableView): Json {
    const name = `${view.table.name}.sign-in`
    this.schemas[name] ??= { anyOf: [this.session(view), this.mfaChallenge()] }
    return this.ref(name)
  }

  /** What a sign-in of a user with a second factor on answers instead of a session (mfa/verify completes it). */
  mfaChallenge (): Json {
    const name = 'MfaChallenge'
    this.schemas[name] ??= {
      type: 'object',
      required: ['mfa_required', 'challenge', 'expires_in', 'methods'],
      properties: {
        mfa_required: { type: 'boolean', enum: [true] },
        challenge: { type: 'string', description: 'Single use, for mfa/verify' },
        expires_in: { type: 'integer', description: 'Seconds the challenge lives' },
        methods: { type: 'array', items: { type: 'string', enum: ['totp', 'recovery_code'] } }
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

// ------------------------------------------------------------------ content

export const json = (schema: Json, example?: unknown): Json => ({ [JSON_TYPE]: example === undefined ? { schema } : { schema, example } })

/**
 * A form body (`application/x-www-form-urlencoded`) as OpenAPI clients and Swagger UI send it: each
 * object-valued field in `nested` as `name[key]=value` (`deepObject`), which the server reads like
 * `name.key=value`; a list as the name repeated. The example fills Swagger UI's form.
 */
export function form (schema: Json, example: Json, nested: string[] = []): Json {
  const encoding = Object.fromEntries(nested.map((name) => [name, { style: 'deepObject', explode: true }]))
  return { [FORM_TYPE]: { schema, example, ...(nested.length > 0 ? { encoding } : {}) } }
}

/** A required request body of these media types. */
export const body = (content: Json): Json => ({ required: true, content })

/** Every media type the write routes take: JSON, forms (teenybase clients), and multipart for tables with files. */
export function writeContent (view: TableView, schema: Json, example: Json, multipartExample?: Json, formBody: Json = form(schema, example)): Json {
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

// One set of components per fastbase instance: its routes add to it, its document (plugins/docs.ts) holds it.
const instances = new WeakMap<object, DocumentComponents>()

/** The components of the instance `fastbase` (the `app.fastbase` decoration), made on first use. */
export function documentComponents (fastbase: ComponentSource): DocumentComponents {
  let components = instances.get(fastbase)
  if (components === undefined) {
    components = new DocumentComponents(fastbase)
    instances.set(fastbase, components)
  }
  return components
}
