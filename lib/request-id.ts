// Request ids: each request's id ties its log lines (errors, 5xx, slow requests) to the answer, which
// carries it in the `x-request-id` header. An id a proxy or client sends is kept only when it is a
// short plain token (a UUID, a ULID, a trace id): it is written into logs and into the body of a 500,
// so caller text of any other shape or length never gets there. Anything else gets a fresh id.
import { randomFillSync } from 'node:crypto'
import { IncomingMessage } from 'node:http'

/** The header a request id is read from and answered in. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** Longest id accepted from a caller (a W3C trace id is 32 characters, a UUID 36). */
export const MAX_REQUEST_ID_LENGTH = 128

const WELL_FORMED = new RegExp(`^[A-Za-z0-9._:+-]{1,${MAX_REQUEST_ID_LENGTH}}$`)

/** The caller's id when it is one well-formed header value, else a random UUID. */
export function requestIdFrom (header: string | string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED.test(header) ? header : randomRequestId()
}

// Random (version 4) UUIDs, written as text a batch at a time. Node's randomUUID draws from a batch of
// random bytes too, but joins each id from twenty pieces, one concatenation at a time, which the
// answer's head then flattens (decision D146). Here the ids of a batch are written as texts of a few
// ids each, and each id is a slice of one: a slice keeps its whole text alive, so a text is kept short
// (an id someone holds on to holds at most UUIDS_PER_TEXT ids' worth).
const UUIDS_PER_BATCH = 128
const UUIDS_PER_TEXT = 8
const UUID_BYTES = 16
const UUID_LENGTH = 36
const random = Buffer.alloc(UUID_BYTES * UUIDS_PER_BATCH)
const written = Buffer.alloc(UUID_LENGTH * UUIDS_PER_BATCH)
const HEX = Buffer.from('0123456789abcdef')
// Where each byte's two digits go in the text: 8-4-4-4-12.
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]
const DASHES_AT = [8, 13, 18, 23]
for (let i = 0; i < UUIDS_PER_BATCH; i++) for (const at of DASHES_AT) written[i * UUID_LENGTH + at] = 0x2d
const texts: string[] = []
let nextUuid = UUIDS_PER_BATCH

function writeBatch (): void {
  randomFillSync(random)
  for (let i = 0; i < UUIDS_PER_BATCH; i++) {
    const from = i * UUID_BYTES
    const to = i * UUID_LENGTH
    // RFC 9562: version 4 in the high nibble of byte 6, variant 10 in the high bits of byte 8.
    random[from + 6] = (random[from + 6] & 0x0f) | 0x40
    random[from + 8] = (random[from + 8] & 0x3f) | 0x80
    for (let b = 0; b < UUID_BYTES; b++) {
      const byte = random[from + b]
      written[to + DIGITS_AT[b]] = HEX[byte >> 4]
      written[to + DIGITS_AT[b] + 1] = HEX[byte & 0x0f]
    }
  }
  const textLength = UUID_LENGTH * UUIDS_PER_TEXT
  for (let t = 0; t < UUIDS_PER_BATCH / UUIDS_PER_TEXT; t++) texts[t] = written.toString('latin1', t * textLength, (t + 1) * textLength)
  nextUuid = 0
}

/** A random version 4 UUID, as `crypto.randomUUID()` makes one. */
export function randomRequestId (): string {
  if (nextUuid === UUIDS_PER_BATCH) writeBatch()
  const n = nextUuid++
  const at = UUID_LENGTH * (n % UUIDS_PER_TEXT)
  return texts[Math.floor(n / UUIDS_PER_TEXT)].slice(at, at + UUID_LENGTH)
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
