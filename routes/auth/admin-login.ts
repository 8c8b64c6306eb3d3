// POST /admin/login: the panel's sign-in (lib/auth/admin-tokens.ts).
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../schemas/http/tables.js'
import { adminSignIn } from '../../lib/auth/admin-tokens.js'
import type { TypeBoxApp } from '../typebox.js'

export function adminLoginRoute (app: TypeBoxApp, limited: () => object): void {
  const { config, auth } = app.fastbase
  const host = new URL(config.appUrl).host
  app.post('/admin/login', {
    config: limited(),
    schema: {
      tags: ['admin'],
      summary: 'Exchange the service token or an admin password for a short-lived admin token',
      operationId: 'admin_login',
      // `limited()` is empty when rate limits are off.
      'x-document': { errors: [400, 401, 413, 415, 500, ...('rateLimit' in limited() ? [429] : [])] },
      body: Type.Object({ password: Type.String({ minLength: 1, maxLength: 1024 }) }),
      response: { 200: Type.Object({ token: Type.String(), role: Type.String(), expiresIn: Type.Integer() }), ...errorResponses }
    }
  }, async (request) => adminSignIn(auth.adminSecrets, request.body.password, auth.adminKeys, auth.issuer, host))
}
