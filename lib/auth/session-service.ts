// Opening a session for a user row and the body every sign-in answers with: password login,
// sign-up, refresh, the confirm endpoints and the external-identity flows all come here.
import type { Knex } from 'knex'
import { claimsFor, isVerified, publicRecord } from './accounts.js'
import type { AuthTable, Row, SessionServices } from './types.js'

export interface SessionResponse { token: string, refresh_token: string, record: Row, verified?: boolean }

/** Opens a session for a user row (all columns) and answers with its tokens. */
export async function openSession (services: SessionServices, at: AuthTable, row: Row, db?: Knex | Knex.Transaction): Promise<SessionResponse> {
  const record = publicRecord(services.dialect, at, row)
  const { sid, refreshToken } = await services.sessions.create(at.table.name, String(record[at.fields.uid.name]), db)
  services.hooks?.signedIn(at.table.name, record, db ?? services.db)
  return sessionBody(services, at, record, sid, refreshToken)
}

/** The answer for an existing session (refresh): a new access token beside the given refresh token. */
export function sessionBody (services: Pick<SessionServices, 'issuer'>, at: AuthTable, record: Row, sid: string, refreshToken: string): SessionResponse {
  const body: SessionResponse = { token: at.key.sign(claimsFor(at, record, sid, services.issuer), at.tokenDuration), refresh_token: refreshToken, record }
  if (at.fields.verified !== undefined) body.verified = isVerified(at, record)
  return body
}
