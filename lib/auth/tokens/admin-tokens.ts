// The panel's admin sign-in (decision D15): the service token is superadmin, the configured editor /
// viewer passwords are editor / viewer; each gets a short-lived admin token, signed with its role's key.
import type { AdminRole } from '../../auth-context.js'
import { errors } from '../../errors.js'
import { newUid } from '../../uid.js'
import { secretEquals } from '../secret-compare.js'
import { sha256 } from '../stores/sessions.js'
import type { TokenKey } from '../types.js'

export const ADMIN_TOKEN_DURATION = 3 * 3600

export interface AdminSecrets { superadmin?: string, editor?: string, viewer?: string }

export interface AdminToken { token: string, role: AdminRole, expiresIn: number }

/** The roles that have a secret, in sign-in order; an empty secret is none. */
export function configuredAdminSecrets (secrets: AdminSecrets): Array<[AdminRole, string]> {
  const candidates: Array<[AdminRole, string | undefined]> = [['superadmin', secrets.superadmin], ['editor', secrets.editor], ['viewer', secrets.viewer]]
  return candidates.filter((c): c is [AdminRole, string] => c[1] !== undefined && c[1] !== '')
}

/**
 * What a role's signing key is derived from besides the deployment's admin secret: a digest of the
 * role's current secret. A changed or removed secret changes or drops the key, so the tokens it
 * issued stop verifying at once, on every instance configured with the new secret, without a
 * lookup per request. The digest, not the secret, goes into the key, and no token carries either.
 */
export function adminRoleKeyMaterial (role: AdminRole, secret: string): string {
  return sha256(`fastbase-admin-role:${role}:${secret}`)
}

/**
 * Why a sign-in failed. A missing service token is said (a new deployment's usual mistake, and the
 * panel shows it): it tells a caller nothing about the secrets that are set.
 */
function refusal (roles: AdminRole[]): string {
  const set = 'set ADMIN_SERVICE_TOKEN in the server\'s environment'
  if (roles.length === 0) return `No service token is configured on this server (and no admin password): ${set}`
  return roles.includes('superadmin') ? 'Invalid credentials' : `Invalid credentials (no service token is configured on this server: ${set} to sign in with one)`
}

/** The role whose secret `password` is; 401 when it is none of the configured secrets. */
export function adminRoleOf (secrets: AdminSecrets, password: string): AdminRole {
  // Every candidate is compared (constant time each), so the answer's timing does not say which matched.
  const configured = configuredAdminSecrets(secrets)
  const matches = configured.filter(([, secret]) => secretEquals(password, secret))
  const role = matches[0]?.[0]
  if (role === undefined) throw errors.unauthorized(refusal(configured.map(([r]) => r)))
  return role
}

/** A token for `role` at assurance level `aal` (2 once its second factor was proven: decision D118). */
export function adminToken (role: AdminRole, keys: ReadonlyMap<AdminRole, TokenKey>, issuer: string, appHost: string, aal: number): AdminToken {
  const key = keys.get(role)
  if (key === undefined) throw errors.unauthorized()
  const token = key.sign({ sub: `${role}@${appHost}`, id: newUid(), aud: role, admin: true, verified: true, meta: {}, aal, iss: issuer }, ADMIN_TOKEN_DURATION)
  return { token, role, expiresIn: ADMIN_TOKEN_DURATION }
}

/** An admin token for whoever `password` is; 401 when it is none of the configured secrets. */
export function adminSignIn (secrets: AdminSecrets, password: string, keys: ReadonlyMap<AdminRole, TokenKey>, issuer: string, appHost: string): AdminToken {
  return adminToken(adminRoleOf(secrets, password), keys, issuer, appHost, 1)
}
