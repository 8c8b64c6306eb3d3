// request-otp and login-otp of one auth table (the flows: lib/auth/email/otp-flows.ts), where its auth
// extension has `emailOtp` and the table has an email and a verified column.
import { Type } from '@sinclair/typebox'
import type { AuthTable } from '../../lib/auth/types.js'
import { tableHas } from '../../lib/auth/table-with.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { errors } from '../../lib/errors.js'
import { loginWithEmailCode, requestEmailCode } from '../../lib/auth/email/otp-flows.js'
import { SignInResponseSchema, SuccessSchema } from './session-response.js'
import type { RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'
import { requestLog } from '../../plugins/server-log.js'

export function otpRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, otpDoc } = kit
  if (at.ext.emailOtp === undefined || !tableHas(at, 'email', 'verified')) return
  const services = app.fastbase.auth

  app.post(`${base}/request-otp`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Email a sign-in code and link (always answers success: no account enumeration)',
      ...otpDoc.requestOtp(),
      body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    // Not awaited: the answer must not take longer when the account exists (or the mail server is slow).
    requestEmailCode(services, at, request.body.email).catch((error: unknown) => requestLog(request).error({ err: error }, 'sign-in code email failed'))
    return { success: true }
  })

  app.post(`${base}/login-otp`, {
    // A stale auth cookie must not stand in the way of signing in.
    config: { ...limited(), externalCredential: true },
    schema: {
      tags,
      summary: 'Sign in with an emailed code ({ email, code }) or the link\'s token ({ token })',
      ...otpDoc.loginOtp(),
      body: Type.Object({
        email: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        code: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
        token: Type.Optional(Type.String({ minLength: 1, maxLength: 255 }))
      }),
      response: { 200: SignInResponseSchema, ...errorResponses }
    }
  }, async (request) => {
    const { email, code, token } = request.body
    if (token !== undefined && email === undefined && code === undefined) return await loginWithEmailCode(services, at, { token })
    if (token === undefined && email !== undefined && code !== undefined) return await loginWithEmailCode(services, at, { email, code })
    throw errors.badRequest('Send { email, code } or { token }')
  })
}
