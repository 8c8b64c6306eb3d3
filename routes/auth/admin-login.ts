// POST /admin/login: the panel's sign-in (lib/auth/tokens/admin-tokens.ts), and the admin roles' TOTP
// second factor under /admin/mfa/ (decision D118): a role with TOTP on gets a challenge at login,
// and /admin/mfa/verify answers its token. Only a superadmin manages the roles' factors.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { adminRoleOf, adminToken } from '../../lib/auth/tokens/admin-tokens.js'
import { ADMIN_PRINCIPALS } from '../../lib/auth/stores/store-tables.js'
import { completeChallenge, confirmTotp, enrollTotp, useFactor } from '../../lib/auth/mfa/mfa-flows.js'
import { mfaChallenge } from '../../lib/auth/sessions/session-service.js'
import { errors } from '../../lib/errors.js'
import type { AdminRole } from '../../lib/auth-context.js'
import { callerOf } from '../../plugins/auth-context.js'
import { MfaChallengeSchema, SuccessSchema } from './session-response.js'
import { FactorBody, TotpEnrollmentSchema, factorOf } from './mfa-bodies.js'
import { RECOVERY_CODES, TOTP_ENROLLMENT } from './document.js'
import type { TypeBoxApp } from '../typebox.js'

const AdminTokenSchema = Type.Object({ token: Type.String(), role: Type.String(), expiresIn: Type.Integer() })
const ADMIN_ROLES: AdminRole[] = ['superadmin', 'editor', 'viewer']
const Role = Type.Object({ role: Type.Optional(Type.Union([Type.Literal('superadmin'), Type.Literal('editor'), Type.Literal('viewer')], { description: 'Whose factor (default superadmin)' })) })

export function adminLoginRoute (app: TypeBoxApp, limited: () => object, mfaTables: boolean): void {
  const { config, auth } = app.fastbase
  const host = new URL(config.appUrl).host
  // `limited()` is empty when rate limits are off.
  const errorsOf = (...statuses: number[]) => ({ errors: [...statuses, 413, 415, 500, ...('rateLimit' in limited() ? [429] : [])] })
  app.post('/admin/login', {
    config: limited(),
    schema: {
      tags: ['admin'],
      summary: 'Exchange the service token or an admin password for a short-lived admin token (or, for a role with TOTP on, a challenge)',
      operationId: 'admin_login',
      'x-document': errorsOf(400, 401, ...(mfaTables ? [503] : [])),
      body: Type.Object({ password: Type.String({ minLength: 1, maxLength: 1024 }) }),
      response: { 200: mfaTables ? Type.Union([AdminTokenSchema, MfaChallengeSchema]) : AdminTokenSchema, ...errorResponses }
    }
  }, async (request) => {
    const role = adminRoleOf(auth.adminSecrets, request.body.password)
    const principal = { table: ADMIN_PRINCIPALS, userId: role }
    if (mfaTables && await auth.mfa.enabled(principal)) return await mfaChallenge(auth, principal)
    return adminToken(role, auth.adminKeys, auth.issuer, host, 1)
  })
  if (!mfaTables) return

  /** The role a superadmin names (their own by default); anyone else is refused. */
  const managedRole = (request: FastifyRequest, role: AdminRole | undefined): AdminRole => {
    const caller = callerOf(request)
    if (!caller.admin) throw errors.notSignedIn()
    if (!caller.superadmin) throw errors.forbidden('Only a superadmin manages the admin roles\' second factors')
    return role ?? 'superadmin'
  }
  const mfaConfig = { ...limited(), adminMfa: true }

  app.post('/admin/mfa/totp/enroll', {
    config: mfaConfig,
    schema: {
      tags: ['admin'], summary: 'Start turning TOTP on for an admin role: a new secret and its otpauth:// URI', operationId: 'admin_mfa_totp_enroll', security: [{ bearerAuth: [] }],
      'x-document': { ...errorsOf(400, 401, 403, 503), responses: { 200: { description: 'A new secret, on once confirmed', content: { 'application/json': { schema: TOTP_ENROLLMENT } } } } }, body: Type.Optional(Role), response: { 200: TotpEnrollmentSchema, ...errorResponses }
    }
  }, async (request) => {
    const role = managedRole(request, request.body?.role)
    return await enrollTotp(auth.mfa, { table: ADMIN_PRINCIPALS, userId: role }, config.appName ?? 'fastbase', `${role}@${host}`)
  })

  app.post('/admin/mfa/totp/confirm', {
    config: mfaConfig,
    schema: {
      tags: ['admin'], summary: 'Turn TOTP on for an admin role with a current code; answers its recovery codes', operationId: 'admin_mfa_totp_confirm', security: [{ bearerAuth: [] }],
      'x-document': { ...errorsOf(400, 401, 403, 503), responses: { 200: { description: 'On; the recovery codes are shown this once', content: { 'application/json': { schema: RECOVERY_CODES } } } } },
      body: Type.Intersect([Role, Type.Object({ code: Type.String({ minLength: 1, maxLength: 32 }) })]),
      response: { 200: Type.Object({ recovery_codes: Type.Array(Type.String()) }), ...errorResponses }
    }
  }, async (request) => {
    const role = managedRole(request, request.body.role)
    return await confirmTotp(auth.mfa, { table: ADMIN_PRINCIPALS, userId: role }, request.body.code)
  })

  app.post('/admin/mfa/totp/disable', {
    config: mfaConfig,
    schema: {
      tags: ['admin'], summary: 'Turn TOTP off for an admin role (needs a current code or a recovery code of that role)', operationId: 'admin_mfa_totp_disable', security: [{ bearerAuth: [] }],
      'x-document': errorsOf(400, 401, 403, 503), body: Type.Intersect([Role, FactorBody]), response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const role = managedRole(request, request.body.role)
    const principal = { table: ADMIN_PRINCIPALS, userId: role }
    // A code, never the role's secret: whoever holds the service token is what the factor guards against.
    const proof = factorOf(request.body)
    if (!await useFactor(auth.mfa, principal, proof)) throw errors.mfaInvalid()
    await auth.mfa.disable(principal)
    return { success: true }
  })

  app.post('/admin/mfa/verify', {
    config: { ...mfaConfig, externalCredential: true },
    schema: {
      tags: ['admin'], summary: 'Complete an admin sign-in with a TOTP code or a recovery code: the admin token', operationId: 'admin_mfa_verify',
      'x-document': errorsOf(400, 401, 503),
      body: Type.Intersect([Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 255 }) }), FactorBody]),
      response: { 200: AdminTokenSchema, ...errorResponses }
    }
  }, async (request) => {
    const principal = await completeChallenge(auth.mfa, ADMIN_PRINCIPALS, request.body.challenge, factorOf(request.body))
    const role = ADMIN_ROLES.find((r) => r === principal.userId)
    if (role === undefined) throw errors.mfaInvalid('Invalid or expired challenge')
    return adminToken(role, auth.adminKeys, auth.issuer, host, 2)
  })
}
