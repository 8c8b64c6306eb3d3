// change-password, request-password-reset and confirm-password-reset of one auth table (the flows:
// lib/auth/passwords/password-flows.ts).
import { Type } from '@sinclair/typebox'
import type { AuthTable } from '../../lib/auth/types.js'
import { tableHas } from '../../lib/auth/table-with.js'
import { callerOf } from '../../plugins/auth-context.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { errors } from '../../lib/errors.js'
import { changePassword, confirmPasswordReset, requestPasswordReset } from '../../lib/auth/passwords/password-flows.js'
import { SignInResponseSchema, SuccessSchema } from './session-response.js'
import type { RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'
import { requestLog } from '../../plugins/server-log.js'

export function passwordRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, doc } = kit
  if (!tableHas(at, 'password')) return
  const { fields } = at
  const services = app.fastbase.auth
  const passwordBody = (extra: Record<string, ReturnType<typeof Type.String>>) => Type.Object({
    ...extra,
    [fields.password.name]: Type.String(),
    ...(fields.confirmName === undefined ? {} : { [fields.confirmName]: Type.String() })
  })

  app.post(`${base}/change-password`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Change the password; the user\'s other sessions are revoked',
      ...doc.changePassword(),
      security: [{ bearerAuth: [] }],
      body: passwordBody(fields.currentName === undefined ? {} : { [fields.currentName]: Type.String() }),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const auth = callerOf(request)
    // Unverified users may change their password too (decision D29).
    if (auth.cid !== at.table.name || auth.uid === null) throw errors.notSignedIn()
    await changePassword(services, at, { ...auth, uid: auth.uid }, request.body)
    return { success: true }
  })

  if (!tableHas(at, 'email')) return
  const { email: emailField } = at.fields

  app.post(`${base}/request-password-reset`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Email a password reset link (always answers success: no account enumeration)',
      ...doc.requestPasswordReset(),
      body: Type.Object({ [emailField.name]: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const email = request.body[emailField.name]
    // Not awaited: the answer must not take longer when the account exists.
    requestPasswordReset(services, at, email).catch((error: unknown) => requestLog(request).error({ err: error }, 'password reset email failed'))
    return { success: true }
  })

  app.post(`${base}/confirm-password-reset`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Set a new password with a reset token; every session is revoked and a new one returned',
      ...doc.confirmPasswordReset(),
      body: passwordBody({ token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SignInResponseSchema, ...errorResponses }
    }
  }, async (request) => await confirmPasswordReset(services, at, request.body.token, request.body))
}
