// sign-up, login-password, refresh-token and logout of one auth table (the flows: lib/auth/passwords/account-flows.ts;
// sign-up is the table's ordinary insert).
import { Type } from '@sinclair/typebox'
import type { AuthTable } from '../../lib/auth/types.js'
import { tableHas } from '../../lib/auth/table-with.js'
import { callerOf } from '../../plugins/auth-context.js'
import { insertRecordSchema } from '../../schemas/http/record.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { insert } from '../../lib/crud/write.js'
import { errors } from '../../lib/errors.js'
import { findById, publicRecord } from '../../lib/auth/sessions/accounts.js'
import { loginWithPassword, refreshSession } from '../../lib/auth/passwords/account-flows.js'
import { SessionResponseSchema, SignInResponseSchema, SuccessSchema } from './session-response.js'
import { openSession } from '../../lib/auth/sessions/session-service.js'
import { clearAuthCookie, type RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'

const Text = (description: string) => Type.String({ minLength: 1, maxLength: 255, description })
const Password = Text('The account\'s password')
/**
 * A password sign-in names the account by one of `identity`, `email` or `username` (read in that
 * order when several are sent): a body naming none is refused, so the schema does not allow one.
 */
const LoginBody = Type.Union([
  Type.Object({ identity: Text('Email or username'), password: Password }),
  Type.Object({ email: Text('Email'), password: Password }),
  Type.Object({ username: Text('Username'), password: Password })
])

export function accountRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, crudContext, doc } = kit
  const { fields } = at
  const db = app.fastbase.db

  if (tableHas(at, 'password')) {
    // The insert schema, except that keys naming no field are dropped instead of refused (decision D36).
    const signUpBody = Type.Object(insertRecordSchema(at.table.data).properties, { title: `${at.table.name} sign-up` })
    app.post(`${base}/sign-up`, {
      config: limited(),
      schema: { tags, summary: `Create a ${at.table.name} account`, ...doc.signUp(), body: signUpBody, response: { 200: SignInResponseSchema, ...errorResponses } }
    }, async (request) => {
      // The ordinary insert path: createRule, noInsert, validation and password hashing all apply.
      const values = Object.fromEntries(Object.entries(request.body).filter(([key]) => Object.hasOwn(signUpBody.properties, key)))
      const [created] = await insert({ ...crudContext(request, at), source: 'auth:sign-up' }, { values, returning: fields.uid.name })
      if (created === undefined) throw errors.forbidden()
      const row = await findById(db, at, String(created[fields.uid.name]))
      app.fastbase.auth.executor.hooks?.signedUp(at.table.name, publicRecord(app.fastbase.dialect, at, row!), db, request.id)
      return await openSession(app.fastbase.auth, at, row!)
    })

    app.post(`${base}/login-password`, {
      config: limited(),
      schema: {
        tags,
        summary: 'Log in with an email or username and a password',
        ...doc.loginPassword(),
        body: LoginBody,
        response: { 200: SignInResponseSchema, ...errorResponses }
      }
    }, async (request) => {
      const { body } = request
      const identity = 'identity' in body ? body.identity : 'email' in body ? body.email : body.username
      return await loginWithPassword(app.fastbase.auth, at, identity, body.password)
    })
  }

  app.post(`${base}/refresh-token`, {
    config: { ...limited(), allowExpiredToken: true },
    schema: {
      tags,
      summary: 'Exchange a refresh token for new tokens (the refresh token is rotated)',
      ...doc.refreshToken(),
      body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 255 }) }),
      response: { 200: SessionResponseSchema, ...errorResponses }
    }
  }, async (request) => {
    const { refresh_token: refreshToken } = request.body
    return await refreshSession(app.fastbase.auth, at, refreshToken, callerOf(request).sid)
  })

  app.post(`${base}/logout`, {
    config: { allowExpiredToken: true },
    schema: { tags, summary: 'End the current session and clear the auth cookie', ...doc.logout(), security: [{ bearerAuth: [] }], response: { 200: SuccessSchema, ...errorResponses } }
  }, async (request, reply) => {
    const auth = callerOf(request)
    if (auth.cid !== at.table.name || auth.sid === null) throw errors.notSignedIn()
    await app.fastbase.auth.sessions.revoke(auth.sid)
    clearAuthCookie(app, reply)
    return { success: true }
  })
}
