// Admin endpoints (DECISIONS 15, 33): GET /settings (any admin) answers the effective config with its
// secrets redacted (lib/config/redact.ts); POST /setup-db (superadmin) creates the config and internal
// tables the database lacks, with the start-up schema sync. Who the caller is comes from request.auth
// (plugins/auth-context.ts): the service token as `Bearer` or raw `Authorization`, or an admin token.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
// The `app.fastbase` declaration.
import type {} from '../plugins/types.js'
import type { AuthContext } from '../lib/auth-context.js'
import { errors } from '../lib/errors.js'
import { redactSecrets } from '../lib/config/redact.js'
import { ErrorSchema } from '../schemas/error.js'

const SettingsSchema = Type.Object({}, {
  additionalProperties: true,
  description: 'The effective config (secrets resolved from the environment, then replaced by "***")'
})

const SetupSchema = Type.Object({
  message: Type.String(),
  created: Type.Array(Type.String(), { description: 'Tables this call created, in creation order (empty when none was missing)' })
})

const accessErrors = { 401: ErrorSchema, 403: ErrorSchema }

/** Anonymous: 401. Signed in but not an admin (or not a superadmin where one is needed): 403. */
function requireAdmin (auth: AuthContext, superadmin = false): void {
  if (!auth.admin && auth.uid === null) throw errors.unauthorized()
  if (!auth.admin) throw errors.forbidden('Admins only')
  if (superadmin && !auth.superadmin) throw errors.forbidden('Only a superadmin can set up the database')
}

export default async function adminRoutes (app: FastifyInstance): Promise<void> {
  app.get('/settings', {
    schema: {
      tags: ['admin'],
      summary: 'The effective config, secrets redacted (any admin)',
      security: [{ bearerAuth: [] }],
      response: { 200: SettingsSchema, ...accessErrors }
    }
  }, async (request) => {
    requireAdmin(request.auth)
    return redactSecrets(app.fastbase.config)
  })

  // No body schema: teenybase clients send `{}`, others nothing; there are no parameters.
  app.post('/setup-db', {
    schema: {
      tags: ['admin'],
      summary: 'Create the config and internal tables the database lacks (superadmin)',
      description: 'Idempotent: a second call creates nothing and answers `created: []`.',
      security: [{ bearerAuth: [] }],
      response: { 200: SetupSchema, ...accessErrors, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(request.auth, true)
    const { created } = await app.fastbase.syncSchema()
    const message = created.length === 0 ? 'Database is set up: no table was missing' : `Database is set up: created ${created.length} missing table${created.length === 1 ? '' : 's'}`
    return { message, created }
  })
}
