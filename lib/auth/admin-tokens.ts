// The panel's admin sign-in (DECISIONS 15): the service token is superadmin, the configured editor /
// viewer passwords are editor / viewer; each gets a short-lived admin token.
import type { AdminRole } from '../auth-context.js'
import { errors } from '../errors.js'
import { newUid } from '../uid.js'
import { secretEquals } from './secret-compare.js'
import type { TokenKey } from './types.js'

export const ADMIN_TOKEN_DURATION = 3 * 3600

export interface AdminSecrets { superadmin?: string, editor?: string, viewer?: string }

export interface AdminToken { token: string, role: AdminRole, expiresIn: number }

/** An admin token for whoever `password` is; 401 when it is none of the configured secrets. */
export function adminSignIn (secrets: AdminSecrets, password: string, key: TokenKey, issuer: string, appHost: string): AdminToken {
  const candidates: Array<[AdminRole, string | undefined]> = [['superadmin', secrets.superadmin], ['editor', secrets.editor], ['viewer', secrets.viewer]]
  // Every candidate is compared (constant time each), so the answer's timing does not say which matched.
  const matches = candidates.filter(([, secret]) => secret !== undefined && secret !== '').filter(([, secret]) => secretEquals(password, secret!))
  const role = matches[0]?.[0]
  if (role === undefined) throw errors.unauthorized('Invalid credentials')
  const token = key.sign({ sub: `${role}@${appHost}`, id: newUid(), aud: role, admin: true, verified: true, meta: {}, iss: issuer }, ADMIN_TOKEN_DURATION)
  return { token, role, expiresIn: ADMIN_TOKEN_DURATION }
}
