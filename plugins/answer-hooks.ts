// What every answer of fastbase's routes (of the whole server when standalone) gets, in one onSend
// hook, one hook call per request rather than one per concern: the id of its request, an early
// answer's lingering close (decision D91, lib/linger.ts), and a log line when it was slow.
import type { FastifyInstance } from 'fastify'
import { LingeringConnections } from '../lib/linger.js'
import { lingerBytes, type Limits } from '../lib/limits.js'
import { REQUEST_ID_HEADER } from '../lib/request-id.js'

/**
 * On `scope`'s routes (fastbase's own, or the whole server when fastbase is the server: a host's
 * routes keep their own), including errors of `onRequest` hooks and 404s. A hijacked reply (a
 * realtime stream) skips onSend: it names its request id itself (routes/realtime.ts).
 */
export function finishAnswers (scope: FastifyInstance, limits: Limits): void {
  const lingering = new LingeringConnections({ bytes: lingerBytes(limits), time: limits.lingerTime })
  // FASTBASE_SLOW_REQUEST_MS: answers that took longer than this to start are logged (warn) with their id; 0 turns it off.
  const slowMs = Number(process.env.FASTBASE_SLOW_REQUEST_MS ?? 1000)
  // onSend: the last moment the answer's headers can still change. Synchronous; for nearly every
  // request one header set and two property reads.
  scope.addHook('onSend', (request, reply, _payload, done) => {
    // So a caller can quote it and an operator find its log lines (lib/request-id.ts).
    void reply.header(REQUEST_ID_HEADER, request.id)
    if (lingering.takeOver(request.raw)) void reply.header('connection', 'close')
    if (slowMs > 0 && reply.elapsedTime > slowMs) {
      // No query string: it may hold filters, addresses, tokens.
      request.log.warn({ method: request.method, route: request.routeOptions.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'slow request')
    }
    done()
  })
  // Before the server waits for its connections to end: a lingering one would hold it for lingerTime.
  scope.addHook('preClose', (done) => {
    lingering.closeAll()
    done()
  })
}
