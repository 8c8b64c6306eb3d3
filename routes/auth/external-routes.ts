// Signing in with a token another party issued, for one auth table: `<provider>-login` (one-tap: an
// ID token posted as a form with Google's double-submit CSRF cookie, or as JSON `{ token }`) and
// `login-token` (an external JWT in `Authorization: Bearer`). Which tokens are trusted, and how they
// are verified, is lib/auth/oauth/id-tokens.ts; who they sign in is lib/auth/oauth/external-users.ts.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { AuthTable } from '../../lib/auth/types.js'
import { secretEquals } from '../../lib/auth/secret-compare.js'
import { urlencodedBodies } from '../../plugins/request-parsing.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { errors } from '../../lib/errors.js'
import { MAX_TOKEN_LENGTH, type IdTokenVerifier } from '../../lib/auth/oauth/id-tokens.js'
import { signInExternal, type ExternalIdentity } from '../../lib/auth/oauth/external-users.js'
import { originVerdict, originsOf } from '../../lib/auth/sessions/request-origin.js'
import { SignInResponseSchema } from './session-response.js'
import { isChallenge } from '../../lib/auth/sessions/session-service.js'
import { setAuthCookie, type RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'

const FORM = 'application/x-www-form-urlencoded'
/** The cookie Google Identity Services sets beside the form it posts. */
const CSRF_COOKIE = 'g_csrf_token'
/** A provider name is a path segment: `<name>-login`. */
const ROUTE_NAME = /^[A-Za-z0-9_-]{1,64}$/

const OneTapBody = Type.Object({
  credential: Type.Optional(Type.String({ maxLength: MAX_TOKEN_LENGTH, description: 'The ID token (form post from Google Identity Services)' })),
  g_csrf_token: Type.Optional(Type.String({ maxLength: 1024, description: `Must equal the ${CSRF_COOKIE} cookie (form posts)` })),
  token: Type.Optional(Type.String({ maxLength: MAX_TOKEN_LENGTH, description: 'The ID token (JSON body; no CSRF cookie needed)' }))
}, { title: 'One-tap credential' })

export async function externalRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): Promise<void> {
  const { base, tags, limited, doc } = kit
  const verifier = await app.fastbase.auth.idTokens()
  const services = app.fastbase.auth

  app.post(`${base}/login-token`, {
    // The bearer token is the external JWT, read here: the auth hook must not take it for a fastbase token.
    config: { ...limited(), externalCredential: true },
    schema: {
      tags,
      summary: 'Exchange an external JWT (Authorization: Bearer) from a trusted issuer for a session',
      ...doc.loginToken(),
      description: 'The issuer must be configured in authProviders with a secret (HS256) or a jwksUrl; exp is required, aud must name the clientId when one is configured.',
      security: [{ bearerAuth: [] }],
      response: { 200: SignInResponseSchema, ...errorResponses }
    }
  }, async (request) => {
    const token = bearerOf(request)
    if (token === undefined) throw errors.unauthorized('Authorization header required')
    return await signInExternal(services, at, vouchedFor(await verifier.verifyExternalToken(token)), 'auth:login-token')
  })

  const names = verifier.oneTapNames().filter((name) => {
    if (ROUTE_NAME.test(name)) return true
    app.log.warn(`authProviders: "${name.slice(0, 64)}" gets no one-tap route (a name in it is letters, digits, _ and - only)`)
    return false
  })
  if (names.length === 0) return
  // Forms are parsed in this scope only: the other auth routes stay JSON.
  await app.register(async (scope) => {
    urlencodedBodies(scope)
    for (const name of names) oneTapRoute(scope, at, kit, verifier, name)
  })
}

function oneTapRoute (app: TypeBoxApp, at: AuthTable, kit: RouteKit, verifier: IdTokenVerifier, name: string): void {
  const { base, tags, limited, doc } = kit
  const { appUrl, allowedRedirectUrls } = app.fastbase.config
  // The app's pages (appUrl, the allowed origins, the places sign-ins may return to) and the provider's own (redirect mode).
  const trusted = originsOf([appUrl, ...app.fastbase.options.origins, ...allowedRedirectUrls ?? [], ...verifier.oneTapIssuers(name)])
  app.post(`${base}/${name}-login`, {
    // A stale auth cookie must not stand in the way of signing in again.
    config: { ...limited(), externalCredential: true },
    schema: {
      tags,
      summary: `Sign in with a ${name} ID token (one-tap)`,
      ...doc.oneTap(name),
      description: `A form post (credential, g_csrf_token equal to the ${CSRF_COOKIE} cookie) as Google Identity Services sends it, or JSON { token }. Sets the auth cookie when authCookie is configured. ` +
        'A browser\'s post must come from appUrl\'s origin, an allowedRedirectUrls origin or the provider\'s (Origin, else Sec-Fetch-Site: same-origin); a form post that states neither is refused too.',
      consumes: [FORM, 'application/json'],
      body: OneTapBody,
      response: { 200: SignInResponseSchema, ...errorResponses }
    }
  }, async (request, reply) => {
    const body: Static<typeof OneTapBody> = request.body ?? {}
    // A sibling page (another port or subdomain of the site) can plant the g_csrf_token cookie and post
    // the attacker's credential: only where the browser says the post came from tells it apart.
    const from = originVerdict(request.headers, trusted)
    const form = isForm(request)
    if (from === 'foreign' || (form && from === 'unstated')) throw errors.forbidden('This sign-in must be posted from the app\'s own pages')
    let token: string
    if (form) {
      if (typeof body.credential !== 'string' || body.credential === '') throw errors.badRequest('credential is required')
      if (typeof body.g_csrf_token !== 'string' || body.g_csrf_token === '') throw errors.badRequest('g_csrf_token is required')
      // Double submit, as Google asks: a cross-site page cannot set or read this cookie (a same-site
      // one can, which the origin check above covers).
      const cookie = request.headers.cookie === undefined ? undefined : app.parseCookie(request.headers.cookie)[CSRF_COOKIE]
      if (cookie === undefined || cookie === '' || !secretEquals(cookie, body.g_csrf_token)) throw errors.forbidden('CSRF token mismatch')
      token = body.credential
    } else {
      // JSON cannot be posted cross-site without the page's consent (CORS), so no CSRF cookie is needed.
      if (typeof body.token !== 'string' || body.token === '') throw errors.badRequest('token is required')
      token = body.token
    }
    const session = await signInExternal(app.fastbase.auth, at, vouchedFor(await verifier.verifyIdToken(name, token)), 'auth:one-tap')
    // A challenge sets no cookie: the second factor is still to come (decision D115).
    if (!isChallenge(session)) setAuthCookie(app, reply, session.token, at.tokenDuration)
    return session
  })
}

/**
 * An identity whose email the issuer does not vouch for signs in nobody (teenybase refuses it too).
 * Creating an account under an address nobody proved would let the token's holder keep a link to an
 * account the address's owner later takes over by a password reset.
 */
function vouchedFor (identity: ExternalIdentity): ExternalIdentity {
  if (identity.email !== undefined && !identity.emailVerified) throw errors.badRequest('Email not verified')
  return identity
}

function isForm (request: FastifyRequest): boolean {
  const type = request.headers['content-type']
  return typeof type === 'string' && type.split(';')[0].trim().toLowerCase() === FORM
}

/** The raw bearer token (`Authorization`, else `X-Authorization`); a header without the scheme is the token itself, as everywhere. */
function bearerOf (request: FastifyRequest): string | undefined {
  for (const name of ['authorization', 'x-authorization'] as const) {
    const header = request.headers[name]
    const value = typeof header === 'string' ? header.trim() : ''
    if (value !== '') return /^Bearer\s+(.+)$/i.exec(value)?.[1].trim() ?? value
  }
  return undefined
}
