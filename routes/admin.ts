// Admin endpoints (decisions D15, D32, D33): GET /settings (any admin) answers the effective config with
// its secrets redacted (lib/config/redact.ts); POST /setup-db (superadmin) creates the config and
// internal tables the database lacks; GET /migrations (any admin) lists applied and pending schema
// migrations, POST /migrations (superadmin) applies the pending ones or, with `dryRun`, answers them
// (lib/db/migrations.ts). Who the caller is comes from `callerOf` (plugins/auth-context.ts): the
// service token as `Bearer` or raw `Authorization`, or an admin token.
import { Type } from '@sinclair/typebox'
// The `app.fastbase` declaration.
import type {} from '../plugins/types.js'
import type { TypeBoxApp } from './typebox.js'
import { requireAdmin } from './admin-access.js'
import { redactSecrets } from '../lib/config/redact.js'
import { ErrorSchema } from '../schemas/http/error.js'
import { json } from '../schemas/openapi/components.js'
import { callerOf } from '../plugins/auth-context.js'

const SettingsSchema = Type.Object({}, {
  additionalProperties: true,
  description: 'The effective config (secrets resolved from the environment, then replaced by "***")'
})

const SetupSchema = Type.Object({
  message: Type.String(),
  created: Type.Array(Type.String(), { description: 'Tables this call created, in creation order (empty when none was missing)' })
})

const AppliedSchema = Type.Object({
  name: Type.String({ description: 'Number and step, e.g. `00003_add_column_posts_views`; the initial schema is `00000_initial_schema`' }),
  sql: Type.String({ description: 'The statements it ran' }),
  applied_at: Type.String({ format: 'date-time' })
})

const PendingSchema = Type.Object({
  name: Type.String(),
  table: Type.String(),
  destructive: Type.Boolean({ description: 'Drops data or may fail on existing rows' }),
  reason: Type.Optional(Type.String({ description: 'Why a destructive step waits' })),
  waitsFor: Type.Optional(Type.Array(Type.String(), { description: 'Pending steps it needs first' })),
  sql: Type.String({ description: 'The statements it would run' })
})

const DropsEveryTable = Type.Optional(Type.Array(Type.String(), {
  description: 'Present when the plan drops every table the config recorded and keeps none (the config is probably not the one that made this database): an apply is refused (409) unless `allowDropAll` is true'
}))

const StatusSchema = Type.Object({
  migrations: Type.Array(AppliedSchema, { description: 'Applied, in order' }),
  pending: Type.Array(PendingSchema, { description: 'Waiting for an explicit apply' }),
  dropsEveryTable: DropsEveryTable,
  outdated: Type.Optional(Type.Object({
    newerAppliedAt: Type.String({ format: 'date-time', description: 'When the newer config was applied' })
  }, { description: 'Present when this server runs an older config than the one the database last applied: nothing is planned (`pending` is empty) and an apply is refused (409 FB_ERR_CONFIG_OUTDATED) until the server restarts with the new config' }))
})

const ApplyBody = Type.Object({
  dryRun: Type.Optional(Type.Boolean({ description: 'Answer the plan with its SQL and change nothing' })),
  allowDestructive: Type.Optional(Type.Boolean({ description: 'Apply the destructive steps too (dropped tables and columns, type changes, new constraints). Without it they stay pending' })),
  allowDropAll: Type.Optional(Type.Boolean({ description: 'Apply even a plan that drops every table the config recorded' }))
}, { additionalProperties: false })

const ApplyResultSchema = Type.Object({
  dryRun: Type.Boolean(),
  applied: Type.Array(AppliedSchema, { description: 'Recorded by this call (empty for a dry run)' }),
  pending: Type.Array(PendingSchema, { description: 'Left pending (for a dry run: what an apply could run); the destructive steps unless `allowDestructive`' }),
  dropsEveryTable: DropsEveryTable
})

const accessErrors = { 401: ErrorSchema, 403: ErrorSchema }

const SCHEMA_CHANGES = 'Only a superadmin can change the database schema'

export default async function adminRoutes (app: TypeBoxApp): Promise<void> {
  app.get('/settings', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_settings',
      summary: 'The effective config, secrets redacted (any admin)',
      'x-document': { errors: [401, 403, 500] },
      security: [{ bearerAuth: [] }],
      response: { 200: SettingsSchema, ...accessErrors }
    }
  }, async (request) => {
    requireAdmin(callerOf(request))
    const settings = redactSecrets(app.fastbase.config)
    // The panel lists the actions it finds here: those written in code too (marked `code`).
    const code = [...app.fastbase.actions.values()].filter((a) => a.code !== undefined).map((a) => ({ ...a.data, code: true }))
    return code.length === 0 ? settings : { ...settings, actions: [...(settings.actions ?? []), ...code] }
  })

  // No body schema: teenybase clients send `{}`, others nothing; there are no parameters.
  app.post('/setup-db', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_setup_db',
      summary: 'Create the config and internal tables the database lacks (superadmin)',
      // Teenybase clients send `{}`: the body is optional and ignored.
      'x-document': { errors: [401, 403, 413, 415, 500, 503], requestBody: { required: false, content: json({ type: 'object', additionalProperties: false }, {}) } },
      description: 'Idempotent: a second call creates nothing and answers `created: []`.',
      security: [{ bearerAuth: [] }],
      response: { 200: SetupSchema, ...accessErrors, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request), SCHEMA_CHANGES)
    const { created } = await app.fastbase.schema.migrate('setup')
    const message = created.length === 0 ? 'Database is set up: no table was missing' : `Database is set up: created ${created.length} missing table${created.length === 1 ? '' : 's'}`
    return { message, created }
  })

  app.get('/migrations', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_migrations',
      summary: 'Applied and pending schema migrations (any admin)',
      'x-document': { errors: [401, 403, 500, 503] },
      security: [{ bearerAuth: [] }],
      response: { 200: StatusSchema, ...accessErrors, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request))
    return await app.fastbase.schema.status()
  })

  app.post('/migrations', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_migrations_apply',
      summary: 'Apply the pending schema migrations (superadmin)',
      'x-document': { errors: [400, 401, 403, 409, 413, 415, 500, 503], bodyOptional: true, bodyExample: { dryRun: true } },
      description: 'Runs the pending safe migrations in one transaction: all are applied or, when the database refuses one (409), none. ' +
        'Destructive ones (they drop or change data) run only with `{ "allowDestructive": true }`; otherwise they stay in `pending`. ' +
        'A plan that drops every table the config recorded is refused (409 FB_ERR_MIGRATION_REFUSED) unless `allowDropAll` is also true. ' +
        'A server whose config is older than the one the database last applied is refused (409 FB_ERR_CONFIG_OUTDATED): restart it with the new config. ' +
        '`{ "dryRun": true }` answers what would run and changes nothing.',
      security: [{ bearerAuth: [] }],
      body: Type.Optional(ApplyBody),
      response: { 200: ApplyResultSchema, 400: ErrorSchema, ...accessErrors, 409: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request), SCHEMA_CHANGES)
    const dryRun = request.body?.dryRun === true
    const allow = { allowDestructive: request.body?.allowDestructive === true, allowDropAll: request.body?.allowDropAll === true }
    const { applied, pending, dropsEveryTable } = await app.fastbase.schema.migrate(dryRun ? 'dry-run' : 'apply', allow)
    return { dryRun, applied, pending, ...(dropsEveryTable !== undefined ? { dropsEveryTable } : {}) }
  })
}
