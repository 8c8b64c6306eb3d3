// The OAuth 2.0 authorization-code flow with PKCE (decisions D18, D34): the start (a signed state, the
// browser's nonce, the provider's authorize URL) and the callback (state, cookie and single use checked;
// the code exchanged; the user read from a verified ID token or the provider's API; signed in through
// signInExternal). Free of Fastify: routes/auth/oauth-routes.ts turns the results into replies.
import type { JWTPayload } from 'jose'
import type { AuthorizationTokenConfig } from 'simple-oauth2'
import { FastbaseError, errors } from '../../errors.js'
import { isObject } from '../../plain.js'
import { signInExternal, type ExternalIdentity } from './external-users.js'
import type { SignInResponse } from '../sessions/session-service.js'
import type { AuthTable, Row, SessionServices } from '../types.js'
import { checkRedirect, type RedirectPolicy } from './redirects.js'
import { idTokenNonce, nonceMatches, pkceVerifier, readState, startState, type OAuthState } from './oauth-state.js'
import { claimState } from './oauth-used-states.js'
import { PROVIDER_TIMEOUT, githubEmailsUrl, fetchJson, providerUnavailable, type ApiProvider, type IdTokenProvider, type OAuthProvider, type OAuthProviders } from './oauth-providers.js'

/** What one auth table's flow needs. */
export interface FlowContext {
  at: AuthTable
  services: SessionServices
  providers: OAuthProviders
  /** This table's state key (lib/auth/oauth/oauth-state.ts `stateKey`). */
  key: Buffer
  policy: RedirectPolicy
  timeoutMs?: number
}

export interface Started {
  /** The provider's authorize URL to redirect the browser to. */
  location: string
  /** The state cookie's value. */
  nonce: string
}

/** Signing algorithms accepted on ID tokens: asymmetric only (a JWKS holds public keys). */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']
const CLOCK_TOLERANCE = 30
const USER_AGENT = 'fastbase'

const { providerNotFound, oauthState: invalidState, oauthFailed: loginFailed } = errors

/** The provider the flow serves under `name`, or a 404. */
export async function providerOf (ctx: FlowContext, name: string): Promise<OAuthProvider> {
  const provider = await ctx.providers.get(name)
  if (provider === undefined) throw providerNotFound(name)
  return provider
}

/**
 * Starts a flow: `redirect` (the caller's `redirect` parameter) is checked here, a refused one is a
 * 400; without it the provider's `redirectUrl`, else `appUrl`. `callback` is the redirect_uri.
 */
export async function startFlow (ctx: FlowContext, providerName: string, options: { redirect?: string, callback: string }): Promise<Started> {
  const provider = await providerOf(ctx, providerName)
  let redirect: string | undefined
  if (options.redirect !== undefined && options.redirect !== '') {
    redirect = checkRedirect(ctx.policy, options.redirect)
    if (redirect === undefined) throw errors.badRequest('Redirect URL not allowed: it must be under appUrl or an allowedRedirectUrls entry')
  } else {
    redirect = (provider.redirectUrl === undefined ? undefined : checkRedirect(ctx.policy, provider.redirectUrl)) ?? ctx.policy.home
  }
  const started = startState(ctx.key, { table: ctx.at.table.name, provider: provider.name, callback: options.callback, redirect })
  const url = new URL(provider.authorizeUrl)
  const params: Record<string, string> = {
    ...provider.authorizeParams,
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: options.callback,
    state: started.state,
    code_challenge: started.codeChallenge,
    code_challenge_method: 'S256'
  }
  if (provider.scopes.length > 0) params.scope = provider.scopes.join(' ')
  if (provider.source === 'id_token') params.nonce = started.idTokenNonce
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return { location: url.href, nonce: started.nonce }
}

/** The callback's query parameters the flow reads (providers add others, ignored). */
export interface CallbackQuery {
  code?: string
  state?: string
  error?: string
  error_description?: string
  iss?: string
}

/**
 * A failure after the state was verified: the browser can be sent back to the flow's own (checked)
 * redirect with the error, rather than left on an API error page.
 */
export class OAuthCallbackError extends Error {
  constructor (readonly error: FastbaseError, readonly redirect: string, readonly code: string) {
    super(error.message)
    this.name = 'OAuthCallbackError'
  }
}

/**
 * Completes a flow. State problems (missing, tampered, expired, used, another table or provider) are
 * 400s and a state cookie that is missing or from another flow a 403, as thrown FastbaseErrors; once
 * the state holds, any refusal is an OAuthCallbackError carrying the flow's redirect.
 */
export async function finishFlow (ctx: FlowContext, providerName: string, query: CallbackQuery, cookieNonce: string | undefined): Promise<{ session: SignInResponse, redirect: string }> {
  const provider = await providerOf(ctx, providerName)
  const { claims, nonce } = await verifiedState(ctx, provider, query.state, cookieNonce)
  try {
    const identity = await identityFrom(ctx, provider, claims, query, nonce)
    // As one-tap and login-token (and teenybase): an account created under an address nobody proved
    // would keep this provider link after the address's owner takes the account over by a reset.
    if (identity.email !== undefined && !identity.emailVerified) throw errors.badRequest('Email not verified')
    return { session: await signInExternal(ctx.services, ctx.at, identity, 'auth:oauth'), redirect: claims.redirect }
  } catch (err) {
    // A refusal (the provider's, the token's, the sign-in's) goes back to the app; a 5xx stays one.
    if (err instanceof FastbaseError && err.statusCode < 500) {
      const code = err.errorCode === 'FB_ERR_OAUTH_PROVIDER' ? String(err.data?.error ?? 'login_failed') : 'login_failed'
      throw new OAuthCallbackError(err, claims.redirect, code)
    }
    throw err
  }
}

/** The state's claims, and the state cookie's nonce that matched them. */
async function verifiedState (ctx: FlowContext, provider: OAuthProvider, state: string | undefined, cookieNonce: string | undefined): Promise<{ claims: OAuthState, nonce: string }> {
  if (state === undefined || state === '') throw invalidState('Missing OAuth state')
  const read = readState(ctx.key, state)
  if ('problem' in read) throw invalidState(read.problem === 'expired' ? 'Expired OAuth state, sign in again' : 'Invalid OAuth state')
  const { claims } = read
  if (claims.table !== ctx.at.table.name || claims.provider !== provider.name) throw invalidState('Invalid OAuth state')
  if (cookieNonce === undefined || !nonceMatches(claims, cookieNonce)) {
    throw errors.oauthState('OAuth state does not belong to this browser (state cookie missing or from another sign-in)', 403)
  }
  // Last: only a state that passed every other check is recorded, so nobody else can use it up.
  if (!await claimState(ctx.services.db, ctx.services.dialect, claims.id, claims.exp)) throw invalidState('OAuth state already used, sign in again')
  return { claims, nonce: cookieNonce }
}

async function identityFrom (ctx: FlowContext, provider: OAuthProvider, claims: OAuthState, query: CallbackQuery, cookieNonce: string): Promise<ExternalIdentity> {
  if (query.error !== undefined && query.error !== '') {
    const code = /^[a-z_]{1,64}$/.test(query.error) ? query.error : 'login_failed'
    const description = typeof query.error_description === 'string' ? ` (${query.error_description.replace(/[^\x20-\x7e]/g, '').slice(0, 200)})` : ''
    throw errors.oauthRefused(`The provider refused the sign-in: ${code}${description}`, code)
  }
  // RFC 9207: an authorization server that names itself in the response must be the one asked.
  if (query.iss !== undefined && provider.issuers.length > 0 && !provider.issuers.includes(query.iss)) throw loginFailed('The response comes from another issuer')
  if (query.code === undefined || query.code === '') throw loginFailed('Missing authorization code')
  const tokens = await exchange(ctx, provider, query.code, claims.callback, pkceVerifier(ctx.key, cookieNonce, claims.id))
  const accessToken = typeof tokens.access_token === 'string' ? tokens.access_token : undefined
  if (provider.source === 'id_token') return await fromIdToken(ctx, provider, claims, tokens, accessToken)
  if (accessToken === undefined) throw loginFailed('The provider sent no access token')
  if (provider.source === 'github') return await fromGitHub(ctx, provider, accessToken)
  if (provider.source === 'discord') return await fromDiscord(ctx, provider, accessToken)
  return fromClaims(provider, await userinfo(ctx, provider.userinfoUrl, accessToken), false)
}

async function exchange (ctx: FlowContext, provider: OAuthProvider, code: string, callback: string, verifier: string): Promise<Row> {
  const tokenUrl = new URL(provider.tokenUrl)
  // Loaded on the first code exchange: simple-oauth2 and its validator are a tenth of a start, and
  // most projects never exchange a code.
  const { AuthorizationCode } = await import('simple-oauth2')
  const client = new AuthorizationCode({
    client: { id: provider.clientId, secret: provider.clientSecret },
    auth: { tokenHost: tokenUrl.origin, tokenPath: `${tokenUrl.pathname}${tokenUrl.search}`, authorizeHost: tokenUrl.origin },
    options: { authorizationMethod: provider.tokenAuth },
    http: { timeout: ctx.timeoutMs ?? PROVIDER_TIMEOUT, maxBytes: 1024 * 1024, redirects: 0, headers: { 'user-agent': USER_AGENT } }
  })
  // simple-oauth2 sends every parameter given; its types do not list PKCE's verifier.
  const params: AuthorizationTokenConfig & { code_verifier: string } = { code, redirect_uri: callback, code_verifier: verifier }
  let token: Row
  try {
    token = (await client.getToken(params)).token
  } catch (err) {
    // simple-oauth2 throws a Boom error: `output.statusCode`, and `data` when the endpoint answered.
    const output = isObject(err) && isObject(err.output) ? err.output : undefined
    const data = isObject(err) && isObject(err.data) ? err.data : undefined
    const status = typeof output?.statusCode === 'number' ? output.statusCode : 0
    // The token endpoint refused the code (expired, used, wrong verifier): the sign-in failed, try again.
    if (data?.isResponseError === true && status >= 400 && status < 500) throw loginFailed(`Token exchange failed: ${oauthError(data.payload)}`)
    throw providerUnavailable('token endpoint')
  }
  // GitHub answers refusals with 200 and an `error`.
  if (typeof token.error === 'string') throw loginFailed(`Token exchange failed: ${oauthError(token)}`)
  return token
}

function oauthError (payload: unknown): string {
  let body = payload
  if (Buffer.isBuffer(body)) {
    try { body = JSON.parse(body.toString('utf8')) } catch { body = undefined }
  }
  const error = isObject(body) ? body.error : undefined
  return typeof error === 'string' && /^[\w.-]{1,64}$/.test(error) ? error : 'refused'
}

async function fromIdToken (ctx: FlowContext, provider: IdTokenProvider, state: OAuthState, tokens: Row, accessToken: string | undefined): Promise<ExternalIdentity> {
  const idToken = tokens.id_token
  if (typeof idToken !== 'string' || idToken === '' || idToken.length > 16_384) throw loginFailed('The provider sent no ID token')
  const { jwtVerify, errors: jose } = await import('jose')
  let claims: JWTPayload
  try {
    ({ payload: claims } = await jwtVerify(idToken, ctx.providers.keySet(provider.jwksUrl), {
      algorithms: ID_TOKEN_ALGORITHMS,
      issuer: provider.issuers,
      audience: provider.clientId,
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: CLOCK_TOLERANCE
    }))
  } catch (err) {
    if (err instanceof jose.JWKSTimeout || err instanceof jose.JWKSInvalid || (err instanceof TypeError && err.message === 'fetch failed')) throw providerUnavailable('key set')
    throw errors.oauthFailed('Invalid ID token', 401)
  }
  // OpenID Connect Core §3.1.3.7: several audiences need `azp`, and it must be us.
  if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== provider.clientId) throw errors.oauthFailed('Invalid ID token', 401)
  const expected = idTokenNonce(ctx.key, state.id)
  if (claims.nonce !== undefined ? claims.nonce !== expected : provider.requireNonce) throw errors.oauthFailed('Invalid ID token', 401)
  const identity = fromClaims(provider, claims, false)
  if (identity.email === undefined && accessToken !== undefined && provider.userinfoUrl !== undefined) {
    // Some providers put the email in userinfo only; it counts only for the same subject.
    const info = await userinfo(ctx, provider.userinfoUrl, accessToken)
    if (info.sub === identity.subject) return fromClaims(provider, { ...info, ...claims, email: info.email, email_verified: info.email_verified }, false)
  }
  return identity
}

/** The user as the provider's API at `url` describes them; an array answer names nobody (no claims). */
async function userinfo (ctx: FlowContext, url: string, accessToken: string): Promise<Row> {
  const body = await providerApi(ctx, url, accessToken)
  return isObject(body) ? body : {}
}

/** A JSON object or array from the provider's API. */
async function providerApi (ctx: FlowContext, url: string, accessToken: string): Promise<object> {
  const { status, body } = await fetchJson(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': USER_AGENT }
  }, ctx.timeoutMs)
  if (status >= 400 && status < 500) throw loginFailed('The provider refused to tell who signed in')
  if (status !== 200 || body === null || typeof body !== 'object') throw providerUnavailable(new URL(url).host)
  return body
}

/** OpenID-style claims or userinfo: `sub` (or `id`), `email`, `email_verified`, `name`, `picture`. */
function fromClaims (provider: OAuthProvider, info: Row, verifiedByDefault: boolean): ExternalIdentity {
  const subject = info.sub ?? info.id
  const subjectText = typeof subject === 'number' ? String(subject) : subject
  if (typeof subjectText !== 'string' || subjectText === '' || subjectText.length > 255) throw loginFailed('The provider did not say who signed in')
  const email = text(info.email)
  const stated = info.email_verified
  const verified = stated === undefined ? verifiedByDefault : stated === true || stated === 'true'
  return { provider: provider.name, subject: subjectText, email, emailVerified: email !== undefined && verified, name: text(info.name), avatarUrl: text(info.picture), raw: info }
}

async function fromGitHub (ctx: FlowContext, provider: ApiProvider, accessToken: string): Promise<ExternalIdentity> {
  const user = await userinfo(ctx, provider.userinfoUrl, accessToken)
  if (typeof user.id !== 'number' && typeof user.id !== 'string') throw loginFailed('The provider did not say who signed in')
  // The address list needs the user:email scope; without it no address counts as verified.
  let emails: unknown = []
  try {
    emails = await providerApi(ctx, githubEmailsUrl(provider.userinfoUrl), accessToken)
  } catch (err) {
    if (!(err instanceof FastbaseError) || err.statusCode >= 500) throw err
  }
  const list = Array.isArray(emails) ? emails.filter((e): e is Row => e !== null && typeof e === 'object') : []
  const verified = list.find((e) => e.primary === true && e.verified === true) ?? list.find((e) => e.verified === true)
  // Without a verified address: the profile or primary address, unverified (finishFlow refuses it).
  const email = text(verified?.email) ?? text(user.email) ?? text(list.find((e) => e.primary === true)?.email)
  return {
    provider: provider.name,
    subject: String(user.id),
    email,
    emailVerified: verified !== undefined && text(verified.email) !== undefined,
    name: text(user.name) ?? text(user.login),
    avatarUrl: text(user.avatar_url),
    raw: user
  }
}

async function fromDiscord (ctx: FlowContext, provider: ApiProvider, accessToken: string): Promise<ExternalIdentity> {
  const user = await userinfo(ctx, provider.userinfoUrl, accessToken)
  const id = text(user.id)
  if (id === undefined) throw loginFailed('The provider did not say who signed in')
  const email = text(user.email)
  const avatar = text(user.avatar)
  return {
    provider: provider.name,
    subject: id,
    email,
    emailVerified: email !== undefined && user.verified === true,
    name: text(user.global_name) ?? text(user.username),
    avatarUrl: avatar === undefined || !/^[\w]+$/.test(avatar) ? undefined : `https://cdn.discordapp.com/avatars/${id}/${avatar}.png`,
    raw: user
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)
