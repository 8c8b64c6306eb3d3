// Auth routes: per auth table under /table/{table}/auth/, plus POST /auth/logout, POST /admin/login and /admin/mfa/.
// Registered with Fastify's `prefix` option (/api/v1). Body keys a route does not name are ignored, as
// teenybase does (decision D36): each route reads only its own keys, and sign-up, the one route that
// writes its body, keeps only the table's fields.
import type { FastifyRequest } from 'fastify'
import type { AuthTable } from '../../lib/auth/types.js'
import { crudContext, type CrudContext } from '../../lib/crud/context.js'
import { accountRoutes } from './account-routes.js'
import { clearAuthCookie, type RouteKit } from './kit.js'
import { passwordRoutes } from './password-routes.js'
import { verificationRoutes } from './verification-routes.js'
import { externalRoutes } from './external-routes.js'
import { oauthRoutes } from './oauth-routes.js'
import { adminLoginRoute } from './admin-login.js'
import { SuccessSchema } from './session-response.js'
import type { TypeBoxApp } from '../typebox.js'
import { callerOf } from '../../plugins/auth-context.js'
import { documentComponents } from '../../schemas/openapi/components.js'
import { authDocument, otpMfaDocument } from './document.js'
import { otpRoutes } from './otp-routes.js'
import { mfaRoutes } from './mfa-routes.js'
import { authTablesFor } from '../../lib/internal/internal-tables.js'
import cookiePlugin from '../../plugins/external/cookie.js'

export default async function authRoutes (app: TypeBoxApp): Promise<void> {
  // Only these routes set cookies: @fastify/cookie's onSend hook runs for them alone (decision D134).
  await app.register(cookiePlugin)
  const { auth } = app.fastbase
  const limited = () => {
    const limit = auth.rateLimit()
    return limit === false ? {} : { rateLimit: limit }
  }
  const contextOf = (request: FastifyRequest, at: AuthTable): CrudContext => crudContext(app.fastbase.executor, at.table, callerOf(request), { requestId: request.id })
  for (const at of auth.tables.values()) {
    const components = documentComponents(app.fastbase)
    const kit: RouteKit = { base: `/table/${at.table.name}/auth`, tags: [`${at.table.name} auth`], limited, crudContext: contextOf, doc: authDocument(components, at.table), otpDoc: otpMfaDocument(components, at.table) }
    accountRoutes(app, at, kit)
    passwordRoutes(app, at, kit)
    verificationRoutes(app, at, kit)
    await externalRoutes(app, at, kit)
    oauthRoutes(app, at, kit)
    otpRoutes(app, at, kit)
    mfaRoutes(app, at, kit)
  }

  app.post('/auth/logout', {
    schema: { tags: ['auth'], operationId: 'auth_logout', summary: 'Clear the auth cookie (sessions are ended by /table/{table}/auth/logout)', response: { 200: SuccessSchema }, 'x-document': { errors: [401, 500] } }
  }, async (_request, reply) => {
    clearAuthCookie(app, reply)
    return { success: true }
  })
  // The admin roles' second factor lives in the auth state's tables, which exist only where they are made.
  adminLoginRoute(app, limited, authTablesFor(app.fastbase.config).length > 0)
}
