// The OAuth redirect flow of one auth table: `GET oauth/{provider}` (to the provider) and
// `GET oauth/{provider}/callback` (back from it). The flow itself is lib/auth/oauth/oauth-flow.ts; these
// routes compute the callback URL, keep the state cookie and turn results into redirects.
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthTable } from '../../lib/auth/types.js'
import { errorResponses } from '../../schemas/http/table-routes.js'
import { OAuthCallbackError, finishFlow, startFlow, type FlowContext } from '../../lib/auth/oauth/oauth-flow.js'
import { STATE_LIFETIME, stateKey } from '../../lib/auth/oauth/oauth-state.js'
import { MAX_REDIRECT_LENGTH, redirectPolicy } from '../../lib/auth/oauth/redirects.js'
import { SignInResponseSchema } from './session-response.js'
import { isChallenge } from '../../lib/auth/sessions/session-service.js'
import { setAuthCookie, type RouteKit } from './kit.js'
import type { TypeBoxApp } from '../typebox.js'

/** The cookie holding the browser's nonce between the start and the callback. */
const STATE_COOKIE = 'fastbase_oauth_state'

/**
 * How the state cookie is kept, from appUrl (the origin the flow runs on, whatever Host a request
 * names). Under https it is a `__Host-` cookie: browsers accept one only Secure, for `/` and without
 * a Domain, so a page on a sibling subdomain cannot plant it (a planted state cookie would finish the
 * attacker's sign-in in the victim's browser). Plain http (local development) cannot carry the
 * prefix: the cookie is scoped to the callback's path, and a page on another port of the same host
 * could still plant it (docs/oauth.md, State).
 */
function stateCookieOf (publicUrl: URL): { name: string, options: (callbackPath: string) => { path: string, httpOnly: true, sameSite: 'lax', secure: boolean } } {
  const secure = publicUrl.protocol === 'https:'
  return {
    name: secure ? `__Host-${STATE_COOKIE}` : STATE_COOKIE,
    options: (callbackPath) => ({ path: secure ? '/' : callbackPath, httpOnly: true, sameSite: 'lax', secure })
  }
}

const RedirectSchema = Type.Null({ description: 'Redirect (Location header)' })

export function oauthRoutes (app: TypeBoxApp, at: AuthTable, kit: RouteKit): void {
  const { base, tags, limited, doc } = kit
  const { config } = app.fastbase
  const providers = app.fastbase.auth.oauthProviders()
  if (providers.names().length === 0) return
  const ctx: FlowContext = {
    at,
    services: app.fastbase.auth,
    providers,
    key: stateKey(`${config.jwtSecret}${at.ext.jwtSecret}`),
    policy: redirectPolicy(config.appUrl, config.allowedRedirectUrls)
  }
  const names = providers.names()
  // Validated at start-up (oauthConfigProblems): the redirect flow needs appUrl to be an absolute http(s) URL.
  const publicUrl = new URL(config.appUrl)
  const stateCookie = stateCookieOf(publicUrl)
  const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 64, description: `Configured provider: ${names.join(', ')}` }) })
  // A stale auth cookie must not stand in the way of signing in again: these routes read no token.
  const routeConfig = { ...limited(), externalCredential: true }

  /** The callback route's path for `provider`. */
  const callbackPath = (request: FastifyRequest, provider: string): string =>
    `${request.routeOptions.url!.replace(/\/callback$/, '').replace(':provider', encodeURIComponent(provider))}/callback`

  app.get(`${base}/oauth/:provider`, {
    config: routeConfig,
    schema: {
      tags,
      summary: 'Start signing in with an OAuth provider (redirects to it)',
      ...doc.oauth(),
      description: `Redirects (302) to the provider's authorization page with a signed state and a PKCE challenge, and sets the state cookie (${stateCookie.name}). ` +
        '`redirect` (after sign-in) must be under appUrl or an allowedRedirectUrls entry; without it the provider\'s redirectUrl, else appUrl. ' +
        `Register \`<appUrl's origin>/api/v1${base}/oauth/<provider>/callback\` at the provider: the redirect_uri is built from appUrl, never from the request's Host, ` +
        'so the flow must be served on appUrl\'s origin.',
      params: ProviderParams,
      querystring: Type.Object({ redirect: Type.Optional(Type.String({ maxLength: MAX_REDIRECT_LENGTH, description: 'Where to go after signing in' })) }),
      response: { 302: RedirectSchema, ...errorResponses }
    }
  }, async (request, reply) => {
    const { provider } = request.params
    const { redirect } = request.query
    const path = callbackPath(request, provider)
    // The public origin from the config: a Host header is the client's to choose (a forged one would
    // send the provider's code to whatever origin it names).
    const started = await startFlow(ctx, provider, { redirect, callback: `${publicUrl.origin}${path}` })
    void reply.setCookie(stateCookie.name, started.nonce, { ...stateCookie.options(path), maxAge: STATE_LIFETIME })
    return await noStore(reply).redirect(started.location, 302)
  })

  app.get(`${base}/oauth/:provider/callback`, {
    config: routeConfig,
    schema: {
      tags,
      summary: 'Finish signing in with an OAuth provider (the provider redirects here)',
      ...doc.oauthCallback(),
      description: 'Checks the state and the state cookie, exchanges the code, reads the user and signs them in. With authCookie configured: sets it and redirects (302) ' +
        'to the flow\'s redirect; a refusal after the state was verified redirects there too, with `error` and `error_description` query parameters. ' +
        'Without authCookie: answers the session as JSON. A missing, tampered, expired or used state is a 400, a state cookie that is missing or from another sign-in a 403.',
      params: ProviderParams,
      querystring: Type.Object({
        code: Type.Optional(Type.String({ maxLength: 4096 })),
        state: Type.Optional(Type.String({ maxLength: 8192 })),
        error: Type.Optional(Type.String({ maxLength: 256 })),
        error_description: Type.Optional(Type.String({ maxLength: 2048 })),
        iss: Type.Optional(Type.String({ maxLength: 2048 }))
      }),
      response: { 200: SignInResponseSchema, 302: RedirectSchema, ...errorResponses }
    }
  }, async (request, reply) => {
    const { provider } = request.params
    const path = callbackPath(request, provider)
    const nonce = request.headers.cookie === undefined ? undefined : app.parseCookie(request.headers.cookie)[stateCookie.name]
    noStore(reply)
    // Cleared once the state proved to be this browser's: a forged callback (someone else's state, or
    // none) does not end the sign-in this browser has under way.
    const clearState = () => reply.clearCookie(stateCookie.name, stateCookie.options(path))
    try {
      const { session, redirect } = await finishFlow(ctx, provider, request.query, nonce)
      clearState()
      if (config.authCookie === undefined) return session
      if (isChallenge(session)) {
        // A second factor is due: no cookie yet; the app's page finishes with mfa/verify (decision D115).
        const target = new URL(redirect, publicUrl)
        target.searchParams.set('mfa_challenge', session.challenge)
        return await reply.redirect(target.href, 302)
      }
      setAuthCookie(app, reply, session.token, at.tokenDuration)
      return await reply.redirect(redirect, 302)
    } catch (err) {
      if (!(err instanceof OAuthCallbackError)) throw err
      clearState()
      if (config.authCookie === undefined) throw err.error
      const target = new URL(err.redirect)
      target.searchParams.set('error', err.code)
      target.searchParams.set('error_description', err.error.message)
      return await reply.redirect(target.href, 302)
    }
  })
}

/** Nothing here is cached, and the callback's address (code, state) is not passed on as a Referer. */
function noStore (reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
}
