// The OAuth `state` (decision D18): signed by the server, short-lived, bound to the browser that
// started the flow, single use (lib/auth/oauth/oauth-used-states.ts records the used ones in the database).
//
// - The browser gets a random nonce in an HttpOnly cookie; the state carries only its hash, so the
//   state alone (it travels through the provider and the address bar) is useless to someone else.
// - The PKCE verifier is derived from the key, the nonce and the state id: the callback needs the
//   cookie to compute it, and nothing secret is stored anywhere between the two requests.
// - The state carries the table, the provider, the callback URL sent to the provider and the checked
//   post-login redirect, so the callback trusts none of them from its own query.
// Format: `v1.<base64url JSON>.<base64url HMAC-SHA256>`. Pure: no I/O.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { isObject } from '../../plain.js'

/** How long a started flow may take, seconds (also the state cookie's Max-Age). */
export const STATE_LIFETIME = 600

export interface OAuthState {
  /** Random id: the single-use record's key. */
  id: string
  table: string
  provider: string
  /** The redirect_uri given to the provider (the token request repeats it). */
  callback: string
  /** The checked post-login redirect (absolute URL). */
  redirect: string
  /** sha256 of the cookie's nonce, base64url. */
  nonceHash: string
  /** Expiry, epoch seconds. */
  exp: number
}

export interface StartedState {
  /** The `state` parameter. */
  state: string
  /** The state cookie's value. */
  nonce: string
  /** PKCE S256 challenge for the authorize request. */
  codeChallenge: string
  /** The OpenID `nonce` for the authorize request (the ID token must carry it back). */
  idTokenNonce: string
  claims: OAuthState
}

const PREFIX = 'v1'
const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url')
const hashNonce = (nonce: string): string => createHash('sha256').update(nonce).digest('base64url')

/** The state key for one auth table, derived from its signing secret (and kept apart from JWT signing by the label). */
export function stateKey (secret: string): Buffer {
  return createHmac('sha256', secret).update('fastbase-oauth-state').digest()
}

function mac (key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest()
}

/** The PKCE verifier (43 base64url characters, RFC 7636) of a state, computable only with the cookie's nonce. */
export function pkceVerifier (key: Buffer, nonce: string, stateId: string): string {
  return createHmac('sha256', key).update(`pkce.${stateId}.${nonce}`).digest('base64url')
}

/** The OpenID nonce of a state (not secret: it ties the ID token to this flow). */
export function idTokenNonce (key: Buffer, stateId: string): string {
  return createHmac('sha256', key).update(`oidc-nonce.${stateId}`).digest('base64url')
}

export function startState (key: Buffer, fields: Pick<OAuthState, 'table' | 'provider' | 'callback' | 'redirect'>, now = Date.now()): StartedState {
  const id = randomBytes(16).toString('base64url')
  const nonce = randomBytes(32).toString('base64url')
  const claims: OAuthState = { id, ...fields, nonceHash: hashNonce(nonce), exp: Math.floor(now / 1000) + STATE_LIFETIME }
  const payload = b64url(JSON.stringify(claims))
  const verifier = pkceVerifier(key, nonce, id)
  return {
    state: `${PREFIX}.${payload}.${b64url(mac(key, payload))}`,
    nonce,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    idTokenNonce: idTokenNonce(key, id),
    claims
  }
}

export type StateProblem = 'malformed' | 'signature' | 'expired'

/** The state's claims when its signature holds and it has not expired; otherwise why not. */
export function readState (key: Buffer, state: string, now = Date.now()): { claims: OAuthState } | { problem: StateProblem } {
  const parts = state.split('.')
  if (parts.length !== 3 || parts[0] !== PREFIX || !/^[\w-]+$/.test(parts[1]) || !/^[\w-]{43}$/.test(parts[2])) return { problem: 'malformed' }
  const given = Buffer.from(parts[2], 'base64url')
  const expected = mac(key, parts[1])
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { problem: 'signature' }
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
  } catch {
    return { problem: 'malformed' }
  }
  if (!isState(claims)) return { problem: 'malformed' }
  if (claims.exp <= Math.floor(now / 1000)) return { problem: 'expired' }
  return { claims }
}

/** Whether the cookie's nonce is the one the state was started with (constant time). */
export function nonceMatches (claims: OAuthState, nonce: string | undefined): boolean {
  if (nonce === undefined || nonce === '') return false
  const given = Buffer.from(hashNonce(nonce))
  const expected = Buffer.from(claims.nonceHash)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

function isState (value: unknown): value is OAuthState {
  if (!isObject(value)) return false
  return ['id', 'table', 'provider', 'callback', 'redirect', 'nonceHash'].every((k) => typeof value[k] === 'string') &&
    typeof value.exp === 'number' && Number.isFinite(value.exp)
}
