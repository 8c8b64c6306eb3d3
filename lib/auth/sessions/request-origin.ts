// Which pages may make a browser write with the auth cookie, or post a sign-in credential. The cookie travels with every request the
// browser makes to this host, whatever page started it; `SameSite=Lax` only keeps other *sites* out,
// and a page on another port or a sibling subdomain is the same site. So a cookie-authenticated
// request with an unsafe method is accepted only when the browser says it comes from the app's own
// origin (`appUrl`) or a listed one (`cors.origins`, FASTBASE_CORS_ORIGINS: the same list CORS answers,
// decision D97). `Origin` and
// `Sec-Fetch-*` are headers no page can set, so they cannot be forged by the page that forges the
// request. Pure: no I/O, no Fastify.

/** Methods that must not change anything: a cookie may authenticate them from anywhere. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The environment variable that adds origins to the config's `cors.origins` (comma-separated). */
export const CORS_ORIGINS_ENV = 'FASTBASE_CORS_ORIGINS'
/** The older name of CORS_ORIGINS_ENV, still read into the same list (decision D97). */
export const ALLOWED_ORIGINS_ENV = 'FASTBASE_ALLOWED_ORIGINS'

/** What the origin list is read from in a config: `cors.origins`, and `allowedOrigins`, its older name (decision D97). */
export interface ListedOriginsConfig { cors?: { origins?: readonly string[] }, allowedOrigins?: readonly string[] }

/** Serialized origins (`https://app.example.com`, `http://localhost:5173`) whose pages may write with the cookie. */
export type OriginPolicy = ReadonlySet<string>

/** Why an entry cannot be an origin of the policy, or undefined when it can. */
export function originProblem (entry: string): string | undefined {
  const url = parseHttpUrl(entry)
  if (url === undefined) return 'must be an origin: scheme, host and optional port (http://localhost:5173)'
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password'
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') return `must be an origin without a path, query or fragment (${url.origin})`
  return undefined
}

/** The policy of `appUrl` and the listed origins (`listedOrigins`). */
export function originPolicy (appUrl: string, listed: readonly string[] = []): OriginPolicy {
  return originsOf([appUrl, ...listed])
}

/**
 * The origins (`scheme://host[:port]`) of the http(s) URLs among `urls`; anything else is left out
 * (config validation reports what it must). Google's one-tap redirect mode posts from its issuer's
 * origin, which is why one-tap passes issuers here too.
 */
export function originsOf (urls: Iterable<string>): Set<string> {
  const origins = new Set<string>()
  for (const value of urls) {
    const url = parseHttpUrl(value)
    if (url !== undefined) origins.add(url.origin)
  }
  return origins
}

/** Where a browser says a post came from: a trusted origin, another one, or nothing (not a browser). */
export type OriginVerdict = 'trusted' | 'foreign' | 'unstated'

/**
 * `Origin` when the browser sent it (`null`, an opaque origin, is foreign); else `Sec-Fetch-Site`,
 * where only `same-origin` (a page of the server answering) is trusted; neither: `unstated`, which
 * is what clients that are not browsers send (no browser this century sends it for a POST). A page
 * on another port or subdomain can plant cookies for the app (one-tap's `g_csrf_token` among them),
 * so a double-submit cookie proves nothing against it; these headers are set by the browser.
 */
export function originVerdict (headers: { origin?: string | string[], 'sec-fetch-site'?: string | string[] }, trusted: ReadonlySet<string>): OriginVerdict {
  const origin = single(headers.origin)
  if (origin !== undefined) return trusted.has(origin) ? 'trusted' : 'foreign'
  const site = single(headers['sec-fetch-site'])
  if (site !== undefined) return site === 'same-origin' ? 'trusted' : 'foreign'
  return 'unstated'
}

function single (value: string | string[] | undefined): string | undefined {
  // Two values for a header a browser sends once: not a browser's request, and not one to trust.
  if (Array.isArray(value)) return value.length === 0 ? undefined : '\u0000'
  return value === undefined || value === '' ? undefined : value
}

/**
 * Whether a request the auth cookie authenticates may go on. Safe methods always; otherwise when
 * `Origin` names an origin of the policy, or `Sec-Fetch-Site` says the browser sent it from this
 * server's own origin (`same-origin`) or on the user's own initiative (`none`: typed, bookmarked; no
 * page can start such a request). Nothing else: a same-site or cross-site page, `Origin: null`
 * (sandboxed frames, cross-origin redirects), and a request with neither header (an old browser, or
 * a program, which can send the token as `Authorization: Bearer` instead) are refused.
 * Headers are compared as the browser serializes them, never parsed.
 */
export function cookieRequestAllowed (policy: OriginPolicy, method: string, origin: string | undefined, fetchSite: string | undefined): boolean {
  if (SAFE_METHODS.has(method)) return true
  if (origin !== undefined && policy.has(origin)) return true
  return fetchSite === 'same-origin' || fetchSite === 'none'
}

/**
 * The one list of other origins whose pages may use the API from a browser: CORS answers them
 * (plugins/external/cors.ts) and the auth cookie writes from them. The config's `cors.origins` and
 * `allowedOrigins`, then the environment's; serialized (`https://app.example.com`), each once.
 * Entries that are not origins are left out (start-up validation reports them).
 */
export function listedOrigins (config: ListedOriginsConfig, fromEnv: readonly string[]): string[] {
  return [...originsOf([...(config.cors?.origins ?? []), ...(config.allowedOrigins ?? []), ...fromEnv].filter((entry) => originProblem(entry) === undefined))]
}

/** `cors.origins` and `allowedOrigins` entries that are not origins, as start-up problems (lib/config/validate.ts). */
export function listedOriginsProblems (config: { cors?: unknown, allowedOrigins?: unknown }): string[] {
  // appUrl itself is checked by lib/config/checks/app.ts.
  const cors = config.cors
  const corsOrigins = typeof cors === 'object' && cors !== null && 'origins' in cors ? cors.origins : undefined
  return [...entryProblems('cors.origins', corsOrigins), ...entryProblems('allowedOrigins', config.allowedOrigins)]
}

function entryProblems (key: string, entries: unknown): string[] {
  const problems: string[] = []
  for (const [i, entry] of (Array.isArray(entries) ? entries : []).entries()) {
    const problem = typeof entry === 'string' ? originProblem(entry) : undefined
    if (problem !== undefined) problems.push(`${key}[${i}]: ${problem}`)
  }
  return problems
}

/**
 * The origins of FASTBASE_CORS_ORIGINS and FASTBASE_ALLOWED_ORIGINS (comma-separated; blanks
 * ignored) and the problems of those that are not origins.
 */
export function originsFromEnv (env: Readonly<Record<string, string | undefined>>): { origins: string[], problems: string[] } {
  const origins: string[] = []
  const problems: string[] = []
  for (const name of [CORS_ORIGINS_ENV, ALLOWED_ORIGINS_ENV]) {
    for (const entry of (env[name] ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
      origins.push(entry)
      const problem = originProblem(entry)
      if (problem !== undefined) problems.push(`${name}: ${JSON.stringify(entry)} ${problem}`)
    }
  }
  return { origins, problems }
}

function parseHttpUrl (value: string): URL | undefined {
  if (!/^https?:\/\/[^/]/i.test(value)) return undefined
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}
