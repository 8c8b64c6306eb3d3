// The TOTP second factor of one auth table's users (the flows: lib/auth/mfa/mfa-flows.ts), where its auth
// extension has `totp`: enrol, confirm, disable (signed in), and mfa/verify, which completes a sign-in
// that answered a challenge.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { AuthTable } from '../../lib/auth/types.js'
import { callerOf } from '../../plugins/auth-context.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { errors } from '../../lib/errors.js'
import { findById } from '../../lib/auth/sessions/accounts.js'
import { verifyPassword } from '../../lib/auth/passwords/passwords.js'
import { completeChallenge, confirmTotp, enrollTotp, useFactor } from '../../lib/auth/mfa/mfa-flows.js'
import { startSession } from '../../lib/auth/sessions/session-service.js'
import type { Principal } from '../../lib/auth/mfa/mfa-store.js'
import { SessionResponseSchema, SuccessSchema } from './session-response.js'
import { FactorBody, TotpEnrollmentSchema, factorOf } from './mfa-bodies.js'
import { setAuthCookie, type RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'

export function mfaRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, otpDoc } = kit
  const { totp } = at.ext
  if (totp === undefined || totp === false) return
  const services = app.fastbase.auth
  const issuer = (typeof totp === 'object' ? totp.issuer : undefined) ?? app.fastbase.config.appName ?? 'fastbase'
  const { fields } = at

  /** The signed-in user of this table, as a factor's owner. */
  const signedIn = (request: FastifyRequest): Principal & { sid: string | null } => {
    const caller = callerOf(request)
    if (caller.uid === null && !caller.admin) throw errors.notSignedIn()
    if (caller.cid !== at.table.name || caller.uid === null) throw errors.forbidden('Only a user of this table manages their own second factor')
    return { table: at.table.name, userId: caller.uid, sid: caller.sid }
  }

  app.post(`${base}/mfa/totp/enroll`, {
    config: limited(),
    schema: { tags, summary: 'Start turning TOTP on: a new secret and its otpauth:// URI (on once confirmed)', ...otpDoc.mfaEnroll(), security: [{ bearerAuth: [] }], response: { 200: TotpEnrollmentSchema, ...errorResponses } }
  }, async (request) => {
    const p = signedIn(request)
    const record = callerOf(request).record
    const account = [fields.email, fields.username].map((f) => f === undefined ? undefined : record[f.name]).find((v): v is string => typeof v === 'string' && v !== '') ?? p.userId
    return await enrollTotp(services.mfa, p, issuer, account)
  })

  app.post(`${base}/mfa/totp/confirm`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Turn TOTP on with a current code; answers the recovery codes (once). The user\'s other sessions end; this one is raised to aal 2',
      ...otpDoc.mfaConfirm(),
      security: [{ bearerAuth: [] }],
      body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 32 }) }),
      response: { 200: Type.Object({ recovery_codes: Type.Array(Type.String()) }), ...errorResponses }
    }
  }, async (request) => {
    const p = signedIn(request)
    const answer = await confirmTotp(services.mfa, p, request.body.code)
    // Sessions opened before the factor proved nothing of it: they end, as a changed password's do.
    await services.db.transaction(async (trx) => {
      await services.sessions.revokeUser(at.table.name, p.userId, p.sid ?? undefined, trx)
      if (p.sid !== null) await services.sessions.raise(p.sid, 2, trx)
    })
    return answer
  })

  app.post(`${base}/mfa/totp/disable`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Turn TOTP off (needs a current code, a recovery code or the password)',
      ...otpDoc.mfaDisable(),
      security: [{ bearerAuth: [] }],
      body: Type.Intersect([FactorBody, Type.Object({ password: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) })]),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const p = signedIn(request)
    const { password, ...factor } = request.body
    if (password !== undefined && factor.code === undefined && factor.recoveryCode === undefined) {
      if (fields.password === undefined) throw errors.badRequest('This table has no password: send a code')
      const row = await findById(services.db, at, p.userId)
      const result = await verifyPassword(password, row?.[fields.password.name], fields.salt === undefined ? undefined : row?.[fields.salt.name])
      if (!result.ok) throw errors.badRequest('Invalid password')
    } else if (!await useFactor(services.mfa, p, factorOf(factor))) throw errors.mfaInvalid()
    await services.mfa.disable(p)
    return { success: true }
  })

  app.post(`${base}/mfa/verify`, {
    // Reads no token: the challenge is the credential.
    config: { ...limited(), externalCredential: true },
    schema: {
      tags,
      summary: 'Complete a sign-in that answered a challenge, with a TOTP code or a recovery code: the session (aal 2)',
      ...otpDoc.mfaVerify(),
      body: Type.Intersect([Type.Object({ challenge: Type.String({ minLength: 1, maxLength: 255 }) }), FactorBody]),
      response: { 200: SessionResponseSchema, ...errorResponses }
    }
  }, async (request, reply) => {
    const p = await completeChallenge(services.mfa, at.table.name, request.body.challenge, factorOf(request.body))
    const row = await findById(services.db, at, p.userId)
    if (row === undefined) throw errors.mfaInvalid('Invalid or expired challenge')
    const session = await startSession(services, at, row, 2)
    setAuthCookie(app, reply, session.token, at.tokenDuration)
    return session
  })
}
