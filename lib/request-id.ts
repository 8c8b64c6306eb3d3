// Request ids: each request's id ties its log lines (errors, 5xx, slow requests) to the answer, which
// carries it in the `x-request-id` header. An id a proxy or client sends is kept only when it is a
// short plain token (a UUID, a ULID, a trace id): it is written into logs and into the body of a 500,
// so caller text of any other shape or length never gets there. Anything else gets a fresh id.
import { randomUUID } from 'node:crypto'
import { IncomingMessage } from 'node:http'

/** The header a request id is read from and answered in. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** Longest id accepted from a caller (a W3C trace id is 32 characters, a UUID 36). */
export const MAX_REQUEST_ID_LENGTH = 128

const WELL_FORMED = new RegExp(`^[A-Za-z0-9._:+-]{1,${MAX_REQUEST_ID_LENGTH}}$`)

/** The caller's id when it is one well-formed header value, else a random UUID. */
export function requestIdFrom (header: string | string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED.test(header) ? header : randomUUID()
}

/**
 * A request as fastbase's own server makes it (app.ts#options gives Node's server this class): what
 * only Node's objects see afterwards (the slow-answer log, plugins/server-log.ts) is on it from its
 * construction, as its head is read. Fields written later onto Node's own class would change every
 * request's hidden class twice, which cost each request more than the log itself (decision D145).
 */
export class ArrivingRequest extends IncomingMessage {
  /** When its head was read (`performance.now()`). */
  readonly arrivedAt = performance.now()
  /** Its id, once the server gave it one (`rawRequestId`). */
  requestId: string | undefined = undefined
}

/**
 * The id of `raw`, a request as Node's server gives it (`requestIdFrom` of its header), kept on it
 * too: Fastify's `genReqId` on fastbase's own server, whose requests are `ArrivingRequest`s (an
 * injected one is not, and keeps the id all the same).
 */
export function rawRequestId (raw: IncomingMessage & { requestId?: string }): string {
  raw.requestId = requestIdFrom(raw.headers[REQUEST_ID_HEADER])
  return raw.requestId
}
