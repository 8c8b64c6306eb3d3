// Signing in by a code or link mailed to the address (decision D113). Asking never tells whether an
// account exists (callers answer success at once and need not wait); a right code proves the
// mailbox, so it signs in the account holding the address (taking over one whose address nobody had
// proven, as a provider-verified sign-in does: lib/auth/oauth/external-users.ts), or creates a verified
// one where the table allows sign-up by code.
import { errors } from '../../errors.js'
import { ANONYMOUS } from '../../auth-context.js'
import { isValidEmail, normalizeEmail } from '../email-address.js'
import { createUser, userByEmail, type ExternalIdentity } from '../oauth/external-users.js'
import type { Flow } from '../user-writes.js'
import { openSession, type SignInResponse } from '../sessions/session-service.js'
import type { AccountServices } from '../types.js'
import type { AuthTableWith } from '../table-with.js'
import type { EmailCodes } from './email-codes.js'
import type { AddressLimit } from '../stores/address-limit.js'

export interface OtpServices extends AccountServices {
  emailCodes: EmailCodes
  /** Codes mailed per address, for the fleet. */
  addressLimit: AddressLimit
}

export interface OtpSettings { signUp: boolean, digits: number, ttl: number, maxAttempts: number, perAddress: number }

/** Per-address window of `perAddress`. */
export const ADDRESS_WINDOW_MS = 15 * 60_000

export function otpSettings (at: AuthTableWith<'email'>): OtpSettings {
  const o = at.ext.emailOtp ?? {}
  return { signUp: o.signUp === true, digits: o.codeLength ?? 6, ttl: o.codeDuration ?? 600, maxAttempts: o.maxAttempts ?? 5, perAddress: o.perAddress ?? 5 }
}

/**
 * Mails a code and link to `typed` when it may sign in (an account holds it, or sign-up by code is
 * on). A code is stored for any well-formed address within its limit, mailed or not, so the
 * sign-in that follows does the same work either way.
 */
export async function requestEmailCode (services: OtpServices, at: AuthTableWith<'email' | 'verified'>, typed: string): Promise<void> {
  const settings = otpSettings(at)
  const email = normalizeEmail(typed)
  if (!isValidEmail(email)) return
  if (!await services.addressLimit.hit(`otp ${at.table.name} ${email}`, settings.perAddress, ADDRESS_WINDOW_MS)) return
  const exists = await services.db(at.table.name).where(at.fields.email.name, email).first(at.fields.uid.name) !== undefined
  const { code, token } = await services.emailCodes.issue(at.table.name, email, settings.digits, settings.ttl)
  if (exists || settings.signUp) await services.sendActionEmail(at, 'otp', email, token, code)
}

export type OtpProof = { email: string, code: string } | { token: string }

/** A session (or the second factor's challenge) for the address a code or link proves. */
export async function loginWithEmailCode (services: OtpServices, at: AuthTableWith<'email' | 'verified'>, proof: OtpProof): Promise<SignInResponse> {
  const settings = otpSettings(at)
  let email: string | undefined
  if ('token' in proof) email = await services.emailCodes.useToken(at.table.name, proof.token)
  else {
    const typed = normalizeEmail(proof.email)
    if (await services.emailCodes.useCode(at.table.name, typed, proof.code, settings.maxAttempts)) email = typed
  }
  if (email === undefined) throw errors.otpInvalid()
  const identity: ExternalIdentity = { provider: 'email', subject: email, email, emailVerified: true, raw: {} }
  const flow: Flow = { source: 'auth:otp', caller: ANONYMOUS }
  return await services.db.transaction(async (trx) => {
    const row = await userByEmail(services, trx, at, identity, flow) ?? (settings.signUp ? await createUser(services, trx, at, identity, flow) : undefined)
    // Mailed only to an account or where sign-up is on: here the account went away meanwhile, or the setting changed.
    if (row === undefined) throw errors.otpInvalid()
    return await openSession(services, at, row, trx)
  })
}
