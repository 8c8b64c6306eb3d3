// POST /admin/login: the panel's sign-in. ADMIN_SERVICE_TOKEN -> superadmin, the configured editor /
// viewer passwords -> editor / viewer; answered with a short-lived admin token (DECISIONS 15).
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AdminRole } from '../../lib/auth-context.js'
import { errors } from '../../lib/errors.js'
import { errorResponses } from '../../schemas/tables.js'
import { secretEquals } from '../../plugins/auth-context.js'
import { ADMIN_TOKEN_DURATION } from '../../plugins/auth.js'
import { newUid } from '../../lib/uid.js'

export function adminLoginRoute (app: FastifyInstance, limited: () => object): void {
  const { options, config } = app.fastbase
  const candidates: Array<[AdminRole, string | undefined]> = [
    ['superadmin', options.adminServiceToken],
    ['editor', config.admin?.editorPassword],
    ['viewer', config.admin?.viewerPassword]
  ]
  app.post('/admin/login', {
    config: limited(),
    schema: {
      tags: ['admin'],
      summary: 'Exchange the service token or an admin password for a short-lived admin token',
      body: Type.Object({ password: Type.String({ minLength: 1, maxLength: 1024 }) }),
      response: { 200: Type.Object({ token: Type.String(), role: Type.String(), expiresIn: Type.Integer() }), ...errorResponses }
    }
  }, async (request) => {
    const { password } = request.body as { password: string }
    // Every candidate is compared (constant time each), so the answer's timing does not say which matched.
    const matches = candidates.filter(([, secret]) => secret !== undefined && secret !== '').filter(([, secret]) => secretEquals(password, secret!))
    const role = matches[0]?.[0]
    if (role === undefined) throw errors.unauthorized('Invalid credentials')
    const host = new URL(config.appUrl).host
    const token = app.fastbase.auth.adminKey.sign({ sub: `${role}@${host}`, id: newUid(), aud: role, admin: true, verified: true, meta: {}, iss: app.fastbase.auth.issuer }, ADMIN_TOKEN_DURATION)
    return { token, role, expiresIn: ADMIN_TOKEN_DURATION }
  })
}
