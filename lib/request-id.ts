// Request ids: each request's id ties its log lines (errors, 5xx, slow requests) to the answer, which
// carries it in the `x-request-id` header. An id a proxy or client sends is kept only when it is a
// short plain token (a UUID, a ULID, a trace id): it is written into logs and into the body of a 500,
// so caller text of any other shape or length never gets there. Anything else gets a fresh id.
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

/** The header a request id is read from and answered in. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** Longest id accepted from a caller (a W3C trace id is 32 characters, a UUID 36). */
export const MAX_REQUEST_ID_LENGTH = 128

const WELL_FORMED = new RegExp(`^[A-Za-z0-9._:+-]{1,${MAX_REQUEST_ID_LENGTH}}$`)

/** The caller's id when it is one well-formed header value, else a random UUID. */
export function requestIdFrom (header: string | string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED.test(header) ? header : randomUUID()
}

/** Where a request's id is kept on the request as Node's server gives it. */
export const RAW_REQUEST_ID = Symbol('fastbase: request id')

/**
 * The id of `raw`, a request as Node's server gives it (`requestIdFrom` of its header), kept on it
 * too, for what sees only Node's objects (the slow-answer log, plugins/server-log.ts).
 */
export function rawRequestId (raw: { headers: IncomingHttpHeaders, [RAW_REQUEST_ID]?: string }): string {
  raw[RAW_REQUEST_ID] = requestIdFrom(raw.headers[REQUEST_ID_HEADER])
  return raw[RAW_REQUEST_ID]
}
