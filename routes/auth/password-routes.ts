// change-password, request-password-reset and confirm-password-reset of one auth table.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AuthTable } from '../../plugins/auth.js'
import { errorResponses } from '../../schemas/tables.js'
import { errors, type FieldErrors } from '../../lib/errors.js'
import { findById, findByIdentity } from '../../lib/auth/accounts.js'
import { normalizeEmail, teenybaseEmail } from '../../lib/auth/email-address.js'
import { checkCurrentPassword, newPassword, passwordColumns } from '../../lib/auth/password-writes.js'
import { SessionResponseSchema, SuccessSchema } from './session-response.js'
import { openSession } from '../../lib/auth/session-service.js'
import { sendActionEmail } from './send-email.js'
import type { RouteKit } from './kit.js'

const DEFAULT_RESET_TOKEN_TTL = 3600
const DEFAULT_RESET_EMAIL_GAP = 120

export function passwordRoutes (app: FastifyInstance, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited } = kit
  const { fields } = at
  if (fields.password === undefined) return
  const db = app.fastbase.db
  const { sessions, oneTimeTokens } = app.fastbase.auth
  const pw = fields.password.name
  const passwordBody = (extra: Record<string, ReturnType<typeof Type.String>>) => Type.Object({
    ...extra,
    [pw]: Type.String(),
    ...(fields.confirmName === undefined ? {} : { [fields.confirmName]: Type.String() })
  })

  function checkedPassword (body: Record<string, unknown>): string {
    const fieldErrors: FieldErrors = {}
    const password = newPassword(fields, body, fieldErrors)
    if (password === undefined || Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
    return password
  }

  app.post(`${base}/change-password`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Change the password; the user\'s other sessions are revoked',
      security: [{ bearerAuth: [] }],
      body: passwordBody(fields.currentName === undefined ? {} : { [fields.currentName]: Type.String() }),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const { auth } = request
    // Unverified users may change their password too (DECISIONS 29).
    if (auth.cid !== at.table.name || auth.uid === null) throw errors.unauthorized()
    const body = request.body as Record<string, unknown>
    const password = checkedPassword(body)
    await checkCurrentPassword(db, at.table.name, fields, auth.uid, body)
    // The password only (DECISIONS 14): no other body key reaches the row.
    await db(at.table.name).where(fields.uid.name, auth.uid).update(await passwordColumns(fields, password))
    await sessions.revokeUser(at.table.name, auth.uid, auth.sid ?? undefined)
    return { success: true }
  })

  if (fields.email === undefined) return

  app.post(`${base}/request-password-reset`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Email a password reset link (always answers success: no account enumeration)',
      body: Type.Object({ [fields.email.name]: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SuccessSchema, ...errorResponses }
    }
  }, async (request) => {
    const email = (request.body as Record<string, string>)[fields.email!.name]
    // Not awaited: the answer must not take longer when the account exists.
    void (async () => {
      const row = await findByIdentity(db, at, email)
      // Found by its address (as typed, or teenybase's form of it), not by a username; the link goes
      // to the address stored, never to the one typed.
      const stored = row?.[fields.email!.name]
      if (row === undefined || (stored !== normalizeEmail(email) && stored !== teenybaseEmail(email))) return
      const uid = String(row[fields.uid.name])
      const since = await oneTimeTokens.sinceLast('reset_password', at.table.name, uid)
      if (since !== undefined && since < (at.ext.passwordResetEmailDuration ?? DEFAULT_RESET_EMAIL_GAP)) return
      const token = await oneTimeTokens.issue('reset_password', at.table.name, { userId: uid, email: row[fields.email!.name] as string }, at.ext.passwordResetTokenDuration ?? DEFAULT_RESET_TOKEN_TTL)
      await sendActionEmail(app, at, 'passwordReset', row[fields.email!.name] as string, token)
    })().catch((error: unknown) => request.log.error({ err: error }, 'password reset email failed'))
    return { success: true }
  })

  app.post(`${base}/confirm-password-reset`, {
    config: limited(),
    schema: {
      tags,
      summary: 'Set a new password with a reset token; every session is revoked and a new one returned',
      body: passwordBody({ token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SessionResponseSchema, ...errorResponses }
    }
  }, async (request) => {
    const body = request.body as Record<string, unknown>
    // Checked before the token is consumed, so a typo does not burn the token.
    const password = checkedPassword(body)
    const owner = await oneTimeTokens.consume('reset_password', at.table.name, body.token as string)
    if (owner === undefined) throw errors.badRequest('Invalid or expired token')
    const row = await findById(db, at, owner.userId)
    if (row === undefined || row[fields.email!.name] !== owner.email) throw errors.badRequest('Invalid or expired token')
    return await db.transaction(async (trx) => {
      const update = { ...await passwordColumns(fields, password), ...(fields.verified === undefined ? {} : { [fields.verified.name]: app.fastbase.dialect.encode(fields.verified, true) }) }
      // A reset link proves the user reads that mailbox: the email counts as verified.
      await trx(at.table.name).where(fields.uid.name, owner.userId).update(update)
      await sessions.revokeUser(at.table.name, owner.userId, undefined, trx)
      return await openSession(app.fastbase.auth, at, (await trx(at.table.name).where(fields.uid.name, owner.userId).first())!, trx)
    })
  })
}
