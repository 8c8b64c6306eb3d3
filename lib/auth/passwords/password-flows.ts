// Changing and resetting a password. Reset links prove the mailbox, so a confirmed reset also marks
// the address verified; every path revokes the sessions the old password opened.
import { errors, type FieldErrors } from '../../errors.js'
import { INVALID_TOKEN } from '../stores/one-time-tokens.js'
import { findById, findByIdentity } from '../sessions/accounts.js'
import { normalizeEmail, teenybaseEmail } from '../email-address.js'
import { checkCurrentPassword, newPassword, passwordColumns } from './password-writes.js'
import { openSession, type SignInResponse } from '../sessions/session-service.js'
import type { AccountServices, Row } from '../types.js'
import type { AuthTableWith } from '../table-with.js'
import { updateUser } from '../user-writes.js'
import { ANONYMOUS, type AuthContext } from '../../auth-context.js'

const DEFAULT_RESET_TOKEN_TTL = 3600
const DEFAULT_RESET_EMAIL_GAP = 120

/** The new password of a body (with its confirm field), or a 400 naming what is wrong. */
function checkedPassword (at: AuthTableWith<'password'>, body: Row): string {
  const fieldErrors: FieldErrors = {}
  const password = newPassword(at.fields, body, fieldErrors)
  if (password === undefined || Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
  return password
}

/**
 * Writes the password (and what the table's beforeUpdate hooks add: decision D69) and revokes the
 * user's other sessions, in one transaction. `caller` is the signed-in user.
 */
export async function changePassword (services: AccountServices, at: AuthTableWith<'password'>, caller: AuthContext & { uid: string }, body: Row): Promise<void> {
  const { uid } = caller
  const password = checkedPassword(at, body)
  await checkCurrentPassword(services.db, at.table.name, at.fields, uid, body)
  const columns = await passwordColumns(at.fields, password)
  await services.db.transaction(async (trx) => {
    await updateUser(services, at, trx, { source: 'auth:password-change', caller }, uid, columns)
    await services.sessions.revokeUser(at.table.name, uid, caller.sid ?? undefined, trx)
  })
}

/**
 * Emails a reset link when `email` names an account (as typed, or teenybase's form of it; never by
 * username), at most once per gap. The link goes to the address stored, never to the one typed.
 * Callers answer success either way and need not wait: nothing here tells whether the account exists.
 */
export async function requestPasswordReset (services: AccountServices, at: AuthTableWith<'email'>, email: string): Promise<void> {
  const emailField = at.fields.email
  const row = await findByIdentity(services.db, at, email)
  const stored = row?.[emailField.name]
  if (row === undefined || typeof stored !== 'string' || (stored !== normalizeEmail(email) && stored !== teenybaseEmail(email))) return
  const uid = String(row[at.fields.uid.name])
  const since = await services.oneTimeTokens.sinceLast('reset_password', at.table.name, uid)
  if (since !== undefined && since < (at.ext.passwordResetEmailDuration ?? DEFAULT_RESET_EMAIL_GAP)) return
  const token = await services.oneTimeTokens.issue('reset_password', at.table.name, { userId: uid, email: stored }, at.ext.passwordResetTokenDuration ?? DEFAULT_RESET_TOKEN_TTL)
  await services.sendActionEmail(at, 'passwordReset', stored, token)
}

/** Sets the password in `body` (with its confirm field) that the reset `token` allows, revokes every session and opens a new one. */
export async function confirmPasswordReset (services: AccountServices, at: AuthTableWith<'password' | 'email'>, token: string, body: Row): Promise<SignInResponse> {
  const { fields } = at
  // Checked before the token is consumed, so a typo does not burn the token.
  const password = checkedPassword(at, body)
  const owner = await services.oneTimeTokens.consume('reset_password', at.table.name, token)
  if (typeof owner === 'string') throw errors.badRequest(owner)
  const row = await findById(services.db, at, owner.userId)
  if (row === undefined || row[fields.email.name] !== owner.email) throw errors.badRequest(INVALID_TOKEN)
  const values = { ...await passwordColumns(fields, password), ...fields.verified === undefined ? {} : { [fields.verified.name]: true } }
  return await services.db.transaction(async (trx) => {
    const updated = await updateUser(services, at, trx, { source: 'auth:password-reset', caller: ANONYMOUS }, owner.userId, values)
    await services.sessions.revokeUser(at.table.name, owner.userId, undefined, trx)
    return await openSession(services, at, updated, trx)
  })
}
