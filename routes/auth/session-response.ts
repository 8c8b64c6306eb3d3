// The schemas of what sign-ins answer (`{ token, refresh_token, record, verified? }`, built by
// lib/auth/sessions/session-service.ts), of the MFA challenge answered instead, and of `{ success }`.
import { Type } from '@sinclair/typebox'

export const SessionResponseSchema = Type.Object({
  token: Type.String({ description: 'Access token (JWT)' }),
  refresh_token: Type.String({ description: 'Single-use refresh token' }),
  record: Type.Record(Type.String(), Type.Unknown()),
  verified: Type.Optional(Type.Boolean()),
  aal: Type.Integer({ description: 'Authenticator assurance level: 1 one factor, 2 a second factor (TOTP) too' })
}, { title: 'Session' })

/** A sign-in of a user with a second factor on: no session until `mfa/verify` (decision D115). */
export const MfaChallengeSchema = Type.Object({
  mfa_required: Type.Literal(true),
  challenge: Type.String({ description: 'Single use, for mfa/verify' }),
  expires_in: Type.Integer({ description: 'Seconds the challenge lives' }),
  methods: Type.Array(Type.String(), { description: 'totp, recovery_code' })
}, { title: 'MFA challenge' })

/** What a sign-in answers: a session, or the challenge of the second factor. */
export const SignInResponseSchema = Type.Union([SessionResponseSchema, MfaChallengeSchema])

export const SuccessSchema = Type.Object({ success: Type.Boolean() }, { title: 'Success' })
