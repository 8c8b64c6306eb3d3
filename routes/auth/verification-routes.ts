// request-verification and confirm-verification of one auth table (the flows:
// lib/auth/email/verification-flows.ts).
import { Type } from '@sinclair/typebox'
import type { AuthTable } from '../../lib/auth/types.js'
import { tableHas } from '../../lib/auth/table-with.js'
import { callerOf } from '../../plugins/auth-context.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { errors } from '../../lib/errors.js'
import { confirmVerification, requestVerification } from '../../lib/auth/email/verification-flows.js'
import { SignInResponseSchema, SuccessSchema } from './session-response.js'
import type { RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'

export function verificationRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, doc } = kit
  if (!tableHas(at, 'verified', 'email')) return
  const services = app.fastbase.auth

  app.post(`${base}/request-verification`, {
    config: limited(),
    schema: { tags, summary: 'Email a verification link to the signed-in user', ...doc.requestVerification(), security: [{ bearerAuth: [] }], response: { 200: SuccessSchema, ...errorResponses } }
  }, async (request) => {
    const auth = callerOf(request)
    // No credentials is 401 (sign in first); a caller signed in as someone else (another table's
    // user, an admin) is 403: signing in again would not help.
    if (auth.uid === null && !auth.admin) throw errors.notSignedIn()
    if (auth.cid !== at.table.name || auth.uid === null) throw errors.forbidden('Only a user of this table can ask to verify their own email')
    await requestVerification(services, at, auth.uid)
    return { success: true }
  })

  app.post(`${base}/confirm-verification`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Confirm an email address with a verification token',
      ...doc.confirmVerification(),
      body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: Type.Union([SignInResponseSchema, Type.Object({ record: Type.Record(Type.String(), Type.Unknown()) })]), ...errorResponses }
    }
  }, async (request) => {
    return await confirmVerification(services, at, request.body.token, callerOf(request))
  })
}
