// The bodies the second-factor routes share (a table's and the admins'): a TOTP code or a recovery code.
import { Type } from '@sinclair/typebox'
import { errors } from '../../lib/errors.js'
import type { SecondFactor } from '../../lib/auth/mfa/mfa-flows.js'

export const FactorBody = Type.Object({
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A current TOTP code' })),
  recoveryCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An unused recovery code' }))
})

export const TotpEnrollmentSchema = Type.Object({ secret: Type.String(), uri: Type.String() }, { title: 'TOTP enrolment' })

/** The one factor a body gives; 400 when it gives none or both. */
export function factorOf (body: { code?: string, recoveryCode?: string }): SecondFactor {
  if (body.code !== undefined && body.recoveryCode === undefined) return { code: body.code }
  if (body.recoveryCode !== undefined && body.code === undefined) return { recoveryCode: body.recoveryCode }
  throw errors.badRequest('Send either code or recoveryCode')
}
