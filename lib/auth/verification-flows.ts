// Email verification: a link mailed to the signed-in user, and its confirmation.
import { errors } from '../errors.js'
import { findById, isVerified, publicRecord } from './accounts.js'
import { openSession, type SessionResponse } from './session-service.js'
import type { AccountServices, AuthTable, Row } from './types.js'
import { reportUserWrite } from './user-changes.js'

const DEFAULT_VERIFY_TOKEN_TTL = 3600
const DEFAULT_VERIFY_EMAIL_GAP = 120

/** Mails a verification link to user `uid`; 400 when already verified, 429 within the gap. */
export async function requestVerification (services: AccountServices, at: AuthTable, uid: string): Promise<void> {
  const row = await findById(services.db, at, uid)
  if (row === undefined) throw errors.unauthorized()
  if (isVerified(at, publicRecord(services.dialect, at, row))) throw errors.badRequest('Already verified')
  const gap = at.ext.emailVerifyEmailDuration ?? DEFAULT_VERIFY_EMAIL_GAP
  const since = await services.oneTimeTokens.sinceLast('verify_email', at.table.name, uid)
  if (since !== undefined && since < gap) throw errors.tooManyRequests(`Verification email already sent, retry in ${gap - since}s`)
  const email = row[at.fields.email!.name] as string
  const token = await services.oneTimeTokens.issue('verify_email', at.table.name, { userId: uid, email }, at.ext.emailVerifyTokenDuration ?? DEFAULT_VERIFY_TOKEN_TTL)
  await services.sendActionEmail(at, 'verification', email, token)
}

/**
 * Marks the address verified. The signed-in owner (`callerUid`) gets the record; a click from the
 * email, with no session, gets a session.
 */
export async function confirmVerification (services: AccountServices, at: AuthTable, token: string, callerUid: string | undefined): Promise<{ record: Row } | SessionResponse> {
  const { fields } = at
  const owner = await services.oneTimeTokens.consume('verify_email', at.table.name, token)
  if (owner === undefined) throw errors.badRequest('Invalid or expired token')
  const row = await findById(services.db, at, owner.userId)
  // A token sent to an address the user has since changed proves nothing about the new one.
  if (row === undefined || row[fields.email!.name] !== owner.email) throw errors.badRequest('Invalid or expired token')
  await services.db(at.table.name).where(fields.uid.name, owner.userId).update({ [fields.verified!.name]: services.dialect.encode(fields.verified!, true) })
  const fresh = (await findById(services.db, at, owner.userId))!
  await reportUserWrite(services, at, services.db, 'update', fresh)
  if (callerUid === owner.userId) return { record: publicRecord(services.dialect, at, fresh) }
  return await openSession(services, at, fresh)
}
