// request-verification and confirm-verification of one auth table.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AuthTable } from '../../plugins/auth.js'
import { errorResponses } from '../../schemas/tables.js'
import { errors } from '../../lib/errors.js'
import { findById, isVerified, publicRecord } from '../../lib/auth/accounts.js'
import { SessionResponseSchema, SuccessSchema } from './session-response.js'
import { openSession } from '../../lib/auth/session-service.js'
import { sendActionEmail } from './send-email.js'
import type { RouteKit } from './kit.js'

const DEFAULT_VERIFY_TOKEN_TTL = 3600
const DEFAULT_VERIFY_EMAIL_GAP = 120

export function verificationRoutes (app: FastifyInstance, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited } = kit
  const { fields } = at
  if (fields.verified === undefined || fields.email === undefined) return
  const db = app.fastbase.db
  const { oneTimeTokens } = app.fastbase.auth
  const verified = fields.verified
  const emailField = fields.email

  app.post(`${base}/request-verification`, {
    config: limited(),
    schema: { tags, summary: 'Email a verification link to the signed-in user', security: [{ bearerAuth: [] }], response: { 200: SuccessSchema, ...errorResponses } }
  }, async (request) => {
    const { auth } = request
    if (auth.cid !== at.table.name || auth.uid === null) throw errors.unauthorized()
    const row = await findById(db, at, auth.uid)
    if (row === undefined) throw errors.unauthorized()
    if (isVerified(at, publicRecord(app.fastbase.dialect, at, row))) throw errors.badRequest('Already verified')
    const gap = at.ext.emailVerifyEmailDuration ?? DEFAULT_VERIFY_EMAIL_GAP
    const since = await oneTimeTokens.sinceLast('verify_email', at.table.name, auth.uid)
    if (since !== undefined && since < gap) throw errors.tooManyRequests(`Verification email already sent, retry in ${gap - since}s`)
    const email = row[emailField.name] as string
    const token = await oneTimeTokens.issue('verify_email', at.table.name, { userId: auth.uid, email }, at.ext.emailVerifyTokenDuration ?? DEFAULT_VERIFY_TOKEN_TTL)
    await sendActionEmail(app, at, 'verification', email, token)
    return { success: true }
  })

  app.post(`${base}/confirm-verification`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Confirm an email address with a verification token',
      body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: Type.Union([SessionResponseSchema, Type.Object({ record: Type.Record(Type.String(), Type.Unknown()) })]), ...errorResponses }
    }
  }, async (request) => {
    const owner = await oneTimeTokens.consume('verify_email', at.table.name, (request.body as { token: string }).token)
    if (owner === undefined) throw errors.badRequest('Invalid or expired token')
    const row = await findById(db, at, owner.userId)
    // A token sent to an address the user has since changed proves nothing about the new one.
    if (row === undefined || row[emailField.name] !== owner.email) throw errors.badRequest('Invalid or expired token')
    await db(at.table.name).where(fields.uid.name, owner.userId).update({ [verified.name]: app.fastbase.dialect.encode(verified, true) })
    const fresh = (await findById(db, at, owner.userId))!
    // The signed-in user gets the record; a click from the email (no session) gets a session.
    if (request.auth.uid === owner.userId && request.auth.cid === at.table.name) return { record: publicRecord(app.fastbase.dialect, at, fresh) }
    return await openSession(app.fastbase.auth, at, fresh)
  })
}
