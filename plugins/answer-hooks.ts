// What every answer of fastbase's routes (of the whole server when standalone) gets, without a hook
// after the handler (decision D139): the id of its request, set as the request arrives, and an early
// answer's lingering close (decision D91, lib/linger.ts), decided where early answers are made. An
// answer is early when its request's body has not all arrived: a body nobody reads (GET, HEAD,
// TRACE), taken over here; an error sent before the body was read (a refused upload, a bad token, a
// body too large, an unknown path), taken over as plugins/errors.ts#sendError sends it. A success
// answer to a method with a body comes after Fastify has read all of it. Slow answers are logged by
// the server's log controller (`AnswerLog` below).
import type { Server } from 'node:http'
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { LingeringConnections } from '../lib/linger.js'
import { lingerBytes, type Limits } from '../lib/limits.js'
import { REQUEST_ID_HEADER } from '../lib/request-id.js'

// Methods whose bodies Fastify never reads (its own list of bodyless methods).
const UNREAD_BODIES = new Set(['GET', 'HEAD', 'TRACE'])

// The lingering connections of each server fastbase answers on, for the error path, which any scope
// of the server may take (a root 404, a router error, a host route's `authenticate`). With several
// instances on one server, the last one's bounds apply to errors.
const lingeringOn = new WeakMap<Server, LingeringConnections>()

/**
 * On `scope`'s routes (fastbase's own, or the whole server when fastbase is the server: a host's
 * routes keep their own), 404s included. One onRequest hook, synchronous: for nearly every request
 * one header set and one method lookup. A hijacked reply (a realtime stream) writes its own head,
 * with the headers set on the reply, the id among them (routes/realtime.ts).
 */
export function finishAnswers (scope: FastifyInstance, limits: Limits): void {
  const lingering = new LingeringConnections({ bytes: lingerBytes(limits), time: limits.lingerTime })
  lingeringOn.set(scope.server, lingering)
  scope.addHook('onRequest', (request, reply, done) => {
    // So a caller can quote it and an operator find its log lines (lib/request-id.ts).
    void reply.header(REQUEST_ID_HEADER, request.id)
    if (UNREAD_BODIES.has(request.method) && lingering.takeOver(request.raw)) void reply.header('connection', 'close')
    done()
  })
  // Before the server waits for its connections to end: a lingering one would hold it for lingerTime.
  scope.addHook('preClose', (done) => {
    lingering.closeAll()
    done()
  })
}

/**
 * Before an error is sent. It may come before the onRequest hook ran (the router's own errors) and
 * before the request's body arrived: it names the request id, and an early one takes over the rest
 * of the body and says the connection ends.
 */
export function finishErrorAnswer (reply: FastifyReply): void {
  void reply.header(REQUEST_ID_HEADER, reply.request.id)
  const server: Server | undefined = reply.server.server
  if (server !== undefined && lingeringOn.get(server)?.takeOver(reply.request.raw) === true) void reply.header('connection', 'close')
}

/** How long an answer may take before it is logged as slow (ms; 0: never): FASTBASE_SLOW_REQUEST_MS, by default 1000. */
export function slowAnswerMs (): number {
  return Number(process.env.FASTBASE_SLOW_REQUEST_MS ?? 1000)
}

/**
 * The server's log controller when fastbase is the server (app.ts#options) with a logger (every
 * request logged: FASTBASE_LOG_REQUESTS=true, or a host's own): Fastify's, and a warning for each answer that took
 * longer than `slowMs` (by default FASTBASE_SLOW_REQUEST_MS as it is when the controller is made; 0
 * turns it off), with its request id. Fastify calls it as each answer ends: the check costs no hook.
 */
export class AnswerLog extends LogController {
  private readonly slowMs: number

  constructor (options: { disableRequestLogging: boolean, slowMs?: number }) {
    super({ disableRequestLogging: options.disableRequestLogging })
    this.slowMs = options.slowMs ?? slowAnswerMs()
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    super.requestCompleted(error, request, reply)
    if (this.slowMs > 0 && reply.elapsedTime > this.slowMs) {
      // No query string: it may hold filters, addresses, tokens.
      request.log.warn({ method: request.method, route: request.routeOptions.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'slow request')
    }
  }
}
