// Who may call an admin endpoint: anonymous callers get 401, signed-in callers who are not admins
// 403, and admins who are not superadmins 403 where a superadmin is needed (with the reason).
import type { AuthContext } from '../lib/auth-context.js'
import { errors } from '../lib/errors.js'

/** `superadminReason`: the endpoint needs a superadmin; the 403's message for other admins. */
export function requireAdmin (auth: AuthContext, superadminReason?: string): void {
  if (!auth.admin && auth.uid === null) throw errors.unauthorized()
  if (!auth.admin) throw errors.forbidden('Admins only')
  if (superadminReason !== undefined && !auth.superadmin) throw errors.forbidden(superadminReason)
}
