// Which external tokens fastbase trusts, and their verification: ID tokens posted to the one-tap routes
// (`<provider>-login`) and external JWTs exchanged at `login-token`. Trust comes only from the config
// (`authProviders`, and the deprecated `jwtAllowedIssuers` of the same shape): an issuer with a key
// (a JWKS URL, an HS256 shared secret, or a public key as a JWK or PEM), the accepted audiences
// (`clientId`), and one family of algorithms per key, so a token can never choose how it is checked:
// an HMAC secret verifies only HS256, a public key or JWKS only asymmetric algorithms, `none` never.
// Free of Fastify: the routes (routes/auth/external-routes.ts) build one verifier per app. jose is
// loaded when a token or key is first read, not at start.
import type { JWK, JWTPayload, JWTVerifyGetKey } from 'jose'
import type { RemoteKeySets } from './key-sets.js'
import { FastbaseError, errors } from '../../errors.js'
import { errorMessage } from '../../thrown.js'
import type { ExternalIdentity } from './external-users.js'
import { OAUTH_PRESETS } from './oauth-providers.js'

/** An `authProviders` entry as far as token trust reads it (the config schema lets other keys through). */
export interface ProviderConfig {
  name?: string
  issuer?: string
  clientId?: string | string[]
  jwksUrl?: string
  secret?: string | Record<string, unknown>
  algorithm?: string
}

/**
 * The presets that issue ID tokens (Google, LinkedIn), with their issuers and key sets, from the redirect
 * flow's presets (lib/auth/oauth/oauth-providers.ts); config values override them.
 */
export const ID_TOKEN_PRESETS: Readonly<Record<string, { issuers: readonly string[], jwksUrl: string }>> = Object.fromEntries(
  Object.entries(OAUTH_PRESETS).flatMap(([name, preset]) => preset.source === 'id_token' && preset.issuers.length > 0
    ? [[name, { issuers: preset.issuers, jwksUrl: preset.jwksUrl }] as const]
    : [])
)

export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
/** Seconds of clock difference accepted on `exp`, `nbf` and `iat`. */
export const CLOCK_TOLERANCE = 30
/** A provider's key set is fetched at most this slowly (ms) before the token is refused. */
/** Shorter HS256 secrets are accepted with a warning. */
const MIN_SECRET_LENGTH = 32
/** Longest token read: ID tokens are a few kilobytes at most. */
export const MAX_TOKEN_LENGTH = 16_384

type Key = JWTVerifyGetKey | CryptoKey | Uint8Array

/** One trusted issuer with one key. */
export interface TrustedIssuer {
  /** The identity's `provider`: the entry's name, else its issuer. */
  provider: string
  name?: string
  /** Accepted `iss` values. */
  issuers: string[]
  /** Accepted audiences (`clientId`); empty: `aud` is not checked (only for issuers named explicitly with their own key). */
  audiences: string[]
  algorithms: string[]
  key: Key
  /** One-tap: a provider with a name, a clientId and a JWKS. */
  oneTap: boolean
}

export interface VerifierOptions {
  /** `iss` of this deployment's own tokens: never trusted as external. */
  ownIssuer: string
  /** The app's key sets, shared with the OAuth flow. */
  keySets: RemoteKeySets
  /** Told about entries that trust nothing (and why). */
  warn?: (message: string) => void
}

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '')

/** `iss` of the tokens this deployment signs (teenybase's default `$db`): never an external issuer. */
export function ownIssuerOf (config: { jwtIssuer?: string }): string {
  return config.jwtIssuer ?? '$db'
}

/** The provider entries of a config: `authProviders`, then `jwtAllowedIssuers` (a bare string there names an issuer without a key, which trusts nothing). */
export function providerEntries (config: { authProviders?: unknown, jwtAllowedIssuers?: unknown }): Array<{ entry: ProviderConfig, path: string }> {
  const entries = (key: 'authProviders' | 'jwtAllowedIssuers') => (Array.isArray(config[key]) ? config[key] as unknown[] : [])
    .map((entry, i) => ({ entry: entry as ProviderConfig, path: `${key}[${i}]` }))
    .filter(({ entry }) => entry !== null && typeof entry === 'object' && !Array.isArray(entry))
  return [...entries('authProviders'), ...entries('jwtAllowedIssuers')]
}

export class IdTokenVerifier {
  readonly trusted: TrustedIssuer[] = []
  private constructor (private readonly options: VerifierOptions) {}

  /** The verifier for these provider entries; a key that cannot be used as configured is an error here, at start-up. */
  static async create (providers: Array<{ entry: ProviderConfig, path: string }>, options: VerifierOptions): Promise<IdTokenVerifier> {
    const verifier = new IdTokenVerifier(options)
    for (const { entry, path } of providers) {
      const trusted = await verifier.trust(entry, path)
      if (trusted !== undefined) verifier.trusted.push(trusted)
    }
    return verifier
  }

  /** Names of the providers that get a `<name>-login` route. */
  oneTapNames (): string[] {
    return [...new Set(this.trusted.flatMap((p) => p.oneTap && p.name !== undefined ? [p.name] : []))]
  }

  /** The issuers of one-tap provider `name` (its redirect mode posts the credential from their origin). */
  oneTapIssuers (name: string): string[] {
    return this.trusted.filter((p) => p.oneTap && p.name === name).flatMap((p) => p.issuers)
  }

  /** A one-tap credential: an ID token of provider `name`, with `aud` one of its clientIds. */
  async verifyIdToken (name: string, token: string): Promise<ExternalIdentity> {
    let failure: unknown = errors.invalidToken()
    // Several entries may share a name (one per client id, say): any of them may accept the token.
    for (const provider of this.trusted.filter((p) => p.oneTap && p.name === name)) {
      try {
        const claims = await this.check(provider, token)
        // OpenID Connect: with several audiences, the party the token was issued to (`azp`) must be us.
        if (Array.isArray(claims.aud) && claims.aud.length > 1 && !(typeof claims.azp === 'string' && provider.audiences.includes(claims.azp))) throw errors.invalidToken()
        // An ID token without `email_verified` does not vouch for the address.
        return identityOf(provider, claims, false)
      } catch (error) {
        failure = error
      }
    }
    throw failure
  }

  /**
   * A `login-token` JWT: trusted only when its `iss` names a configured issuer with a key; verified
   * against each key configured for that issuer until one accepts it.
   */
  async verifyExternalToken (token: string): Promise<ExternalIdentity> {
    if (token.length > MAX_TOKEN_LENGTH) throw errors.invalidToken()
    const { decodeJwt } = await import('jose')
    let iss: unknown
    try {
      iss = decodeJwt(token).iss
    } catch {
      throw errors.invalidToken()
    }
    if (typeof iss !== 'string' || iss === this.options.ownIssuer) throw errors.invalidToken()
    const candidates = this.trusted.filter((p) => p.issuers.includes(iss))
    let failure: unknown = errors.invalidToken()
    for (const provider of candidates) {
      try {
        // teenybase: an external issuer's token vouches for its email unless it says otherwise.
        return identityOf(provider, await this.check(provider, token), true)
      } catch (error) {
        failure = error
      }
    }
    throw failure
  }

  /** Signature (pinned algorithms), `iss`, `aud`, `exp` (required), `nbf`; any failure is a 401, an unreachable key set a 502. */
  private async check (provider: TrustedIssuer, token: string): Promise<JWTPayload> {
    if (token.length > MAX_TOKEN_LENGTH) throw errors.invalidToken()
    const options = {
      algorithms: provider.algorithms,
      issuer: provider.issuers,
      ...(provider.audiences.length > 0 ? { audience: provider.audiences } : {}),
      requiredClaims: ['exp', 'iss', 'sub'],
      clockTolerance: CLOCK_TOLERANCE
    }
    const { jwtVerify, errors: jose } = await import('jose')
    try {
      const { key } = provider
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options)
      return payload
    } catch (error) {
      throw tokenError(error, jose)
    }
  }

  private async trust (p: ProviderConfig, path: string): Promise<TrustedIssuer | undefined> {
    const name = typeof p.name === 'string' && p.name !== '' ? p.name : undefined
    const preset = name === undefined ? undefined : ID_TOKEN_PRESETS[name]
    const audiences = stringList(p.clientId)
    const issuers = typeof p.issuer === 'string' && p.issuer !== '' ? [p.issuer] : [...preset?.issuers ?? []]
    // The key material the entry gives itself, if any: a non-empty string or an object (a JWK).
    const secret = (typeof p.secret === 'string' && p.secret !== '') || (p.secret !== null && typeof p.secret === 'object') ? p.secret : undefined
    const hasSecret = secret !== undefined
    const jwksUrl = typeof p.jwksUrl === 'string' && p.jwksUrl !== '' ? p.jwksUrl : (hasSecret ? undefined : preset?.jwksUrl)
    if (issuers.length === 0 || (!hasSecret && jwksUrl === undefined)) return undefined
    if (issuers.includes(this.options.ownIssuer)) throw new Error(`${path}.issuer: ${this.options.ownIssuer} is this deployment's own issuer, not an external one`)
    // A preset issuer is shared by every app of that provider: without an audience any of their tokens would do.
    const shared = preset !== undefined || issuers.some((i) => Object.values(ID_TOKEN_PRESETS).some((known) => known.issuers.includes(i)))
    if (shared && audiences.length === 0) {
      this.options.warn?.(`${path}: ${name ?? issuers[0]} tokens are trusted only with a clientId (their audience); this entry trusts none`)
      return undefined
    }
    const provider = name ?? issuers[0]
    const algorithm = typeof p.algorithm === 'string' && p.algorithm !== '' ? p.algorithm : undefined
    if (algorithm === 'none') throw new Error(`${path}.algorithm: none is never accepted`)
    if (secret !== undefined) {
      const { key, algorithms } = await staticKey(secret, algorithm, path)
      if (typeof secret === 'string' && algorithms[0] === 'HS256' && secret.length < MIN_SECRET_LENGTH) this.options.warn?.(`${path}.secret: shorter than ${MIN_SECRET_LENGTH} characters; an HS256 secret that short can be guessed`)
      return { provider, name, issuers, audiences, algorithms, key, oneTap: false }
    }
    if (algorithm !== undefined && !ASYMMETRIC_ALGORITHMS.includes(algorithm)) throw new Error(`${path}.algorithm: a JWKS verifies only ${ASYMMETRIC_ALGORITHMS.join(', ')}`)
    let url: URL
    try {
      url = new URL(jwksUrl!)
    } catch {
      throw new Error(`${path}.jwksUrl: not a URL`)
    }
    const keySet = this.options.keySets.get(url)
    return { provider, name, issuers, audiences, algorithms: algorithm === undefined ? ASYMMETRIC_ALGORITHMS : [algorithm], key: keySet, oneTap: name !== undefined && audiences.length > 0 }
  }
}

/**
 * A configured `secret`: a string is an HS256 shared secret, unless it is a PEM public key; an object
 * is a public JWK. A symmetric or private JWK is refused: keys here only verify.
 */
async function staticKey (secret: string | Record<string, unknown>, algorithm: string | undefined, path: string): Promise<{ key: Key, algorithms: string[] }> {
  if (typeof secret === 'string' && !secret.trimStart().startsWith('-----BEGIN')) {
    if (algorithm !== undefined && algorithm !== 'HS256') throw new Error(`${path}.algorithm: a string secret verifies HS256 only`)
    return { key: new TextEncoder().encode(secret), algorithms: ['HS256'] }
  }
  // Not checked here: jose's importJWK refuses what is no JWK.
  const jwk = typeof secret === 'string' ? undefined : secret as JWK
  const alg = algorithm ?? (typeof jwk?.alg === 'string' ? jwk.alg : defaultAlgorithm(jwk))
  if (!ASYMMETRIC_ALGORITHMS.includes(alg)) throw new Error(`${path}.algorithm: a public key verifies only ${ASYMMETRIC_ALGORITHMS.join(', ')}`)
  const { importJWK, importSPKI } = await import('jose')
  try {
    if (typeof secret === 'string') {
      if (!secret.includes('PUBLIC KEY')) throw new Error('only a public key (PEM "PUBLIC KEY") is accepted')
      return { key: await importSPKI(secret, alg), algorithms: [alg] }
    }
    if (jwk === undefined || jwk.kty === 'oct' || jwk.d !== undefined) throw new Error('only a public key is accepted (a symmetric or private JWK is not)')
    return { key: await importJWK(jwk, alg), algorithms: [alg] }
  } catch (error) {
    throw new Error(`${path}.secret: ${errorMessage(error)}`)
  }
}

/** The usual algorithm of an EC key, by its curve. */
const EC_ALGORITHMS: Readonly<Record<string, string>> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }

/** The algorithm a JWK without `alg` is used with: its key type's usual one. */
function defaultAlgorithm (jwk: JWK | undefined): string {
  if (jwk?.kty === 'EC') return EC_ALGORITHMS[jwk.crv ?? ''] ?? 'ES256'
  if (jwk?.kty === 'OKP') return 'EdDSA'
  return 'RS256'
}

type JoseErrors = typeof import('jose')['errors']

/** What a failed verification answers: the token's fault is a 401; the provider's key set out of reach, a 502. */
function tokenError (error: unknown, jose: JoseErrors): FastbaseError {
  if (error instanceof FastbaseError) return error
  const tokenErrors = [jose.JWTExpired, jose.JWTClaimValidationFailed, jose.JWSSignatureVerificationFailed, jose.JOSEAlgNotAllowed,
    jose.JWSInvalid, jose.JWTInvalid, jose.JWKSNoMatchingKey, jose.JWKSMultipleMatchingKeys, jose.JOSENotSupported]
  if (tokenErrors.some((type) => error instanceof type)) return errors.invalidToken()
  // A TypeError, a bad HMAC key length or anything else from the token's own bytes is the token's fault;
  // only the key set fetch (timeout, network, not a key set) is the provider's.
  if (error instanceof jose.JWKSTimeout || error instanceof jose.JWKSInvalid || isFetchFailure(error, jose)) {
    return errors.providerUnavailable('Could not read the identity provider\'s keys')
  }
  return errors.invalidToken()
}

function isFetchFailure (error: unknown, jose: JoseErrors): boolean {
  if (!(error instanceof Error)) return false
  // fetch() failing (refused, reset, DNS), or jose's "Expected 200 OK from the JSON Web Key Set HTTP response".
  return (error instanceof TypeError && error.message === 'fetch failed') || (error instanceof jose.JOSEError && error.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/.test(error.message))
}

/** The identity a verified token names: `sub` (required), `email` and whether the issuer vouches for it. */
function identityOf (provider: TrustedIssuer, claims: JWTPayload, verifiedByDefault: boolean): ExternalIdentity {
  const subject = claims.sub
  if (typeof subject !== 'string' || subject === '' || subject.length > 255) throw errors.invalidToken()
  const email = typeof claims.email === 'string' && claims.email !== '' ? claims.email : undefined
  const stated = claims.email_verified ?? claims.verified
  const verified = stated === undefined ? verifiedByDefault : stated === true || stated === 'true'
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)
  return {
    provider: provider.provider,
    subject,
    email,
    emailVerified: email !== undefined && verified,
    name: text(claims.name),
    avatarUrl: text(claims.picture),
    raw: claims
  }
}
