// `{ token, refresh_token, record, verified? }`: what sign-up, login, refresh and the confirm endpoints answer.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Knex } from 'knex'
import type { AuthTable } from '../../plugins/auth.js'
import { claimsFor, isVerified, publicRecord } from '../../lib/auth/accounts.js'

type Row = Record<string, unknown>

export const SessionResponseSchema = Type.Object({
  token: Type.String({ description: 'Access token (JWT)' }),
  refresh_token: Type.String({ description: 'Single-use refresh token' }),
  record: Type.Record(Type.String(), Type.Unknown()),
  verified: Type.Optional(Type.Boolean())
}, { title: 'Session' })

export const SuccessSchema = Type.Object({ success: Type.Boolean() }, { title: 'Success' })

export interface SessionResponse { token: string, refresh_token: string, record: Row, verified?: boolean }

function accessToken (app: FastifyInstance, at: AuthTable, record: Row, sid: string): string {
  return at.jwt.sign(claimsFor(at, record, sid, app.fastbase.auth.issuer), { expiresIn: at.tokenDuration, algorithm: app.fastbase.auth.jwtAlgorithm })
}

/** Opens a session for a user row (all columns) and answers with its tokens. */
export async function newSession (app: FastifyInstance, at: AuthTable, row: Row, db?: Knex | Knex.Transaction): Promise<SessionResponse> {
  const record = publicRecord(app.fastbase.dialect, at, row)
  const { sid, refreshToken } = await app.fastbase.auth.sessions.create(at.table.name, String(record[at.fields.uid.name]), db)
  return sessionBody(app, at, record, sid, refreshToken)
}

export function sessionBody (app: FastifyInstance, at: AuthTable, record: Row, sid: string, refreshToken: string): SessionResponse {
  const body: SessionResponse = { token: accessToken(app, at, record, sid), refresh_token: refreshToken, record }
  if (at.fields.verified !== undefined) body.verified = isVerified(at, record)
  return body
}
