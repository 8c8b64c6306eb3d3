// The caller as rules see it (`auth.uid`, `auth.role`, `auth.<field>`), independent of how it was proven.

export type AdminRole = 'superadmin' | 'editor' | 'viewer'

export interface AuthContext {
  uid: string | null
  /** Session id (refresh-token family) of a user token. */
  sid: string | null
  /** Auth table the user belongs to. */
  cid: string | null
  /** Only set when verified. */
  email: string | null
  verified: boolean
  role: string | null
  admin: boolean
  superadmin: boolean
  adminRole: AdminRole | null
  /** Claims of the token, for `auth.jwt.<claim>`. */
  jwt: Record<string, unknown>
  meta: Record<string, unknown>
  /** Fields of the user's record that rules may use as `auth.<field>`. */
  record: Record<string, unknown>
  /**
   * Authenticator assurance level (`auth.aal`, decision D116): 0 anonymous, 1 signed in with one
   * factor, 2 with a second factor (TOTP) too. A user's is their session's.
   */
  aal: number
}

export const ANONYMOUS: Readonly<AuthContext> = Object.freeze({
  uid: null, sid: null, cid: null, email: null, verified: false, role: null,
  admin: false, superadmin: false, adminRole: null, jwt: {}, meta: {}, record: {}, aal: 0
})

/** Admins have a uid (as in teenybase), so `auth.uid != null` guards and requireAuth let them through. */
export function adminContext (role: AdminRole, uid: string = role, aal = 1): AuthContext {
  return { ...ANONYMOUS, uid, role, admin: true, superadmin: role === 'superadmin', adminRole: role, verified: true, jwt: {}, meta: {}, record: {}, aal }
}

const authGlobalsCache = new WeakMap<AuthContext, Record<string, unknown>>()

/** The `auth` object expressions read: record fields first, the context's own keys win. Built once per context. */
export function authGlobals (auth: AuthContext): Record<string, unknown> {
  let globals = authGlobalsCache.get(auth)
  if (globals === undefined) {
    // Assigned key by key: object rest/spread is several times slower, and this runs per request.
    const g: Record<string, unknown> = Object.assign({}, auth.record)
    g.uid = auth.uid; g.sid = auth.sid; g.cid = auth.cid; g.email = auth.email; g.verified = auth.verified; g.role = auth.role
    g.admin = auth.admin; g.superadmin = auth.superadmin; g.adminRole = auth.adminRole; g.jwt = auth.jwt; g.meta = auth.meta; g.aal = auth.aal
    globals = g
    authGlobalsCache.set(auth, globals)
  }
  return globals
}
