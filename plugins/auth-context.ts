// Sets request.fastbaseAuth on every request to fastbase's routes: who the caller is, as rules see it.
// Named so that no host's own `request.auth` clashes with it; its routes read it through `callerOf`.
// Sources, first hit wins: `Authorization: Bearer <t>` or the legacy raw `Authorization: <t>`, the same
// in `X-Authorization` (teenybase clients send it where a proxy takes `Authorization`), the auth cookie.
// A present but invalid, expired or revoked token is a 401, never anonymity (decision D12).
// The cookie authenticates an unsafe method only from the app's own or an allowed origin
// (lib/auth/sessions/request-origin.ts), checked here, before any route reads a body or an upload part.
import fp from 'fastify-plugin'
import { parseCookie } from 'cookie'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { unverifiedClaims } from '../lib/auth/tokens/token-claims.js'
import { ANONYMOUS, adminContext, type AdminRole, type AuthContext } from '../lib/auth-context.js'
import { errors } from '../lib/errors.js'
import { thrownError } from '../lib/thrown.js'
import { userContext } from '../lib/auth/sessions/user-context.js'
import type { AuthTable } from '../lib/auth/types.js'
import type { KernelServices } from '../lib/kernel/index.js'
import type {} from './types.js'

import { matchesDigest, secretDigest } from '../lib/auth/secret-compare.js'
import { cookieRequestAllowed, originPolicy } from '../lib/auth/sessions/request-origin.js'
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/

export { secretEquals } from '../lib/auth/secret-compare.js'

// In this order: `Authorization` wins when both are sent.
const AUTHORIZATION_HEADERS = ['authorization', 'x-authorization'] as const
const ADMIN_ROLES = new Set<AdminRole>(['superadmin', 'editor', 'viewer'])
// Verified tokens remembered per instance (about 1 KiB each); the oldest is forgotten first.
const VERIFIED_TOKENS = 4096

interface Claims { table?: AuthTable, payload: Record<string, unknown>, until: number }

/**
 * The caller a request's credentials prove: anonymous without any; an invalid one is an error (401,
 * or 403 cross-origin). Built once per instance (app.ts), before `app.fastbase` is sealed: the hook
 * below and the host's `authenticate` share it and its cache of verified tokens.
 */
export function callerResolver (services: Pick<KernelServices, 'options' | 'config' | 'auth' | 'executor'>): (request: FastifyRequest) => AuthContext | Promise<AuthContext> {
  const { options, config, auth, executor } = services
  const serviceToken = options.adminServiceToken
  const serviceDigest = serviceToken === undefined ? undefined : secretDigest(serviceToken)
  // A token shaped like a JWT is compared with the service token only if that one is JWT-shaped too.
  const serviceLooksLikeJwt = serviceToken !== undefined && JWT_SHAPE.test(serviceToken)
  const cookieName = auth.cookie?.name
  const origins = originPolicy(config.appUrl, options.origins)
  const requireAdminMfa = config.admin?.requireMfa === true

  function headerToken (request: FastifyRequest): string | undefined {
    for (const name of AUTHORIZATION_HEADERS) {
      const header = request.headers[name]
      const value = typeof header === 'string' ? header.trim() : ''
      if (value !== '') return /^Bearer\s+(.+)$/i.exec(value)?.[1].trim() ?? value
    }
    return undefined
  }

  function cookieToken (request: FastifyRequest): string | undefined {
    const cookie = cookieName === undefined || request.headers.cookie === undefined ? undefined : parseCookie(request.headers.cookie)[cookieName]
    return cookie === undefined || cookie === '' ? undefined : cookie
  }

  /** Whether the browser says this cookie-authenticated request comes from a page that may send it. */
  function fromAllowedPage (request: FastifyRequest): boolean {
    const { origin, 'sec-fetch-site': fetchSite } = request.headers
    return cookieRequestAllowed(origins, request.method, origin, typeof fetchSite === 'string' ? fetchSite : undefined)
  }

  // Tokens whose signature and expiry were checked, until they expire: a signature check gives the
  // same answer every time. What can change (logout, revocation) is the session, checked per request.
  const verifiedTokens = new Map<string, Claims>()

  /** The token's verified claims and the table whose key verified them (none: an admin token). */
  function claimsOf (request: FastifyRequest, token: string): Claims {
    const allowExpired = request.routeOptions.config?.allowExpiredToken === true
    const known = allowExpired ? undefined : verifiedTokens.get(token)
    if (known !== undefined && known.until > Date.now()) return known
    const { tables, adminKeys } = auth
    // Only to pick the key (the table named by `cid`, else the admin role named by `aud`); the token
    // is verified with that key below.
    const unverified = unverifiedClaims(token)
    if (unverified === null) throw errors.invalidToken()
    const { cid, aud } = unverified
    const table = cid === undefined ? undefined : typeof cid === 'string' ? tables.get(cid) : undefined
    if (cid !== undefined && table === undefined) throw errors.invalidToken()
    // A role whose secret was removed has no key: its tokens are refused.
    const key = table?.key ?? (typeof aud === 'string' ? adminKeys.get(aud as AdminRole) : undefined)
    if (key === undefined) throw errors.invalidToken()
    const payload = verify(() => key.verify(token, { allowExpired }))
    const claims = { table, payload, until: typeof payload.exp === 'number' ? payload.exp * 1000 : 0 }
    if (!allowExpired && claims.until > Date.now()) {
      const oldest = verifiedTokens.size >= VERIFIED_TOKENS ? verifiedTokens.keys().next() : undefined
      if (oldest?.done === false) verifiedTokens.delete(oldest.value)
      verifiedTokens.set(token, claims)
    }
    return claims
  }

  /**
   * Under `admin.requireMfa` an admin credential without a second factor (the raw service token, an
   * admin token from a sign-in that proved none) reaches only the admin MFA routes (decision D118):
   * otherwise whoever holds the service token would not need the factor at all.
   */
  function admitted (request: FastifyRequest, context: AuthContext): AuthContext {
    if (requireAdminMfa && context.aal < 2 && request.routeOptions.config?.adminMfa !== true) throw errors.mfaRequired('Admin sign-in needs a second factor here (admin.requireMfa): sign in at /admin/login and complete /admin/mfa/verify')
    return context
  }

  async function resolve (request: FastifyRequest, token: string): Promise<AuthContext> {
    if (serviceDigest !== undefined && (serviceLooksLikeJwt || !JWT_SHAPE.test(token)) && matchesDigest(token, serviceDigest)) return admitted(request, adminContext('superadmin'))
    const { table: authTable, payload } = claimsOf(request, token)
    if (authTable === undefined) {
      const role = payload.aud as AdminRole
      if (payload.admin !== true || !ADMIN_ROLES.has(role)) throw errors.invalidToken()
      // The level is the token's own claim: signed with the role's key, and issued at 2 only by /admin/mfa/verify.
      return admitted(request, { ...adminContext(role, typeof payload.id === 'string' ? payload.id : role, payload.aal === 2 ? 2 : 1), jwt: payload })
    }
    const context = await userContext(executor, authTable, payload)
    if (context === undefined) throw errors.invalidToken()
    return context
  }

  /** The caller a request's credentials prove: anonymous without any; an invalid one is an error (401, or 403 cross-origin). */
  return function callerFrom (request: FastifyRequest): AuthContext | Promise<AuthContext> {
    const header = headerToken(request)
    const token = header ?? cookieToken(request)
    // No credential: anonymous, at the cost of two header reads. Fastify builds a new object for
    // every read of `routeOptions`, so the route's config is read only for a request that has one
    // (decision D110).
    if (token === undefined || request.routeOptions.config?.externalCredential === true) return ANONYMOUS
    if (header === undefined && !fromAllowedPage(request)) throw errors.crossOrigin(request.method)
    return resolve(request, token)
  }
}

/**
 * The onRequest hook that sets `request.fastbaseAuth`. Not async: most requests carry no token and
 * need no promise. A refusal (401, cross-origin 403) is answered here, before any body or upload is read.
 */
export function identifyCaller (callerFrom: (request: FastifyRequest) => AuthContext | Promise<AuthContext>): onRequestHookHandler {
  return (request, _reply, done) => {
    request.fastbaseAuth = ANONYMOUS
    let caller: AuthContext | Promise<AuthContext>
    try {
      caller = callerFrom(request)
    } catch (error) {
      return done(thrownError(error))
    }
    if (!(caller instanceof Promise)) return done()
    caller.then((auth) => { request.fastbaseAuth = auth; done() }, (error: unknown) => { done(thrownError(error)) })
  }
}

// Registered in the API prefix's scope after CORS (app.ts), so the hook runs after CORS's own and a
// refusal carries CORS's headers: a page on a listed origin can read that its token was refused, not
// a network error (decisions D121, D134).
async function authContext (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', identifyCaller(app.fastbase.callerFrom))
}

/**
 * The caller of one of fastbase's own routes. The hook above sets it on every one of them before any
 * route code runs; undefined would mean a route outside fastbase's scope, a bug worth a 500.
 */
export function callerOf (request: FastifyRequest): AuthContext {
  const auth = request.fastbaseAuth
  if (auth === undefined) throw new Error('fastbase: this request has no fastbase caller (a route outside fastbase\'s scope?)')
  return auth
}

function verify<T> (run: () => T): T {
  try {
    return run()
  } catch {
    throw errors.invalidToken()
  }
}

export default fp(authContext, { name: 'fastbase-auth-context' })
