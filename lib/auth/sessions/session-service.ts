// Opening a session for a user row and the body every sign-in answers with: password login,
// sign-up, refresh, the confirm endpoints, email codes and the external-identity flows all come here.
// A user with a second factor on gets a challenge instead (decision D115): whatever proved the first
// factor, no session exists until mfa/verify proves the second.
import type { Knex } from 'knex'
import { claimsFor, isVerified, publicRecord } from './accounts.js'
import { CHALLENGE_LIFETIME, type Principal } from '../mfa/mfa-store.js'
import type { AuthTable, Row, SessionServices } from '../types.js'

export interface SessionResponse { token: string, refresh_token: string, record: Row, verified?: boolean, aal: number }

/** A sign-in that needs its second factor: `mfa/verify` with the challenge and a code completes it. */
export interface MfaChallengeResponse { mfa_required: true, challenge: string, expires_in: number, methods: string[] }

/** What a sign-in answers: a session, or a challenge for the second factor. */
export type SignInResponse = SessionResponse | MfaChallengeResponse

export const isChallenge = (answer: SignInResponse): answer is MfaChallengeResponse => 'mfa_required' in answer

/** The challenge `p` must answer with a second factor. */
export async function mfaChallenge (services: Pick<SessionServices, 'mfa'>, p: Principal, db?: Knex | Knex.Transaction): Promise<MfaChallengeResponse> {
  return { mfa_required: true, challenge: await services.mfa.challenge(p, db), expires_in: CHALLENGE_LIFETIME, methods: ['totp', 'recovery_code'] }
}

/** Signs a user row (all columns) in: a session, or a challenge when they have a second factor on. */
export async function openSession (services: SessionServices, at: AuthTable, row: Row, db?: Knex | Knex.Transaction): Promise<SignInResponse> {
  const principal = { table: at.table.name, userId: String(row[at.fields.uid.name]) }
  if (await services.mfa.enabled(principal, db)) return await mfaChallenge(services, principal, db)
  return await startSession(services, at, row, 1, db)
}

/** Opens a session at level `aal` for a user row (all columns) and answers with its tokens. Only openSession and mfa/verify call it. */
export async function startSession (services: SessionServices, at: AuthTable, row: Row, aal: number, db?: Knex | Knex.Transaction): Promise<SessionResponse> {
  const record = publicRecord(services.dialect, at, row)
  const { sid, refreshToken } = await services.sessions.create(at.table.name, String(record[at.fields.uid.name]), db, aal)
  services.executor.hooks?.signedIn(at.table.name, record, db ?? services.db)
  return sessionBody(services, at, record, sid, refreshToken, aal)
}

/** The answer for an existing session (refresh): a new access token beside the given refresh token. */
export function sessionBody (services: Pick<SessionServices, 'issuer'>, at: AuthTable, record: Row, sid: string, refreshToken: string, aal: number): SessionResponse {
  const body: SessionResponse = { token: at.key.sign(claimsFor(at, record, sid, services.issuer), at.tokenDuration), refresh_token: refreshToken, record, aal }
  if (at.fields.verified !== undefined) body.verified = isVerified(at, record)
  return body
}
