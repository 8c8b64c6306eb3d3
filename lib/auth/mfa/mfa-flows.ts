// The TOTP second factor's flows (decision D115), the same for a table's users and the panel's
// admin roles (a Principal each): enrol, confirm (on, with recovery codes), disable, and completing a
// sign-in's challenge with a code or a recovery code.
import { errors } from '../../errors.js'
import type { MfaStore, Principal } from './mfa-store.js'
import { otpauthUri } from './totp.js'

export interface TotpEnrollment { secret: string, uri: string }

/** A new secret for `p` (not on until confirmed); 400 when TOTP is on already (disable it first). */
export async function enrollTotp (mfa: MfaStore, p: Principal, issuer: string, account: string): Promise<TotpEnrollment> {
  const secret = await mfa.enroll(p)
  if (secret === undefined) throw errors.badRequest('TOTP is already on; turn it off first to enrol a new secret')
  return { secret, uri: otpauthUri(secret, issuer, account) }
}

/** Turns TOTP on with a current code of the pending secret; answers the recovery codes, shown this once. */
export async function confirmTotp (mfa: MfaStore, p: Principal, code: string): Promise<{ recovery_codes: string[] }> {
  const codes = await mfa.confirm(p, code)
  if (codes === undefined) throw errors.mfaInvalid('Invalid code, or no TOTP enrolment pending')
  return { recovery_codes: codes }
}

export type SecondFactor = { code: string } | { recoveryCode: string }

/** Whether `proof` is a factor of `p` now; a right one is used up (a TOTP step, a recovery code). */
export async function useFactor (mfa: MfaStore, p: Principal, proof: SecondFactor): Promise<boolean> {
  return 'code' in proof ? await mfa.useCode(p, proof.code) : await mfa.useRecoveryCode(p, proof.recoveryCode)
}

/** What a refusal says when the challenge cannot be tried again (the panel and clients start over). */
const SPENT = 'Invalid or expired challenge'

/**
 * Whose sign-in a challenge of `table` was, once `proof` is their factor: each call spends one of
 * the challenge's attempts first, and only the request that ends the challenge gets the principal.
 * One code for every refusal (a wrong code, another account's challenge, a used one); the message
 * says whether the challenge can still be tried: a wrong code on its last attempt says it is spent,
 * so a client starts the sign-in again now rather than after one more refusal.
 */
export async function completeChallenge (mfa: MfaStore, table: string, challenge: string, proof: SecondFactor): Promise<Principal> {
  const attempt = await mfa.attempt(table, challenge)
  if (attempt === undefined) throw errors.mfaInvalid(SPENT)
  if (!await useFactor(mfa, attempt.principal, proof)) throw attempt.last ? errors.mfaInvalid(SPENT) : errors.mfaInvalid()
  if (!await mfa.finish(challenge)) throw errors.mfaInvalid(SPENT)
  return attempt.principal
}
