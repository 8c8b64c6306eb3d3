// Where a sign-in may send the browser afterwards (decision D18): only under `appUrl` or an entry of
// `allowedRedirectUrls`, compared as URLs (scheme, host and port exactly; the path as a prefix that
// ends on a `/` boundary), never as strings. Pure: no I/O, no Fastify.

/** One place redirects may go: an origin and a path prefix. */
interface Allowed { protocol: string, host: string, path: string }

export interface RedirectPolicy {
  /** The default target: `appUrl`, normalised. */
  home: string
  allowed: Allowed[]
}

/** Longest redirect target accepted, characters. */
export const MAX_REDIRECT_LENGTH = 2048

// Tabs, newlines and other controls are silently dropped by URL parsers (`java\tscript:`); backslashes
// are read as `/` in http(s) URLs; spaces have no business in a URL. Any of them refuses the target.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job
const FORBIDDEN_CHARACTERS = /[\u0000-\u0020\u007f\\]/
// Percent-encoded `/`, `\` and NUL in the path: a server behind the redirect may decode them and walk
// out of the allowed prefix (`/app%2f..%2fadmin`).
const ENCODED_SEPARATORS = /%(2f|5c|00)/i

/** Why an entry (appUrl or allowedRedirectUrls) cannot be a redirect base, or undefined when it can. */
export function allowedEntryProblem (entry: string): string | undefined {
  const url = parseAbsolute(entry)
  if (url === undefined) return 'must be an absolute http(s) URL'
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password'
  if (url.search !== '' || url.hash !== '') return 'must not carry a query or fragment'
  return undefined
}

/** The policy of `appUrl` and `allowedRedirectUrls`; entries that cannot be parsed are left out (config validation reports them). */
export function redirectPolicy (appUrl: string, allowedRedirectUrls: string[] = []): RedirectPolicy {
  const allowed: Allowed[] = []
  for (const entry of [appUrl, ...allowedRedirectUrls]) {
    const url = allowedEntryProblem(entry) === undefined ? parseAbsolute(entry) : undefined
    if (url !== undefined) allowed.push({ protocol: url.protocol, host: url.host, path: url.pathname })
  }
  return { home: parseAbsolute(appUrl)?.href ?? appUrl, allowed }
}

/**
 * The target as an absolute, normalised URL when the policy allows it, else undefined. A path
 * (`/dashboard`) is read against `appUrl`. Redirect to the returned string, never to the input.
 */
export function checkRedirect (policy: RedirectPolicy, target: string): string | undefined {
  if (target.length === 0 || target.length > MAX_REDIRECT_LENGTH || FORBIDDEN_CHARACTERS.test(target)) return undefined
  let url: URL | undefined
  if (target.startsWith('/')) {
    // A path, but not a protocol-relative URL (`//evil.example`).
    if (target.startsWith('//')) return undefined
    url = parseWithBase(target, policy.home)
  } else {
    url = parseAbsolute(target)
  }
  if (url === undefined || url.username !== '' || url.password !== '') return undefined
  if (ENCODED_SEPARATORS.test(url.pathname)) return undefined
  return policy.allowed.some((entry) => matches(entry, url)) ? url.href : undefined
}

function matches (entry: Allowed, url: URL): boolean {
  // `host` is hostname plus port; the URL parser has already lower-cased it, turned IDNs into
  // punycode and dropped default ports, so equal strings mean the same origin.
  if (url.protocol !== entry.protocol || url.host !== entry.host) return false
  const prefix = entry.path
  if (prefix.endsWith('/')) return url.pathname.startsWith(prefix)
  return url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)
}

function parseAbsolute (value: string): URL | undefined {
  // An absolute URL names its scheme first; anything else (`evil.example/x`, `javascript:`) is refused below.
  if (!/^https?:\/\//i.test(value)) return undefined
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}

function parseWithBase (value: string, base: string): URL | undefined {
  try {
    const url = new URL(value, base)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}
