// Password login and session refresh.
import { errors } from '../../errors.js'
import { findById, findByIdentity, publicRecord } from '../sessions/accounts.js'
import { passwordColumns } from './password-writes.js'
import { verifyPassword } from './passwords.js'
import { openSession, sessionBody, type SessionResponse, type SignInResponse } from '../sessions/session-service.js'
import type { AuthTable, SessionServices } from '../types.js'
import type { AuthTableWith } from '../table-with.js'
import { updateUser } from '../user-writes.js'
import { ANONYMOUS } from '../../auth-context.js'

/** A session for the account `identity` (email or username) names, when `password` is its password. */
export async function loginWithPassword (services: SessionServices, at: AuthTableWith<'password'>, identity: string, password: string): Promise<SignInResponse> {
  const { fields } = at
  const row = await findByIdentity(services.db, at, identity)
  // verifyPassword spends the same time on a missing user: no account enumeration by timing.
  const result = await verifyPassword(password, row?.[fields.password.name], fields.salt === undefined ? undefined : row?.[fields.salt.name])
  if (row === undefined || !result.ok) throw errors.badRequest('Invalid username or password')
  if (!result.needsRehash) return await openSession(services, at, row)
  // A teenybase sha256 hash (or weaker scrypt parameters): upgrade it now that the password is known.
  const uid = String(row[fields.uid.name])
  const columns = await passwordColumns(fields, password)
  return await services.db.transaction(async (trx) => {
    const updated = await updateUser(services, at, trx, { source: 'auth:password-rehash', caller: ANONYMOUS }, uid, columns)
    return await openSession(services, at, updated, trx)
  })
}

/**
 * New tokens for a refresh token (rotated; see SessionStore.refresh). An access token sent along
 * (`callerSid`) must belong to the same session.
 */
export async function refreshSession (services: SessionServices, at: AuthTable, refreshToken: string, callerSid: string | null): Promise<SessionResponse> {
  const refreshed = await services.sessions.refresh(at.table.name, refreshToken, at.ext.maxTokenRefresh ?? 0)
  if (refreshed === undefined) throw errors.unauthorized('Invalid session')
  if (callerSid !== null && callerSid !== refreshed.sid) throw errors.unauthorized('Invalid session')
  const row = await findById(services.db, at, refreshed.userId)
  if (row === undefined) throw errors.unauthorized('Invalid session')
  return sessionBody(services, at, publicRecord(services.dialect, at, row), refreshed.sid, refreshed.refreshToken, refreshed.aal)
}
