// Every error fastbase raises on purpose, in one table: a stable FB_ERR_* code, a status and a message.
// The HTTP body is always { code: <status>, message, data? } (plugins/errors.ts renders it), and the
// stable code goes in the `Fastbase-Error-Code` response header (ERROR_CODE_HEADER).

/**
 * A config that cannot be used (load, validation, compiling rules and actions at start): the one
 * config error, FB_ERR_CONFIG. Not an HTTP error: it stops the start.
 * The message lists every problem, one per line.
 */
export class ConfigError extends Error {
  declare readonly code: 'FB_ERR_CONFIG'
  declare readonly problems: string[]

  constructor (problems: string[]) {
    const message = `Invalid fastbase config:\n${problems.map((p) => `  - ${p}`).join('\n')}`
    super(message)
    // Not enumerable, so console.error (what fastify-cli does) prints the list once, not again as properties.
    Object.defineProperties(this, {
      name: { value: 'ConfigError', configurable: true, writable: true },
      code: { value: 'FB_ERR_CONFIG' },
      problems: { value: problems }
    })
    // fastify-cli prints `err.stack`; a stack trace would only bury the list of problems.
    this.stack = message
  }
}

export class FastbaseError extends Error {
  constructor (
    readonly statusCode: number,
    readonly errorCode: string,
    message: string,
    readonly data?: Record<string, unknown>
  ) {
    super(message)
    this.name = 'FastbaseError'
  }

  /** The stable code, under the name Node's own errors use. */
  get code (): string {
    return this.errorCode
  }
}

/** The response header that carries an error's stable code (the body's `code` is the HTTP status, as teenybase's clients expect). */
export const ERROR_CODE_HEADER = 'Fastbase-Error-Code'

/** Every code the table below raises, by the statuses it is answered with (the API document lists them per status). */
export const ERROR_CODES_BY_STATUS: Readonly<Record<number, readonly string[]>> = {
  400: ['FB_ERR_VALIDATION', 'FB_ERR_BAD_REQUEST', 'FB_ERR_OTP_INVALID', 'FB_ERR_MFA_INVALID', 'FB_ERR_EXPRESSION', 'FB_ERR_CONSTRAINT', 'FB_ERR_OAUTH_STATE', 'FB_ERR_OAUTH_FAILED', 'FB_ERR_OAUTH_PROVIDER', 'FB_ERR_BAD_KEY', 'FB_ERR_BAD_ARCHIVE', 'FB_ERR_THUMB_SIZE'],
  401: ['FB_ERR_UNAUTHORIZED', 'FB_ERR_INVALID_TOKEN', 'FB_ERR_OAUTH_FAILED', 'FB_ERR_FILE_TOKEN'],
  403: ['FB_ERR_FORBIDDEN', 'FB_ERR_FIELD_READ_ONLY', 'FB_ERR_OAUTH_STATE', 'FB_ERR_CROSS_ORIGIN', 'FB_ERR_MFA_REQUIRED'],
  404: ['FB_ERR_NOT_FOUND', 'FB_ERR_TABLE_NOT_FOUND', 'FB_ERR_ROUTE_NOT_FOUND', 'FB_ERR_FILE_NOT_FOUND', 'FB_ERR_ACTION_NOT_FOUND', 'FB_ERR_PROVIDER_NOT_FOUND', 'FB_ERR_REALTIME_CLIENT_NOT_FOUND', 'FB_ERR_BACKUP_NOT_FOUND'],
  409: ['FB_ERR_MIGRATION_FAILED', 'FB_ERR_MIGRATION_REFUSED', 'FB_ERR_CONFIG_OUTDATED', 'FB_ERR_SCHEMA_MISMATCH', 'FB_ERR_BACKUP_RUNNING', 'FB_ERR_RESTORE_REFUSED'],
  413: ['FB_ERR_PAYLOAD_TOO_LARGE'],
  415: ['FB_ERR_UNSUPPORTED_MEDIA_TYPE'],
  416: ['FB_ERR_RANGE', 'FB_ERR_BAD_RANGE'],
  422: ['FB_ERR_THUMBNAIL_FAILED'],
  429: ['FB_ERR_RATE_LIMITED'],
  500: ['FB_ERR_INTERNAL', 'FB_ERR_ACTION_CONFIG'],
  502: ['FB_ERR_PROVIDER_UNAVAILABLE'],
  503: ['FB_ERR_DATABASE_BUSY', 'FB_ERR_STATEMENT_TIMEOUT', 'FB_ERR_DATABASE_UNAVAILABLE', 'FB_ERR_RATE_LIMIT_UNAVAILABLE', 'FB_ERR_SHUTTING_DOWN', 'FB_ERR_REALTIME_STREAMS_FULL', 'FB_ERR_REALTIME_CLASSES_FULL', 'FB_ERR_NOT_READY', 'FB_ERR_THUMBNAIL_BUSY']
}

/** `data.<field>._errors`: the per-field messages shared by table validation and actions. */
export type FieldErrors = Record<string, { _errors: string[] }>

const CLIENT_ERROR_CODES: Readonly<Record<number, string>> = { 413: 'FB_ERR_PAYLOAD_TOO_LARGE', 415: 'FB_ERR_UNSUPPORTED_MEDIA_TYPE', 429: 'FB_ERR_RATE_LIMITED' }

export const errors = {
  actionNotFound: (name: string) => new FastbaseError(404, 'FB_ERR_ACTION_NOT_FOUND', `Action not found - ${name}`),
  tableNotFound: (name: string) => new FastbaseError(404, 'FB_ERR_TABLE_NOT_FOUND', `Table not found - ${name}`),
  routeNotFound: (method: string, url: string) => new FastbaseError(404, 'FB_ERR_ROUTE_NOT_FOUND', `Route not found - ${method} ${url}`),
  recordNotFound: () => new FastbaseError(404, 'FB_ERR_NOT_FOUND', 'Not found'),
  forbidden: (message = 'Forbidden') => new FastbaseError(403, 'FB_ERR_FORBIDDEN', message),
  unauthorized: (message = 'Authentication required') => new FastbaseError(401, 'FB_ERR_UNAUTHORIZED', message),
  /** The auth routes' 401 for a caller with no session, in teenybase's word (its clients match it). */
  notSignedIn: () => new FastbaseError(401, 'FB_ERR_UNAUTHORIZED', 'Unauthorized'),
  crossOrigin: (method: string) => new FastbaseError(403, 'FB_ERR_CROSS_ORIGIN',
    `Cross-origin request refused: a ${method} with the auth cookie is accepted only from the app's own origin or a cors.origins entry (send the token as Authorization: Bearer instead)`),
  invalidToken: () => new FastbaseError(401, 'FB_ERR_INVALID_TOKEN', 'Invalid or expired token'),
  /**
   * teenybase's (zod's formatted) shape: the root's own `_errors` (messages about the whole body, usually
   * none) before one `{ _errors }` per field; clients read `data._errors.length` unguarded.
   */
  validation: (fields: FieldErrors, root: string[] = [], message = 'Validation Error') => {
    // A field named `_errors` would replace the root's list: its messages join the root's instead.
    const { _errors: named, ...rest } = fields
    return new FastbaseError(400, 'FB_ERR_VALIDATION', message, { _errors: [...root, ...named?._errors ?? []], ...rest })
  },
  badRequest: (message: string, data?: Record<string, unknown>) => new FastbaseError(400, 'FB_ERR_BAD_REQUEST', message, data),
  expression: (what: string, reason: string) => new FastbaseError(400, 'FB_ERR_EXPRESSION', `Invalid ${what}: ${reason}`),
  cannotWrite: (verb: 'insert' | 'update', field: string) => new FastbaseError(403, 'FB_ERR_FIELD_READ_ONLY', `Cannot ${verb} ${field} field`),
  constraint: (message: string, data: Record<string, { code: string, message: string }>) => new FastbaseError(400, 'FB_ERR_CONSTRAINT', message, data),
  tooManyRequests: (message: string) => new FastbaseError(429, 'FB_ERR_RATE_LIMITED', message),
  busy: () => new FastbaseError(503, 'FB_ERR_DATABASE_BUSY', 'Database is busy, try again'),
  statementTimeout: () => new FastbaseError(503, 'FB_ERR_STATEMENT_TIMEOUT', 'The query took too long and was cancelled (limits.statementTimeout): ask for less, or try again'),
  databaseUnavailable: () => new FastbaseError(503, 'FB_ERR_DATABASE_UNAVAILABLE', 'Database unavailable'),
  shuttingDown: () => new FastbaseError(503, 'FB_ERR_SHUTTING_DOWN', 'The server is shutting down'),
  /** Another plugin's client error (Fastify's, multipart's limits...): the table's code for its status. */
  clientError: (status: number, message: string) => new FastbaseError(status, CLIENT_ERROR_CODES[status] ?? 'FB_ERR_BAD_REQUEST', message),
  /** Anything not raised on purpose (a bug): the message depends on whether errors are exposed. */
  internal: (message: string) => new FastbaseError(500, 'FB_ERR_INTERNAL', message),
  payloadTooLarge: (message = 'Request body is too large') => new FastbaseError(413, 'FB_ERR_PAYLOAD_TOO_LARGE', message),
  fileNotFound: () => new FastbaseError(404, 'FB_ERR_FILE_NOT_FOUND', 'File not found'),
  thumbSize: (size: string, listed: readonly string[]) => new FastbaseError(400, 'FB_ERR_THUMB_SIZE',
    `Thumbnail size ${JSON.stringify(size.slice(0, 32))} is not one this file field lists (${listed.length === 0 ? 'it lists none' : listed.join(', ')})`),
  thumbnailFailed: (reason: string) => new FastbaseError(422, 'FB_ERR_THUMBNAIL_FAILED', `No thumbnail can be made of this file: ${reason}`),
  thumbnailBusy: () => new FastbaseError(503, 'FB_ERR_THUMBNAIL_BUSY', 'This server is making as many thumbnails as it may; try again shortly'),
  fileToken: () => new FastbaseError(401, 'FB_ERR_FILE_TOKEN', 'Invalid or expired file token'),
  realtimeClientNotFound: () => new FastbaseError(404, 'FB_ERR_REALTIME_CLIENT_NOT_FOUND', 'Realtime client not found (the stream has ended?)'),
  // Realtime's instance-wide bounds (lib/realtime/hub.ts): the server is full, not the caller at fault.
  realtimeStreamsFull: (max: number) => new FastbaseError(503, 'FB_ERR_REALTIME_STREAMS_FULL', `This server holds as many realtime streams as it may (${max}); try again later`),
  realtimeClassesFull: (table: string, max: number) => new FastbaseError(503, 'FB_ERR_REALTIME_CLASSES_FULL', `Table ${table} has as many distinct realtime subscriptions on this server as it may (${max}); try again later, or subscribe with a where others already use`),
  unsupportedMediaType: (type: string) => new FastbaseError(415, 'FB_ERR_UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Type: ${type}`),
  // Sign-in with an identity provider (lib/auth/oauth/).
  providerNotFound: (name: string) => new FastbaseError(404, 'FB_ERR_PROVIDER_NOT_FOUND', `OAuth provider not found - ${name}`),
  oauthState: (message: string, status: 400 | 403 = 400) => new FastbaseError(status, 'FB_ERR_OAUTH_STATE', message),
  oauthFailed: (message: string, status: 400 | 401 = 400) => new FastbaseError(status, 'FB_ERR_OAUTH_FAILED', message),
  oauthRefused: (message: string, providerError: string) => new FastbaseError(400, 'FB_ERR_OAUTH_PROVIDER', message, { error: providerError }),
  providerUnavailable: (message: string) => new FastbaseError(502, 'FB_ERR_PROVIDER_UNAVAILABLE', message),
  // Email codes and second factors (lib/auth/email/email-codes.ts, mfa-store.ts): one message whatever was wrong.
  otpInvalid: () => new FastbaseError(400, 'FB_ERR_OTP_INVALID', 'Invalid or expired code'),
  mfaInvalid: (message = 'Invalid code') => new FastbaseError(400, 'FB_ERR_MFA_INVALID', message),
  mfaRequired: (message = 'This needs a sign-in with a second factor (TOTP)') => new FastbaseError(403, 'FB_ERR_MFA_REQUIRED', message),
  /** The shared rate-limit counters could not be read: refused rather than let through. */
  rateLimitUnavailable: () => new FastbaseError(503, 'FB_ERR_RATE_LIMIT_UNAVAILABLE', 'Rate limiting is unavailable, try again'),
  rangeNotSatisfiable: () => new FastbaseError(416, 'FB_ERR_RANGE', 'Range not satisfiable'),
  /** A SQL-mode action whose config does not fit the tables (lib/actions/sql-mode.ts). */
  actionConfig: (action: string, reason: string) => new FastbaseError(500, 'FB_ERR_ACTION_CONFIG', `Action ${action}: ${reason}`),
  // Storage drivers (lib/files/storage): both throw these, so a bucket can move between drivers.
  storageBadKey: (message: string) => new FastbaseError(400, 'FB_ERR_BAD_KEY', message),
  storageNotFound: (message: string) => new FastbaseError(404, 'FB_ERR_NOT_FOUND', message),
  storageBadRange: (message: string) => new FastbaseError(416, 'FB_ERR_BAD_RANGE', message),
  /** A schema migration the database refused (rows that break a new constraint...): nothing was applied. */
  migrationFailed: (name: string, reason: string) => new FastbaseError(409, 'FB_ERR_MIGRATION_FAILED', `Migration ${name} failed, nothing was applied: ${reason}`, { migration: name }),
  /** GET /health/ready: the instance cannot serve yet; `data` has the counts. */
  notReady: (message: string, data: Record<string, unknown>) => new FastbaseError(503, 'FB_ERR_NOT_READY', message, data),
  // Backups (lib/backup): a bad archive or a refused restore says why, never with a stack.
  backupNotFound: (name: string) => new FastbaseError(404, 'FB_ERR_BACKUP_NOT_FOUND', `Backup not found - ${name}`),
  backupRunning: () => new FastbaseError(409, 'FB_ERR_BACKUP_RUNNING', 'A backup is already running on this instance; try again when it has finished'),
  badArchive: (reason: string) => new FastbaseError(400, 'FB_ERR_BAD_ARCHIVE', `Not a usable fastbase backup: ${reason}`),
  restoreRefused: (reason: string) => new FastbaseError(409, 'FB_ERR_RESTORE_REFUSED', `Restore refused, nothing was changed: ${reason}`),
  /** An apply that would drop every table the config recorded, without `allowDropAll`: nothing was applied. */
  migrationRefused: (reason: string, tables: string[]) => new FastbaseError(409, 'FB_ERR_MIGRATION_REFUSED', `Nothing was applied: ${reason}`, { tables }),
  /** Decision D98: this server runs an older config than the database last applied. */
  configOutdated: (reason: string) => new FastbaseError(409, 'FB_ERR_CONFIG_OUTDATED', `Nothing was applied: ${reason}`),
  /** Decision D98: tables exist with other columns than the config names; `problems` says how, per table. */
  schemaMismatch: (problems: string[]) => new FastbaseError(409, 'FB_ERR_SCHEMA_MISMATCH',
    `Tables exist with another shape than the config says, so they are not taken as they are: ${problems.join('; ')}. ` +
    'Is this the database (or data folder) of another project? Point DATABASE_URL / FASTBASE_DATA_DIR at the right one, or move these tables away', { tables: problems.map((p) => p.slice(0, p.indexOf(' ('))) })
}

/** Adds one message to `data.<field>._errors`. */
export function addFieldError (data: FieldErrors, field: string, message: string): void {
  // Own properties only: a field named `toString` or `constructor` must not find Object.prototype's.
  if (!Object.hasOwn(data, field)) Object.defineProperty(data, field, { value: { _errors: [] }, enumerable: true, writable: true, configurable: true })
  data[field]._errors.push(message)
}
