// The project config (teenybase `DatabaseSettings` shape) as TypeBox schemas.
// The schema is the single source of the config's TypeScript types and of its start-up validation.
import { Type, type Static, type TSchema, type TLiteral } from '@sinclair/typebox'
import { LIMIT_CEILINGS } from '../lib/limits.js'

const Identifier = Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$', minLength: 1, maxLength: 255 })

/** Raw SQL written by the developer in the config (`sql\`...\``); `p` holds named `{:param}` values. */
export const SqlQuerySchema = Type.Object({
  q: Type.String(),
  p: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
}, { additionalProperties: false })
/** A literal value (`sqlValue(x)`). */
export const SqlLiteralSchema = Type.Object({ l: Type.Unknown() }, { additionalProperties: false })
/** `{q}`, `{l}` or a bare string, which is raw SQL. */
export const SqlValueSchema = Type.Union([SqlQuerySchema, SqlLiteralSchema, Type.String()])

export const FIELD_TYPES = ['text', 'number', 'bool', 'email', 'url', 'editor', 'date', 'select', 'json',
  'file', 'relation', 'password', 'integer', 'blob'] as const
export const SQL_TYPES = ['text', 'integer', 'real', 'blob', 'null', 'json', 'date', 'datetime', 'time',
  'timestamp', 'float', 'int', 'boolean', 'numeric'] as const
export const RECORD_USAGES = ['record_uid', 'record_created', 'record_updated'] as const
export const AUTH_USAGES = ['auth_username', 'auth_email', 'auth_email_verified', 'auth_password',
  'auth_password_salt', 'auth_name', 'auth_avatar', 'auth_audience', 'auth_metadata'] as const
export const FK_ACTIONS = ['SET NULL', 'SET DEFAULT', 'CASCADE', 'RESTRICT', 'NO ACTION'] as const

// Each member typed as the literal of the whole list, so Static<> gives 'a' | 'b' rather than string.
const literalUnion = <T extends readonly string[]>(values: T) => Type.Union(values.map((v): TLiteral<T[number]> => Type.Literal(v)))

export const FieldSchema = Type.Object({
  name: Identifier,
  type: literalUnion(FIELD_TYPES),
  // Case-insensitive in teenybase configs; the loader lower-cases it before validation.
  sqlType: literalUnion(SQL_TYPES),
  usage: Type.Optional(literalUnion([...RECORD_USAGES, ...AUTH_USAGES] as const)),
  primary: Type.Optional(Type.Boolean()),
  autoIncrement: Type.Optional(Type.Boolean()),
  unique: Type.Optional(Type.Boolean()),
  notNull: Type.Optional(Type.Boolean()),
  default: Type.Optional(SqlValueSchema),
  check: Type.Optional(SqlValueSchema),
  collate: Type.Optional(Identifier),
  foreignKey: Type.Optional(Type.Object({
    table: Identifier,
    column: Identifier,
    onUpdate: Type.Optional(literalUnion(FK_ACTIONS)),
    onDelete: Type.Optional(literalUnion(FK_ACTIONS))
  }, { additionalProperties: false })),
  noSelect: Type.Optional(Type.Boolean()),
  noInsert: Type.Optional(Type.Boolean()),
  noUpdate: Type.Optional(Type.Boolean()),
  /** Thumbnail sizes a `file` field serves with `?thumb=` (decision D123; lib/files/thumb-sizes.ts). */
  thumbs: Type.Optional(Type.Array(Type.String({ maxLength: 16 }), { maxItems: 20 })),
  /** Allowed values of a `select` field (decision D26). */
  values: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]), { minItems: 1 })),
  description: Type.Optional(Type.String()),
  lastName: Type.Optional(Identifier)
}, { additionalProperties: false })

export const IndexSchema = Type.Object({
  name: Type.Optional(Identifier),
  unique: Type.Optional(Type.Boolean()),
  fields: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]),
  where: Type.Optional(SqlQuerySchema)
}, { additionalProperties: false })

export const TriggerSchema = Type.Object({
  name: Identifier,
  event: literalUnion(['INSERT', 'UPDATE', 'DELETE'] as const),
  seq: Type.Optional(literalUnion(['BEFORE', 'AFTER', 'INSTEAD OF'] as const)),
  updateOf: Type.Optional(Type.Union([Identifier, Type.Array(Identifier)])),
  forEach: Type.Optional(Type.Literal('ROW')),
  body: Type.Union([SqlQuerySchema, Type.Array(SqlQuerySchema), Type.String()]),
  when: Type.Optional(Type.Union([SqlQuerySchema, Type.String()])),
  /** Per-dialect bodies: raw SQL differs between SQLite and PostgreSQL; a trigger without the current dialect's body is skipped there. */
  dialect: Type.Optional(literalUnion(['sqlite', 'postgres'] as const))
}, { additionalProperties: false })

const RuleSchema = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])
export const RulesExtensionSchema = Type.Object({
  name: Type.Literal('rules'),
  listRule: Type.Optional(RuleSchema),
  viewRule: Type.Optional(RuleSchema),
  createRule: Type.Optional(RuleSchema),
  updateRule: Type.Optional(RuleSchema),
  deleteRule: Type.Optional(RuleSchema),
  /**
   * Per field, who may read it (decision D96): where the expression is false for a row and a
   * caller, the field reads as null for that caller everywhere (answers, expand, realtime, where,
   * order, search). Admins read every field.
   */
  fieldRules: Type.Optional(Type.Record(Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }), Type.String({ minLength: 1, maxLength: 1000 }), {
    additionalProperties: false,
    description: 'Per field, an expression that must hold for a caller to read it; elsewhere the field reads as null (admins read every field)'
  })),
  /** fastbase addition (decision D117): writes need a session that proved a second factor (`auth.aal == 2`). */
  mfaForWrites: Type.Optional(Type.Boolean({ description: 'Inserts, updates and deletes by users need a session signed in with a second factor (TOTP); admins are not users here (see mfa.requireForAdmins)' }))
}, { additionalProperties: false })

export const EmailTemplateSchema = Type.Object({
  subject: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  /** A layout, or teenybase's stack of layouts (outermost first). */
  layoutHtml: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  variables: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Provider tags (teenybase gave one string); SMTP has no tags, so they are accepted and not sent. */
  tags: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
}, { additionalProperties: true })

/** Accepted and validated here; the auth issue gives it behaviour. */
export const AuthExtensionSchema = Type.Object({
  name: Type.Literal('auth'),
  jwtSecret: Type.String({ minLength: 1 }),
  jwtTokenDuration: Type.Optional(Type.Integer({ minimum: 1 })),
  maxTokenRefresh: Type.Optional(Type.Integer({ minimum: 0 })),
  passwordType: Type.Optional(Type.String()),
  passwordConfirmSuffix: Type.Optional(Type.String()),
  passwordCurrentSuffix: Type.Optional(Type.String()),
  passwordResetTokenDuration: Type.Optional(Type.Integer({ minimum: 1 })),
  emailVerifyTokenDuration: Type.Optional(Type.Integer({ minimum: 1 })),
  passwordResetEmailDuration: Type.Optional(Type.Integer({ minimum: 0 })),
  emailVerifyEmailDuration: Type.Optional(Type.Integer({ minimum: 0 })),
  autoSendVerificationEmail: Type.Optional(Type.Boolean()),
  normalizeEmail: Type.Optional(Type.Boolean()),
  saveIdentities: Type.Optional(Type.Boolean()),
  emailTemplates: Type.Optional(Type.Record(Type.String(), EmailTemplateSchema)),
  /** fastbase addition (decision D113): sign-in by a code or link mailed to the address; absent, the routes do not exist. */
  emailOtp: Type.Optional(Type.Object({
    signUp: Type.Optional(Type.Boolean({ description: 'An address with no account gets one (verified) by signing in with a code; default false' })),
    codeLength: Type.Optional(Type.Integer({ minimum: 6, maximum: 8, description: 'Digits of the code (default 6)' })),
    codeDuration: Type.Optional(Type.Integer({ minimum: 60, maximum: 86400, description: 'Seconds a code and its link live (default 600)' })),
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Wrong codes one code survives (default 5)' })),
    perAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Codes mailed to one address per 15 minutes, for the fleet (default 5)' }))
  }, { additionalProperties: false })),
  /** fastbase addition (decision D115): the TOTP second factor's routes; `issuer` names the app in authenticator apps (default appName). */
  totp: Type.Optional(Type.Union([Type.Boolean(), Type.Object({ issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false })]))
}, { additionalProperties: false })

export const ExtensionSchema = Type.Union([RulesExtensionSchema, AuthExtensionSchema])

/**
 * teenybase's full-text search options (decision D37, lib/search/fts.ts). `prefix`, `columnsize` and
 * `detail` tune SQLite's FTS5 index only; `prefix` is written into DDL, hence the strict pattern.
 */
export const FullTextSearchSchema = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  fields: Type.Array(Identifier, { minItems: 1 }),
  tokenize: Type.Optional(literalUnion(['unicode61', 'ascii', 'porter', 'trigram'] as const)),
  prefix: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 999, description: 'SQLite: prefix lengths to index; default 2 and 3, 0 for none' }), Type.String({ pattern: '^\\s*[1-9][0-9]{0,2}(\\s*[ ,]\\s*[1-9][0-9]{0,2})*\\s*$' })])),
  contentless: Type.Optional(Type.Boolean()),
  content_rowid: Type.Optional(Identifier),
  columnsize: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
  detail: Type.Optional(literalUnion(['full', 'column', 'none'] as const)),
  /** teenybase's generated configs carry it (back-fill the index when it is created): fastbase always back-fills. */
  migrateTableQuery: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type FullTextSearch = Static<typeof FullTextSearchSchema>

export const TableSchema = Type.Object({
  name: Identifier,
  fields: Type.Array(FieldSchema, { minItems: 1 }),
  extensions: Type.Optional(Type.Array(ExtensionSchema)),
  indexes: Type.Optional(Type.Array(IndexSchema)),
  triggers: Type.Optional(Type.Array(TriggerSchema)),
  autoSetUid: Type.Optional(Type.Boolean()),
  allowWildcard: Type.Optional(Type.Boolean()),
  fullTextSearch: Type.Optional(FullTextSearchSchema),
  r2Base: Type.Optional(Type.String()),
  idInR2: Type.Optional(Type.Boolean()),
  autoDeleteR2Files: Type.Optional(Type.Boolean()),
  allowMultipleFileRef: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String()),
  lastName: Type.Optional(Identifier)
}, { additionalProperties: false })

export const PARAM_TYPES = ['string', 'number', 'integer', 'boolean'] as const
export const ParamSchema = Type.Union([
  literalUnion(PARAM_TYPES),
  Type.Object({
    type: literalUnion(PARAM_TYPES),
    optional: Type.Optional(Type.Boolean()),
    default: Type.Optional(Type.Unknown()),
    description: Type.Optional(Type.String({ maxLength: 500 }))
  }, { additionalProperties: false })
])

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String())])
const ColumnList = Type.Array(Type.Union([Type.String(), Type.Object({ q: Type.String(), as: Identifier })]))
const Conflict = literalUnion(['ABORT', 'FAIL', 'IGNORE', 'REPLACE', 'ROLLBACK'] as const)
const SqlOrString = Type.Union([SqlQuerySchema, SqlLiteralSchema, Type.String(), Type.Number(), Type.Boolean(), Type.Null()])

/** SQL-mode query object (accepted and validated here; the actions issue runs it). */
export const ActionSqlQuerySchema = Type.Object({
  type: literalUnion(['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const),
  table: Identifier,
  where: Type.Optional(Type.Union([SqlQuerySchema, Type.String()])),
  selects: Type.Optional(ColumnList),
  set: Type.Optional(Type.Record(Type.String(), SqlOrString)),
  values: Type.Optional(Type.Union([Type.Record(Type.String(), SqlOrString), Type.Array(Type.Record(Type.String(), SqlOrString))])),
  returning: Type.Optional(ColumnList),
  orderBy: Type.Optional(StringOrList),
  groupBy: Type.Optional(Type.Array(Type.String())),
  limit: Type.Optional(Type.Integer({ minimum: 0 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  distinct: Type.Optional(Type.Boolean()),
  or: Type.Optional(Conflict),
  /** Values for `{:name}` placeholders that the caller's params override (teenybase's per-query `params`). */
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
}, { additionalProperties: false })

/** Steps-mode statement (accepted and validated here; the actions issue runs it). */
export const ActionStepSchema = Type.Object({
  type: literalUnion(['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const),
  table: Identifier,
  where: Type.Optional(Type.String()),
  select: Type.Optional(StringOrList),
  order: Type.Optional(StringOrList),
  group: Type.Optional(StringOrList),
  setValues: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  set: Type.Optional(Type.Record(Type.String(), Type.String())),
  values: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Record(Type.String(), Type.Unknown()))])),
  expr: Type.Optional(Type.Record(Type.String(), Type.String())),
  returning: Type.Optional(StringOrList),
  limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String()])),
  offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String()])),
  distinct: Type.Optional(Type.Boolean()),
  or: Type.Optional(Conflict)
}, { additionalProperties: false })

export const ActionSchema = Type.Object({
  name: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_-]*$', minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String()),
  // additionalProperties: false makes the key pattern binding (a Record with a pattern key otherwise accepts any key).
  params: Type.Optional(Type.Record(Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }), ParamSchema, { additionalProperties: false })),
  requireAuth: Type.Optional(Type.Boolean()),
  guard: Type.Optional(Type.String({ maxLength: 1000 })),
  applyTableRules: Type.Optional(Type.Boolean()),
  sql: Type.Optional(Type.Union([ActionSqlQuerySchema, Type.Array(ActionSqlQuerySchema, { minItems: 1 })])),
  steps: Type.Optional(Type.Union([ActionStepSchema, Type.Array(ActionStepSchema, { minItems: 1 })]))
}, { additionalProperties: false })

export const AuthProviderSchema = Type.Object({
  /** A preset or custom provider name; entries that only trust external JWTs may give just `issuer`. */
  name: Type.Optional(Type.String({ minLength: 1 })),
  /** Several: each is an accepted ID-token audience; the redirect flow uses the first. */
  clientId: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  clientSecret: Type.Optional(Type.String()),
  redirectUrl: Type.Optional(Type.String()),
  issuer: Type.Optional(Type.String()),
  jwksUrl: Type.Optional(Type.String()),
  /** HS256 shared secret, or a public key as a JWK object. */
  secret: Type.Optional(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])),
  algorithm: Type.Optional(Type.String()),
  authorizeUrl: Type.Optional(Type.String()),
  tokenUrl: Type.Optional(Type.String()),
  userinfoUrl: Type.Optional(Type.String()),
  scopes: Type.Optional(Type.Array(Type.String()))
}, { additionalProperties: true })

export const AuthCookieSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  httpOnly: Type.Optional(Type.Boolean()),
  secure: Type.Optional(Type.Boolean()),
  sameSite: Type.Optional(Type.Union([Type.Literal('Strict'), Type.Literal('Lax'), Type.Literal('None'),
    Type.Literal('strict'), Type.Literal('lax'), Type.Literal('none')])),
  path: Type.Optional(Type.String()),
  maxAge: Type.Optional(Type.Integer({ minimum: 0 })),
  domain: Type.Optional(Type.String())
}, { additionalProperties: false })

/** Files in a directory; `root` defaults to `<dataDir>/files`, a relative `root` is under the data directory (decision D20). */
export const LocalStorageConfigSchema = Type.Object({
  driver: Type.Literal('local'),
  root: Type.Optional(Type.String({ minLength: 1 }))
}, { additionalProperties: false })

/** An S3-compatible bucket. Every value may be a `$ENV` reference (lib/config/secrets.ts resolves all of `storage`). */
export const S3StorageConfigSchema = Type.Object({
  driver: Type.Literal('s3'),
  bucket: Type.String({ minLength: 1 }),
  /** For R2, MinIO and other S3-compatible services; omit for AWS. */
  endpoint: Type.Optional(Type.String({ minLength: 1 })),
  /** Default `us-east-1` (R2 wants `auto`). */
  region: Type.Optional(Type.String({ minLength: 1 })),
  /** Both or neither; without them the AWS SDK's default credential chain applies. */
  accessKeyId: Type.Optional(Type.String({ minLength: 1 })),
  secretAccessKey: Type.Optional(Type.String({ minLength: 1 })),
  forcePathStyle: Type.Optional(Type.Boolean()),
  /** A folder inside the bucket for every key. */
  prefix: Type.Optional(Type.String())
}, { additionalProperties: false })

export const StorageConfigSchema = Type.Union([LocalStorageConfigSchema, S3StorageConfigSchema])

/** Scheduled and on-demand backups (docs/backups.md); lib/backup/settings.ts has the defaults. */
export const BackupsConfigSchema = Type.Object({
  /** A cron expression (five or six fields, e.g. `0 3 * * *`); none means backups on demand only. */
  schedule: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  /** Complete backups kept; older ones are deleted after each new one. Default 7. */
  keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  /** Where archives go; default a local folder `<dataDir>/backups`. */
  storage: Type.Optional(StorageConfigSchema),
  /** Archive the files of the local storage driver too. Default true. */
  files: Type.Optional(Type.Boolean())
}, { additionalProperties: false })

/** Prometheus metrics (docs/metrics.md): served only when this block is present and `enabled` is not false. */
export const MetricsConfigSchema = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  /** Default `/metrics` (not under the API prefix). */
  path: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9_./-]{0,200}$' })),
  /** What a scraper sends as `Authorization: Bearer <token>`; at least 16 characters; `$NAME` reads the environment. */
  token: Type.String({ minLength: 1 })
}, { additionalProperties: false })

const limit = (description: string, maximum?: number) => Type.Optional(Type.Integer({ minimum: 1, description, ...(maximum === undefined ? {} : { maximum }) }))
const LimitsSchema = Type.Object({
  maxLimit: limit('rows of one read'),
  expressionLength: limit('characters of one where, set or select text', LIMIT_CEILINGS.expressionLength),
  columns: limit('columns of one select or returning list', LIMIT_CEILINGS.columns),
  relations: limit('relation subqueries of one select or returning list (every level of every expansion)', LIMIT_CEILINGS.relations),
  searches: limit('full-text searches (@@) in the caller expressions of one request, wherever they appear', LIMIT_CEILINGS.searches),
  orderTerms: limit('terms of one order or group list', LIMIT_CEILINGS.orderTerms),
  cells: limit('rows x columns of one answer'),
  writeRows: limit('rows of one insert'),
  bodySize: limit('bytes of a JSON or urlencoded body'),
  uploadSize: limit('bytes of one uploaded file'),
  files: limit('file parts of one multipart body'),
  fields: limit('non-file parts of one multipart body'),
  statementTimeout: limit('milliseconds a statement run for a caller may take (PostgreSQL: every statement; SQLite: searches and expansions, which run on reader threads)', LIMIT_CEILINGS.statementTimeout),
  lingerTime: limit('milliseconds a connection keeps reading and discarding after an answer sent before its request body arrived', LIMIT_CEILINGS.lingerTime),
  thumbnails: limit('thumbnails one instance makes at once', LIMIT_CEILINGS.thumbnails),
  thumbnailQueue: limit('thumbnails waiting for a turn (one more is 503)'),
  thumbnailPixels: limit('pixels of an image a thumbnail is made of (refused from its header, before decoding)', LIMIT_CEILINGS.thumbnailPixels),
  thumbnailTimeout: limit('milliseconds making one thumbnail may take', LIMIT_CEILINGS.thumbnailTimeout)
}, { additionalProperties: false })

export const DatabaseSettingsSchema = Type.Object({
  tables: Type.Array(TableSchema),
  /** May be empty only when no table has an auth extension (lib/config/validate.ts). */
  jwtSecret: Type.String(),
  appUrl: Type.String({ minLength: 1 }),
  appName: Type.Optional(Type.String()),
  jwtIssuer: Type.Optional(Type.String()),
  /** The one algorithm tokens are signed and verified with (decision D38): HMAC, since the key is a shared secret. */
  jwtAlgorithm: Type.Optional(literalUnion(['HS256', 'HS384', 'HS512'] as const)),
  /** Deprecated in teenybase: an issuer name, or a provider object without a name (external-JWT trust only). */
  jwtAllowedIssuers: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Partial(AuthProviderSchema)]))),
  authProviders: Type.Optional(Type.Array(AuthProviderSchema)),
  allowedRedirectUrls: Type.Optional(Type.Array(Type.String())),
  /** fastbase addition, the older name of `cors.origins` (decision D97): read into the same list. */
  allowedOrigins: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
  /** fastbase addition (decision D97): other origins whose pages may use the API from a browser. */
  cors: Type.Optional(Type.Object({
    origins: Type.Array(Type.String(), { maxItems: 100, description: 'Origins (scheme, host, optional port: `http://localhost:5173`) whose pages may read the API\'s answers (CORS, with credentials) and write with the auth cookie; FASTBASE_CORS_ORIGINS adds more. None: no CORS.' })
  }, { additionalProperties: false })),
  authCookie: Type.Optional(AuthCookieSchema),
  email: Type.Optional(Type.Object({
    from: Type.Optional(Type.String()),
    smtp: Type.Optional(Type.String()),
    variables: Type.Optional(Type.Record(Type.String(), Type.String())),
    tags: Type.Optional(Type.Array(Type.String()))
  }, { additionalProperties: true })),
  actions: Type.Optional(Type.Array(ActionSchema)),
  version: Type.Optional(Type.Number()),
  _kvTableName: Type.Optional(Type.String({ pattern: '^_[a-zA-Z0-9_]*$' })),
  disableTablesEdit: Type.Optional(Type.Boolean()),
  '//': Type.Optional(Type.String()),
  /** fastbase additions (decisions D7, D24, D20). */
  maxLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  rateLimit: Type.Optional(Type.Union([Type.Literal(false), Type.Object({}, { additionalProperties: true })])),
  maxUploadSize: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Bounds on one request (decision D38); lib/limits.ts has the defaults. */
  limits: Type.Optional(LimitsSchema),
  storage: Type.Optional(StorageConfigSchema),
  /** Downloads (decision D124): file tokens' lifetime, and the Cache-Control of files anyone may read. */
  files: Type.Optional(Type.Object({
    tokenDuration: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, description: 'Seconds a file token from POST /files/token lives (default 180)' })),
    publicCacheControl: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x20-\\x7e]+$', description: 'Cache-Control of downloads anyone may read (default "public, no-cache"); others are always "private, no-cache"' }))
  }, { additionalProperties: false })),
  admin: Type.Optional(Type.Object({
    viewerPassword: Type.Optional(Type.String()),
    editorPassword: Type.Optional(Type.String()),
    /** fastbase addition (decision D118): admin tokens need a second factor (TOTP) at /admin/login, except on the admin MFA routes. */
    requireMfa: Type.Optional(Type.Boolean({ description: 'Admin tokens work only once /admin/login proved a TOTP code (the raw service token, a machine credential, is not an admin token)' }))
  }, { additionalProperties: false })),
  /** Apply additive schema changes on start (decision D21); default true. */
  autoMigrate: Type.Optional(Type.Boolean()),
  backups: Type.Optional(BackupsConfigSchema),
  metrics: Type.Optional(MetricsConfigSchema),
  /** Realtime subscriptions over server-sent events (docs/realtime.md); lib/realtime/settings.ts has the defaults. */
  realtime: Type.Optional(Type.Object({
    enabled: Type.Optional(Type.Boolean()),
    heartbeatSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
    sessionCheckSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
    maxSubscriptions: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    maxConnectionsPerUser: Type.Optional(Type.Integer({ minimum: 1 })),
    queueBytes: Type.Optional(Type.Integer({ minimum: 1024 })),
    maxStreams: Type.Optional(Type.Integer({ minimum: 1 })),
    maxClassesPerTable: Type.Optional(Type.Integer({ minimum: 1 })),
    maxStreamsPerAddress: Type.Optional(Type.Integer({ minimum: 1, description: 'Streams one client address may hold on one instance (default 100)' })),
    maxClassesPerAddress: Type.Optional(Type.Integer({ minimum: 1, description: 'Distinct subscriptions per table the streams of one client address may hold on one instance (default 100)' })),
    maxClassesPerUser: Type.Optional(Type.Integer({ minimum: 1, description: 'Distinct subscriptions per table the streams of one user (anonymous: one address) may hold on one instance (default 32)' }))
  }, { additionalProperties: false }))
}, { additionalProperties: false })

export type SqlQuery = Static<typeof SqlQuerySchema>
export type SqlLiteral = Static<typeof SqlLiteralSchema>
export type SqlValue = Static<typeof SqlValueSchema>
export type FieldType = typeof FIELD_TYPES[number]
export type SqlType = typeof SQL_TYPES[number]
export type TableField = Static<typeof FieldSchema>
export type TableIndex = Static<typeof IndexSchema>
export type TableTrigger = Static<typeof TriggerSchema>
export type RulesExtension = Static<typeof RulesExtensionSchema>
export type AuthExtension = Static<typeof AuthExtensionSchema>
export type TableExtension = Static<typeof ExtensionSchema>
export type TableData = Static<typeof TableSchema>
export type ActionParam = Static<typeof ParamSchema>
export type ActionSqlQuery = Static<typeof ActionSqlQuerySchema>
export type ActionStep = Static<typeof ActionStepSchema>
export type ActionData = Static<typeof ActionSchema>
type Settings = Static<typeof DatabaseSettingsSchema>
/**
 * teenybase keys fastbase drops with a start-up warning (lib/config/teenybase.ts), typed so that a
 * teenybase config written with `satisfies DatabaseSettings` still type-checks.
 */
interface TeenybaseOnlyKeys {
  /** @deprecated ignored by fastbase (use `actions`). */
  procedures?: unknown
  /** @deprecated ignored by fastbase: auth routes exist for tables with an auth extension. */
  auth?: boolean
}
interface TeenybaseOnlyEmailKeys {
  /** @deprecated ignored by fastbase, which sends over SMTP (`smtp` or SMTP_URL). */
  mailgun?: unknown
  /** @deprecated ignored by fastbase, which sends over SMTP (`smtp` or SMTP_URL). */
  resend?: unknown
  /** @deprecated ignored: without an SMTP transport emails are logged and kept in an outbox folder. */
  mock?: unknown
}
export type DatabaseSettings = Omit<Settings, 'email'> & TeenybaseOnlyKeys & { email?: NonNullable<Settings['email']> & TeenybaseOnlyEmailKeys }
export type StorageConfig = Static<typeof StorageConfigSchema>
export type BackupsConfig = Static<typeof BackupsConfigSchema>
export type MetricsConfig = Static<typeof MetricsConfigSchema>
export type AnySchema = TSchema
