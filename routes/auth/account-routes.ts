// sign-up, login-password, refresh-token and logout of one auth table.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { AuthTable } from '../../plugins/auth.js'
import { insertRecordSchema } from '../../schemas/record.js'
import { errorResponses } from '../../schemas/tables.js'
import { insert } from '../../lib/crud/write.js'
import { errors } from '../../lib/errors.js'
import { findById, findByIdentity, publicRecord } from '../../lib/auth/accounts.js'
import { verifyPassword } from '../../lib/auth/passwords.js'
import { passwordColumns } from '../../lib/auth/password-writes.js'
import { SessionResponseSchema, SuccessSchema } from './session-response.js'
import { openSession, sessionBody } from '../../lib/auth/session-service.js'
import { clearAuthCookie, type RouteKit } from './kit.js'

export function accountRoutes (app: FastifyInstance, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, crudContext } = kit
  const { fields } = at
  const db = app.fastbase.db
  const invalidLogin = () => errors.badRequest('Invalid username or password')

  if (fields.password !== undefined) {
    // The insert schema, except that keys naming no field are dropped instead of refused (DECISIONS 36).
    const signUpBody = Type.Object(insertRecordSchema(at.table.data).properties, { title: `${at.table.name} sign-up` })
    app.post(`${base}/sign-up`, {
      config: limited(),
      schema: { tags, summary: `Create a ${at.table.name} account`, body: signUpBody, response: { 200: SessionResponseSchema, ...errorResponses } }
    }, async (request) => {
      // The ordinary insert path: createRule, noInsert, validation and password hashing all apply.
      const values = Object.fromEntries(Object.entries(request.body as Record<string, unknown>).filter(([key]) => Object.hasOwn(signUpBody.properties, key)))
      const [created] = await insert(crudContext(request, at), { values, returning: fields.uid.name })
      if (created === undefined) throw errors.forbidden()
      const row = await findById(db, at, String(created[fields.uid.name]))
      return await openSession(app.fastbase.auth, at, row!)
    })

    app.post(`${base}/login-password`, {
      config: limited(),
      schema: {
        tags,
        summary: 'Log in with an email or username and a password',
        body: Type.Object({
          identity: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Email or username' })),
          email: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          username: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          password: Type.String({ minLength: 1, maxLength: 255 })
        }),
        response: { 200: SessionResponseSchema, ...errorResponses }
      }
    }, async (request) => {
      const body = request.body as { identity?: string, email?: string, username?: string, password: string }
      const identity = body.identity ?? body.email ?? body.username
      if (identity === undefined) throw errors.validation({ identity: { _errors: ['Required'] } })
      const row = await findByIdentity(db, at, identity)
      const stored = row?.[fields.password!.name] as string | undefined
      // verifyPassword spends the same time on a missing user: no account enumeration by timing.
      const result = await verifyPassword(body.password, stored, fields.salt === undefined ? undefined : row?.[fields.salt.name] as string | undefined)
      if (row === undefined || !result.ok) throw invalidLogin()
      if (result.needsRehash) {
        // A teenybase sha256 hash (or weaker scrypt parameters): upgrade it now that the password is known.
        await db(at.table.name).where(fields.uid.name, row[fields.uid.name] as string).update(await passwordColumns(fields, body.password))
      }
      return await openSession(app.fastbase.auth, at, row)
    })
  }

  app.post(`${base}/refresh-token`, {
    config: { ...limited(), allowExpiredToken: true },
    schema: {
      tags,
      summary: 'Exchange a refresh token for new tokens (the refresh token is rotated)',
      body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SessionResponseSchema, ...errorResponses }
    }
  }, async (request) => {
    const { refresh_token: refreshToken } = request.body as { refresh_token: string }
    const maxRefresh = at.ext.maxTokenRefresh ?? 0
    const refreshed = await app.fastbase.auth.sessions.refresh(at.table.name, refreshToken, maxRefresh)
    if (refreshed === undefined) throw errors.unauthorized('Invalid session')
    // An access token sent along must belong to the same session.
    if (request.auth.sid !== null && request.auth.sid !== refreshed.sid) throw errors.unauthorized('Invalid session')
    const row = await findById(db, at, refreshed.userId)
    if (row === undefined) throw errors.unauthorized('Invalid session')
    return sessionBody(app.fastbase.auth, at, publicRecord(app.fastbase.dialect, at, row), refreshed.sid, refreshed.refreshToken)
  })

  app.post(`${base}/logout`, {
    config: { allowExpiredToken: true },
    schema: { tags, summary: 'End the current session and clear the auth cookie', security: [{ bearerAuth: [] }], response: { 200: SuccessSchema, ...errorResponses } }
  }, async (request, reply) => {
    const { auth } = request
    if (auth.cid !== at.table.name || auth.sid === null) throw errors.unauthorized()
    await app.fastbase.auth.sessions.revoke(auth.sid)
    clearAuthCookie(app, reply)
    return { success: true }
  })
}
