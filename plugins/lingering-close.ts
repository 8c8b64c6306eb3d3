// Early answers reach clients that are still sending (decision D91): every answer of the scope sent
// before its request's body arrived closes its connection by lingering (lib/linger.ts).
import type { FastifyInstance } from 'fastify'
import { LingeringConnections } from '../lib/linger.js'
import { lingerBytes, type Limits } from '../lib/limits.js'

/**
 * On `scope`'s routes (fastbase's own, or the whole server when fastbase is the server: a host's
 * routes keep their own connection handling), including errors of `onRequest` hooks and 404s.
 */
export function lingerAfterEarlyAnswers (scope: FastifyInstance, limits: Limits): void {
  const lingering = new LingeringConnections({ bytes: lingerBytes(limits), time: limits.lingerTime })
  // onSend: the last moment the answer's headers can still change. Synchronous, and one property
  // read for a request whose body has arrived (nearly all of them).
  scope.addHook('onSend', (request, reply, _payload, done) => {
    if (lingering.takeOver(request.raw)) void reply.header('connection', 'close')
    done()
  })
  // Before the server waits for its connections to end: a lingering one would hold it for lingerTime.
  scope.addHook('preClose', (done) => {
    lingering.closeAll()
    done()
  })
}
