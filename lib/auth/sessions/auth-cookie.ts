// The auth cookie's name and attributes, decided once from the config. Under https it is a `__Host-`
// cookie: browsers accept a cookie of that name only with Secure, Path=/ and no Domain, from this
// host itself, so a page on a sibling subdomain (or plain http) can neither plant one nor shadow it
// with a broader cookie of the same name. Under plain http that prefix is refused by browsers
// (it needs Secure), so the configured name is kept. Pure: no I/O, no Fastify.

const HOST_PREFIX = '__Host-'

export interface CookieAttributes {
  httpOnly: boolean
  secure: boolean
  sameSite: 'lax' | 'strict' | 'none'
  path: string
  domain?: string
}

export interface AuthCookie {
  /** The name it is set and read under. */
  name: string
  attributes: CookieAttributes
  /** Configured Max-Age, seconds (otherwise the token's lifetime). */
  maxAge?: number
  /** Why a sibling subdomain could still plant it (https, but the config asks for what `__Host-` forbids). */
  warning?: string
}

interface AuthCookieConfig {
  name: string
  httpOnly?: boolean
  secure?: boolean
  /** As the config schema allows it (either case). */
  sameSite?: keyof typeof SAME_SITE
  path?: string
  domain?: string
  maxAge?: number
}

/** The cookie attribute of each configured `sameSite`. */
const SAME_SITE = { Strict: 'strict', Lax: 'lax', None: 'none', strict: 'strict', lax: 'lax', none: 'none' } as const

/** The auth cookie of `appUrl` and `authCookie`, or undefined when none is configured. */
export function authCookieOf (appUrl: string, cookie: AuthCookieConfig | undefined): AuthCookie | undefined {
  if (cookie === undefined) return undefined
  const attributes: CookieAttributes = {
    httpOnly: cookie.httpOnly ?? true,
    secure: cookie.secure ?? true,
    sameSite: SAME_SITE[cookie.sameSite ?? 'Lax'],
    path: cookie.path ?? '/',
    domain: cookie.domain
  }
  const base = { attributes, maxAge: cookie.maxAge }
  if (!/^https:/i.test(appUrl) || cookie.name.startsWith(HOST_PREFIX)) return { name: cookie.name, ...base }
  const conflicts = [
    cookie.domain === undefined ? undefined : 'domain',
    attributes.path === '/' ? undefined : 'a path other than /',
    attributes.secure ? undefined : 'secure: false'
  ].filter((c) => c !== undefined)
  if (conflicts.length === 0) return { name: `${HOST_PREFIX}${cookie.name}`, ...base }
  return {
    name: cookie.name,
    ...base,
    warning: `authCookie: ${conflicts.join(', ')} keeps the cookie's name without the ${HOST_PREFIX} prefix, so a page on another subdomain of the site can set a cookie of that name`
  }
}

/** `authCookie` settings browsers would refuse (a `__Host-` name needs Secure, Path=/ and no Domain), as start-up problems. */
export function authCookieProblems (config: { authCookie?: Partial<AuthCookieConfig> }): string[] {
  const cookie = config.authCookie
  if (typeof cookie?.name !== 'string' || !cookie.name.startsWith(HOST_PREFIX)) return []
  const problems: string[] = []
  if (cookie.domain !== undefined) problems.push(`authCookie.domain: a ${HOST_PREFIX} cookie cannot have a domain (browsers refuse it)`)
  if (cookie.path !== undefined && cookie.path !== '/') problems.push(`authCookie.path: a ${HOST_PREFIX} cookie must have path / (browsers refuse it)`)
  if (cookie.secure === false) problems.push(`authCookie.secure: a ${HOST_PREFIX} cookie must be secure (browsers refuse it)`)
  return problems
}
