// Which pages may make a browser write with the auth cookie, or post a sign-in credential. The cookie travels with every request the
// browser makes to this host, whatever page started it; `SameSite=Lax` only keeps other *sites* out,
// and a page on another port or a sibling subdomain is the same site. So a cookie-authenticated
// request with an unsafe method is accepted only when the browser says it comes from the app's own
// origin (`appUrl`) or an allowed one (`allowedOrigins`, FASTBASE_ALLOWED_ORIGINS). `Origin` and
// `Sec-Fetch-*` are headers no page can set, so they cannot be forged by the page that forges the
// request. Pure: no I/O, no Fastify.

/** Methods that must not change anything: a cookie may authenticate them from anywhere. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The environment variable that adds origins to the config's `allowedOrigins` (comma-separated). */
export const ALLOWED_ORIGINS_ENV = 'FASTBASE_ALLOWED_ORIGINS'

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

/** The policy of `appUrl` and the allowed origins; entries that cannot be parsed are left out (start-up validation reports them). */
export function originPolicy (appUrl: string, allowedOrigins: readonly string[] = []): OriginPolicy {
  const origins = new Set<string>()
  const app = parseHttpUrl(appUrl)
  if (app !== undefined) origins.add(app.origin)
  for (const entry of allowedOrigins) {
    if (originProblem(entry) === undefined) origins.add(parseHttpUrl(entry)!.origin)
  }
  return origins
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

/** `allowedOrigins` entries that are not origins, as start-up problems (lib/config/validate.ts). */
export function allowedOriginsProblems (config: { allowedOrigins?: unknown }): string[] {
  // appUrl itself is checked by lib/config/checks/app.ts.
  const problems: string[] = []
  const entries = Array.isArray(config.allowedOrigins) ? config.allowedOrigins : []
  for (const [i, entry] of entries.entries()) {
    const problem = typeof entry === 'string' ? originProblem(entry) : undefined
    if (problem !== undefined) problems.push(`allowedOrigins[${i}]: ${problem}`)
  }
  return problems
}

/** The origins of FASTBASE_ALLOWED_ORIGINS (comma-separated; blanks ignored) and the problems of those that are not origins. */
export function originsFromEnv (value: string | undefined): { origins: string[], problems: string[] } {
  const origins = (value ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  const problems = origins.flatMap((entry) => {
    const problem = originProblem(entry)
    return problem === undefined ? [] : [`${ALLOWED_ORIGINS_ENV}: ${JSON.stringify(entry)} ${problem}`]
  })
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
