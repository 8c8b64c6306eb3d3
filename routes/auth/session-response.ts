// The schemas of what sign-ins answer (`{ token, refresh_token, record, verified? }`, built by
// lib/auth/session-service.ts) and of `{ success }`.
import { Type } from '@sinclair/typebox'

export const SessionResponseSchema = Type.Object({
  token: Type.String({ description: 'Access token (JWT)' }),
  refresh_token: Type.String({ description: 'Single-use refresh token' }),
  record: Type.Record(Type.String(), Type.Unknown()),
  verified: Type.Optional(Type.Boolean())
}, { title: 'Session' })

export const SuccessSchema = Type.Object({ success: Type.Boolean() }, { title: 'Success' })
