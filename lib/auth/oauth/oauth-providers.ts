// The OAuth providers of the redirect flow (decision D34): presets with their real endpoints, custom
// providers from their own URLs or from their OpenID discovery document (fetched once, cached), and the
// start-up checks of `authProviders` for the flow. URLs come from the config (or the discovery document
// of the issuer the config names), never from a caller. Free of Fastify.
import type { JWTVerifyGetKey } from 'jose'
import type { RemoteKeySets } from './key-sets.js'
import { FastbaseError, errors } from '../../errors.js'
import { isObject } from '../../plain.js'
import { checkRedirect, redirectPolicy, allowedEntryProblem } from './redirects.js'

/** How the signed-in user is read after the code exchange. */
export type IdentitySource = 'id_token' | 'github' | 'discord' | 'userinfo'

/** A provider read from a verified ID token: its key set is known (userinfo may add the email). */
interface IdTokenSource { source: 'id_token', jwksUrl: string, userinfoUrl?: string }
/** A provider read from its API: the user endpoint is known. */
interface ApiSource { source: Exclude<IdentitySource, 'id_token'>, userinfoUrl: string, jwksUrl?: string }

export type OAuthProvider = ProviderSettings & (IdTokenSource | ApiSource)
/** An OAuthProvider that is read from its API (GitHub, Discord, userinfo). */
export type ApiProvider = ProviderSettings & ApiSource
/** An OAuthProvider that is read from its verified ID tokens. */
export type IdTokenProvider = ProviderSettings & IdTokenSource

interface ProviderSettings {
  name: string
  clientId: string
  clientSecret: string
  authorizeUrl: string
  tokenUrl: string
  /** Accepted `iss` values of ID tokens (and RFC 9207 responses). */
  issuers: string[]
  scopes: string[]
  /** Client credentials in the token request's body (`body`) or as HTTP Basic (`header`). */
  tokenAuth: 'body' | 'header'
  /** Whether the ID token must carry back the `nonce` sent (presets that document echoing it). */
  requireNonce: boolean
  /** Default post-login redirect (checked against appUrl and allowedRedirectUrls at start-up). */
  redirectUrl?: string
  /** Extra authorize parameters. */
  authorizeParams: Record<string, string>
}

type Preset = Omit<ProviderSettings, 'name' | 'clientId' | 'clientSecret' | 'redirectUrl'> & (IdTokenSource | ApiSource)

export const OAUTH_PRESETS: Readonly<Record<string, Preset>> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
    // Google writes `iss` with and without the scheme.
    issuers: ['https://accounts.google.com', 'accounts.google.com'],
    scopes: ['openid', 'email', 'profile'],
    source: 'id_token',
    tokenAuth: 'body',
    requireNonce: true,
    authorizeParams: {}
  },
  github: {
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    userinfoUrl: 'https://api.github.com/user',
    issuers: [],
    scopes: ['read:user', 'user:email'],
    source: 'github',
    tokenAuth: 'body',
    requireNonce: false,
    authorizeParams: {}
  },
  discord: {
    authorizeUrl: 'https://discord.com/oauth2/authorize',
    tokenUrl: 'https://discord.com/api/oauth2/token',
    userinfoUrl: 'https://discord.com/api/users/@me',
    issuers: [],
    scopes: ['identify', 'email'],
    source: 'discord',
    tokenAuth: 'body',
    requireNonce: false,
    authorizeParams: {}
  },
  linkedin: {
    authorizeUrl: 'https://www.linkedin.com/oauth/v2/authorization',
    tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken',
    userinfoUrl: 'https://api.linkedin.com/v2/userinfo',
    jwksUrl: 'https://www.linkedin.com/oauth/openid/jwks',
    issuers: ['https://www.linkedin.com/oauth'],
    scopes: ['openid', 'profile', 'email'],
    source: 'id_token',
    tokenAuth: 'body',
    // LinkedIn does not document echoing `nonce`; PKCE and the state still bind the code to the flow.
    requireNonce: false,
    authorizeParams: {}
  }
}

/** The GitHub API's address list (primary and verified flags), beside its `/user` (GitHub Enterprise too). */
export const githubEmailsUrl = (userinfoUrl: string): string => `${userinfoUrl.replace(/\/+$/, '')}/emails`

/** An `authProviders` entry the redirect flow serves (teenybase's rule): a name and a client secret, with a client id. */
interface RedirectEntry {
  name: string
  clientId: string
  clientSecret: string
  /** The whole entry, as configured (the schema lets other keys through). */
  entry: Record<string, unknown>
}

/** Outbound requests to providers give up after this long, ms. */
export const PROVIDER_TIMEOUT = 10_000
/** Longest provider answer read, bytes. */
export const MAX_PROVIDER_RESPONSE = 1024 * 1024
const URL_KEYS = ['authorizeUrl', 'tokenUrl', 'userinfoUrl', 'jwksUrl', 'issuer'] as const

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)
const firstClientId = (value: unknown): string | undefined => text(Array.isArray(value) ? value[0] : value)

/** The entry as the redirect flow serves it, or undefined when it lacks what the flow needs. */
function redirectEntry (entry: unknown): RedirectEntry | undefined {
  if (!isObject(entry)) return undefined
  const name = text(entry.name)
  const clientSecret = text(entry.clientSecret)
  const clientId = firstClientId(entry.clientId)
  return name === undefined || clientSecret === undefined || clientId === undefined ? undefined : { name, clientId, clientSecret, entry }
}

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

/** Start-up problems of `authProviders` and `allowedRedirectUrls` as the redirect flow reads them (lib/config/validate.ts). */
export function oauthConfigProblems (config: { appUrl?: unknown, authProviders?: unknown, allowedRedirectUrls?: unknown }): string[] {
  const problems: string[] = []
  const allowed = Array.isArray(config.allowedRedirectUrls) ? config.allowedRedirectUrls.filter((u): u is string => typeof u === 'string') : []
  for (const [i, entry] of allowed.entries()) {
    const problem = allowedEntryProblem(entry)
    if (problem !== undefined) problems.push(`allowedRedirectUrls[${i}]: ${problem}`)
  }
  const entries = Array.isArray(config.authProviders) ? config.authProviders : []
  const policy = typeof config.appUrl === 'string' ? redirectPolicy(config.appUrl, allowed) : undefined
  for (const [i, entry] of entries.entries()) {
    if (!isObject(entry)) continue
    const path = `authProviders[${i}]`
    const name = text(entry.name)
    if (text(entry.clientSecret) === undefined) continue
    // A client secret is there for the redirect flow: say what else it needs.
    if (name === undefined) problems.push(`${path}.name: is required for the OAuth redirect flow (clientSecret is set)`)
    if (firstClientId(entry.clientId) === undefined) problems.push(`${path}.clientId: is required for the OAuth redirect flow (clientSecret is set)`)
    for (const key of URL_KEYS) {
      const value = text(entry[key])
      if (value !== undefined && !isHttpUrl(value)) problems.push(`${path}.${key}: must be an absolute http(s) URL`)
    }
    if (name !== undefined && OAUTH_PRESETS[name] === undefined) {
      const endpoints = text(entry.authorizeUrl) !== undefined && text(entry.tokenUrl) !== undefined
      if (!endpoints && text(entry.issuer) === undefined) {
        problems.push(`${path}: custom provider ${JSON.stringify(name)} needs authorizeUrl and tokenUrl, or issuer (its OpenID discovery document gives them)`)
      } else if (endpoints && text(entry.userinfoUrl) === undefined && (text(entry.jwksUrl) === undefined || text(entry.issuer) === undefined)) {
        problems.push(`${path}: custom provider ${JSON.stringify(name)} needs userinfoUrl, or jwksUrl and issuer to verify its ID tokens`)
      }
    }
    const redirect = text(entry.redirectUrl)
    if (redirect !== undefined && policy !== undefined && checkRedirect(policy, redirect) === undefined) {
      problems.push(`${path}.redirectUrl: must be under appUrl or an allowedRedirectUrls entry (same scheme, host and port; path prefix)`)
    }
  }
  return problems
}

/** A provider failed in a way that is not the caller's fault (unreachable, malformed answer). */
export const providerUnavailable = (what: string): FastbaseError => errors.providerUnavailable(`The identity provider did not answer: ${what}`)

interface Discovery { authorizeUrl: string, tokenUrl: string, userinfoUrl?: string, jwksUrl?: string, issuer: string }

/** One app's providers: the entries the flow serves, discovery documents and key sets cached per URL. */
export class OAuthProviders {
  private readonly entries = new Map<string, RedirectEntry>()
  private readonly discoveries = new Map<string, Promise<Discovery>>()
  constructor (entries: unknown[], private readonly keySets: RemoteKeySets, private readonly timeoutMs = PROVIDER_TIMEOUT) {
    for (const raw of entries) {
      const served = redirectEntry(raw)
      // The first entry of a name wins, as for one-tap.
      if (served !== undefined && !this.entries.has(served.name)) this.entries.set(served.name, served)
    }
  }

  /** Names of the providers the redirect flow serves. */
  names (): string[] {
    return [...this.entries.keys()]
  }

  /** The provider, its preset and config merged (config wins); undefined when the flow does not serve it. */
  async get (name: string): Promise<OAuthProvider | undefined> {
    const served = this.entries.get(name)
    if (served === undefined) return undefined
    const { entry } = served
    const preset = OAUTH_PRESETS[name]
    const configured = {
      authorizeUrl: text(entry.authorizeUrl),
      tokenUrl: text(entry.tokenUrl),
      userinfoUrl: text(entry.userinfoUrl),
      jwksUrl: text(entry.jwksUrl)
    }
    const scopes = Array.isArray(entry.scopes) && entry.scopes.length > 0 ? entry.scopes : undefined
    const issuer = text(entry.issuer)
    const base = {
      name,
      clientId: served.clientId,
      clientSecret: served.clientSecret,
      redirectUrl: text(entry.redirectUrl)
    }
    if (preset !== undefined) {
      const merged = {
        ...base,
        authorizeUrl: configured.authorizeUrl ?? preset.authorizeUrl,
        tokenUrl: configured.tokenUrl ?? preset.tokenUrl,
        userinfoUrl: configured.userinfoUrl ?? preset.userinfoUrl,
        jwksUrl: configured.jwksUrl ?? preset.jwksUrl,
        issuers: issuer === undefined ? preset.issuers : [issuer],
        scopes: scopes ?? preset.scopes
      }
      // The source says which URL the preset always has: the merged one is then a string.
      return preset.source === 'id_token'
        ? { ...preset, ...merged, jwksUrl: configured.jwksUrl ?? preset.jwksUrl }
        : { ...preset, ...merged, userinfoUrl: configured.userinfoUrl ?? preset.userinfoUrl }
    }
    // A custom provider: its own URLs, anything missing from the discovery document of its issuer.
    const needsDiscovery = configured.authorizeUrl === undefined || configured.tokenUrl === undefined ||
      (configured.userinfoUrl === undefined && configured.jwksUrl === undefined)
    const found = needsDiscovery && issuer !== undefined ? await this.discover(issuer) : undefined
    const jwksUrl = configured.jwksUrl ?? found?.jwksUrl
    const authorizeUrl = configured.authorizeUrl ?? found?.authorizeUrl
    const tokenUrl = configured.tokenUrl ?? found?.tokenUrl
    // Config validation refuses such an entry; a discovery document lacking them is the provider's fault.
    if (authorizeUrl === undefined || tokenUrl === undefined) throw providerUnavailable('no authorization or token endpoint')
    const userinfoUrl = configured.userinfoUrl ?? found?.userinfoUrl
    const custom = { ...base, authorizeUrl, tokenUrl, userinfoUrl, jwksUrl, issuers: issuer === undefined ? [] : [issuer], tokenAuth: 'header' as const, authorizeParams: {} }
    if (jwksUrl !== undefined && issuer !== undefined) {
      return { ...custom, jwksUrl, scopes: scopes ?? ['openid', 'email', 'profile'], source: 'id_token', requireNonce: true }
    }
    if (userinfoUrl === undefined) throw providerUnavailable('no way to read the user (userinfo endpoint or ID token keys)')
    return { ...custom, userinfoUrl, scopes: scopes ?? [], source: 'userinfo', requireNonce: false }
  }

  /** The key set at `url` (shared with one-tap and login-token). */
  keySet (url: string): JWTVerifyGetKey {
    return this.keySets.get(url)
  }

  /** `{issuer}/.well-known/openid-configuration`, fetched once (a failure is retried by the next request). */
  private async discover (issuer: string): Promise<Discovery> {
    let pending = this.discoveries.get(issuer)
    if (pending === undefined) {
      pending = readDiscovery(issuer, this.timeoutMs)
      this.discoveries.set(issuer, pending)
      pending.catch(() => this.discoveries.delete(issuer))
    }
    return await pending
  }
}

async function readDiscovery (issuer: string, timeoutMs: number): Promise<Discovery> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  const doc = await fetchJson(url, { headers: { accept: 'application/json' } }, timeoutMs)
  if (doc.status !== 200 || doc.body === null || typeof doc.body !== 'object') throw providerUnavailable('no OpenID discovery document')
  // An array is no document: it names no issuer.
  const body = isObject(doc.body) ? doc.body : {}
  // OpenID Connect Discovery 1.0 §4.3: the document's issuer is exactly the one it was fetched for.
  if (body.issuer !== issuer) throw providerUnavailable('the discovery document names another issuer')
  const endpoint = (key: string): string | undefined => {
    const value = text(body[key])
    return value !== undefined && isHttpUrl(value) ? value : undefined
  }
  const authorizeUrl = endpoint('authorization_endpoint')
  const tokenUrl = endpoint('token_endpoint')
  if (authorizeUrl === undefined || tokenUrl === undefined) throw providerUnavailable('the discovery document lacks its endpoints')
  return { issuer, authorizeUrl, tokenUrl, userinfoUrl: endpoint('userinfo_endpoint'), jwksUrl: endpoint('jwks_uri') }
}

/**
 * A GET with a timeout, no redirects followed, and a size cap; the status and the parsed JSON body
 * (null when the body is not JSON). A network failure or timeout is a 502.
 */
export async function fetchJson (url: string, init: { headers: Record<string, string> }, timeoutMs = PROVIDER_TIMEOUT): Promise<{ status: number, body: unknown }> {
  let response: Response
  try {
    response = await fetch(url, { headers: init.headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
  } catch {
    throw providerUnavailable(new URL(url).host)
  }
  const raw = await cappedText(response, url)
  let body: unknown = null
  try {
    body = JSON.parse(raw)
  } catch {}
  return { status: response.status, body }
}

/** The body as text, read no further than MAX_PROVIDER_RESPONSE bytes. */
async function cappedText (response: Response, url: string): Promise<string> {
  if (response.body === null) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > MAX_PROVIDER_RESPONSE) {
        await reader.cancel()
        throw providerUnavailable('answer too large')
      }
      chunks.push(value)
    }
  } catch (err) {
    if (err instanceof FastbaseError) throw err
    throw providerUnavailable(new URL(url).host)
  }
  return Buffer.concat(chunks).toString('utf8')
}
