// What every auth route module shares: the per-table registration kit and the auth cookie. Its own
// file, so route modules never import routes/auth/index.ts (which imports them).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AuthTable } from '../../lib/auth/types.js'
import type { CrudContext } from '../../lib/crud/context.js'
import type { AuthDocument, OtpMfaDocument } from './document.js'

export interface RouteKit {
  base: string
  tags: string[]
  /** Route config with this table's rate limit (none when `rateLimit: false`). */
  limited: () => { rateLimit?: { max: number, timeWindow: number } }
  crudContext: (request: FastifyRequest, at: AuthTable) => CrudContext
  /** What the API document says of this table's auth routes. */
  doc: AuthDocument
  /** ... and of its email-code and second-factor routes. */
  otpDoc: OtpMfaDocument
}

/**
 * Sets the auth cookie (lib/auth/sessions/auth-cookie.ts: `__Host-` under https) to an access token (sign-ins
 * that end in a browser redirect or a one-tap post). Secure, HttpOnly and SameSite=Lax unless the
 * config says otherwise, as in teenybase. Without a configured maxAge the cookie lives as long as the
 * token (`lifetime`, seconds): a cookie holding an expired token would make every request a 401 until
 * it is cleared. Returns false when no auth cookie is configured.
 */
export function setAuthCookie (app: FastifyInstance, reply: FastifyReply, token: string, lifetime: number): boolean {
  const cookie = app.fastbase.auth.cookie
  if (cookie === undefined) return false
  void reply.setCookie(cookie.name, token, { ...cookie.attributes, maxAge: cookie.maxAge ?? lifetime })
  return true
}

/** Clears the auth cookie with the attributes it was set with (a `__Host-` cookie is only replaced by a Secure one). */
export function clearAuthCookie (app: FastifyInstance, reply: FastifyReply): void {
  const cookie = app.fastbase.auth.cookie
  if (cookie !== undefined) void reply.clearCookie(cookie.name, cookie.attributes)
}
