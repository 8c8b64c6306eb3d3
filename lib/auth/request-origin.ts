// Where a browser says a sign-in post came from. A page on another port or subdomain of the app's site
// can plant cookies for the app (Google's `g_csrf_token` among them), so a double-submit cookie proves
// nothing against it; the `Origin` header (else `Sec-Fetch-Site`) is set by the browser and no page
// can forge it. Pure: no Fastify, no I/O.

/** Who may post a credential: the app's own pages, and the provider when it posts the form itself. */
export type OriginVerdict = 'trusted' | 'foreign' | 'unstated'

/**
 * The origins (`scheme://host[:port]`) of the http(s) URLs among `urls`; anything else is left out
 * (config validation reports what it must). Google's one-tap redirect mode posts from its issuer's
 * origin, which is why issuers are passed here too.
 */
export function originsOf (urls: Iterable<string>): Set<string> {
  const origins = new Set<string>()
  for (const value of urls) {
    try {
      const url = new URL(value)
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin)
    } catch {
      // Not a URL (an issuer given as a bare host name): it names no origin.
    }
  }
  return origins
}

/**
 * `Origin` when the browser sent it (`null`, an opaque origin, is foreign); else `Sec-Fetch-Site`,
 * where only `same-origin` (a page of the server answering) is trusted; neither: `unstated`, which
 * is what clients that are not browsers send (and no browser this century sends for a POST).
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
