// What rules, where clauses and actions read as `request.*` (the interface's request object).
// `request.url` is the app's public URL (`appUrl`: scheme, host and port) with the path and query
// this request asked for. The origin is never taken from the `Host` header, which any caller sets:
// a rule comparing `request.url.origin` or `.host` must not be satisfiable by a forged header.
import type { IncomingHttpHeaders } from 'node:http'

/** What is read of a request (a FastifyRequest is one). */
export interface RequestParts { method: string, headers: IncomingHttpHeaders, query?: unknown, url: string }

export interface RequestGlobals extends Record<string, unknown> {
  method: string
  headers: IncomingHttpHeaders
  query: unknown
  url: { href: string, protocol: string, host: string, hostname: string, port: string, pathname: string, search: string, hash: string, origin: string }
}

/**
 * `request.url` is made when something first reads it: most rules never do, and parsing two URLs
 * for every request cost more than the rest of this object.
 */
export function requestGlobals (request: RequestParts, appUrl: string): RequestGlobals {
  return new LazyRequestGlobals(request, appUrl)
}

/**
 * `url` is an own property, as expressions read only own properties, and an accessor with one getter
 * shared by every instance. An object literal's `get url ()` was a new function per request, which
 * gave each object a hidden class of its own: V8 allocates those in the old generation, and from
 * there each one kept its whole request alive through every young-generation collection, so every
 * request was promoted (a tenth of what a table read allocated, collected again by full collections;
 * decision D84).
 */
class LazyRequestGlobals implements RequestGlobals {
  [key: string]: unknown
  readonly method: string
  readonly headers: IncomingHttpHeaders
  readonly query: unknown
  declare readonly url: RequestGlobals['url']
  readonly #target: string
  readonly #appUrl: string
  #url: RequestGlobals['url'] | undefined

  constructor (request: RequestParts, appUrl: string) {
    this.method = request.method
    this.headers = request.headers
    this.query = request.query ?? {}
    this.#target = request.url
    this.#appUrl = appUrl
    Object.defineProperty(this, 'url', LazyRequestGlobals.#urlProperty)
  }

  static readonly #urlProperty: PropertyDescriptor = {
    enumerable: true,
    get (this: LazyRequestGlobals) { return (this.#url ??= urlParts(this.#target, this.#appUrl)) }
  }
}

function urlParts (target: string, appUrl: string): RequestGlobals['url'] {
  // Appended to the origin as text, so a target like `//other.host/x` stays a path here.
  const url = new URL(new URL(appUrl).origin + pathAndQuery(target))
  return { href: url.href, protocol: url.protocol, host: url.host, hostname: url.hostname, port: url.port, pathname: url.pathname, search: url.search, hash: url.hash, origin: url.origin }
}

/** The path and query of a request target; an absolute-form target (`GET http://host/x`) gives its path. */
function pathAndQuery (target: string): string {
  if (target.startsWith('/')) return target
  try {
    const url = new URL(target)
    return url.pathname + url.search
  } catch {
    return '/'
  }
}
