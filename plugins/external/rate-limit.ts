// @fastify/rate-limit, off by default, on for the routes that ask (`config.rateLimit`: sign-in, sign-up,
// reset and verification requests, admin sign-in). A host app that registered it already keeps its
// own (a second registration in one app is an error): fastbase's routes then count in the host's
// store, and the start-up log says so.
import fp from 'fastify-plugin'
import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { clientAddress } from '../../lib/client-address.js'
import { errors } from '../../lib/errors.js'

export interface RateLimitOptions {
  /** Where hits are counted (PostgreSQL: a table every instance shares); default in process memory. */
  store?: FastifyRateLimitStoreCtor
}

async function rateLimit (app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  if (app.hasDecorator('rateLimit')) {
    app.log.warn('fastbase: the app registered @fastify/rate-limit itself; fastbase\'s limits count in its store')
    return
  }
  await app.register(fastifyRateLimit, {
    global: false,
    ...(opts.store !== undefined ? { store: opts.store } : {}),
    // Fail closed: when the counters cannot be read the request is refused (503), not let through.
    skipOnError: false,
    // An IPv6 client counts as its /64, as in realtime: a host given a whole /64 could otherwise send
    // each try from another address and never reach the limit.
    keyGenerator: (request) => clientAddress(request.ip),
    // Thrown into the one error handler, which renders the standard body.
    errorResponseBuilder: (_request, context) => errors.tooManyRequests(`Too many requests, retry in ${Math.ceil(context.ttl / 1000)}s`)
  })
}

export default fp(rateLimit, { fastify: '5.x', name: 'fastbase-rate-limit' })
