// Email verification: a link mailed to the signed-in user, and its confirmation.
import { errors } from '../../errors.js'
import { INVALID_TOKEN } from '../stores/one-time-tokens.js'
import { findById, isVerified, publicRecord } from '../sessions/accounts.js'
import { openSession, type SignInResponse } from '../sessions/session-service.js'
import type { AccountServices, Row } from '../types.js'
import type { AuthTableWith } from '../table-with.js'
import { updateUser } from '../user-writes.js'
import type { AuthContext } from '../../auth-context.js'

const DEFAULT_VERIFY_TOKEN_TTL = 3600
const DEFAULT_VERIFY_EMAIL_GAP = 120

/** Mails a verification link to user `uid`; 400 when already verified, 429 within the gap. */
export async function requestVerification (services: AccountServices, at: AuthTableWith<'email'>, uid: string): Promise<void> {
  const row = await findById(services.db, at, uid)
  if (row === undefined) throw errors.unauthorized()
  if (isVerified(at, publicRecord(services.dialect, at, row))) throw errors.badRequest('Already verified')
  const gap = at.ext.emailVerifyEmailDuration ?? DEFAULT_VERIFY_EMAIL_GAP
  const since = await services.oneTimeTokens.sinceLast('verify_email', at.table.name, uid)
  if (since !== undefined && since < gap) throw errors.tooManyRequests(`Verification email already sent, retry in ${gap - since}s`)
  const email = row[at.fields.email.name] as string
  const token = await services.oneTimeTokens.issue('verify_email', at.table.name, { userId: uid, email }, at.ext.emailVerifyTokenDuration ?? DEFAULT_VERIFY_TOKEN_TTL)
  await services.sendActionEmail(at, 'verification', email, token)
}

/**
 * Marks the address verified (with what the table's beforeUpdate hooks add: decision D69). The
 * signed-in owner gets the record; a click from the email, with no session, gets a session.
 */
export async function confirmVerification (services: AccountServices, at: AuthTableWith<'email' | 'verified'>, token: string, caller: AuthContext): Promise<{ record: Row } | SignInResponse> {
  const { fields } = at
  const owner = await services.oneTimeTokens.consume('verify_email', at.table.name, token)
  if (typeof owner === 'string') throw errors.badRequest(owner)
  const row = await findById(services.db, at, owner.userId)
  // A token sent to an address the user has since changed proves nothing about the new one.
  if (row === undefined || row[fields.email.name] !== owner.email) throw errors.badRequest(INVALID_TOKEN)
  return await services.db.transaction(async (trx) => {
    const fresh = await updateUser(services, at, trx, { source: 'auth:verify-email', caller }, owner.userId, { [fields.verified.name]: true })
    if (caller.cid === at.table.name && caller.uid === owner.userId) return { record: publicRecord(services.dialect, at, fresh) }
    return await openSession(services, at, fresh, trx)
  })
}
