// @fastify/cors, on only when origins are listed (config `cors.origins`, FASTBASE_CORS_ORIGINS;
// decision D97). Registered in the scope of the API's prefix, so its preflight route
// (`OPTIONS <prefix>/*`) never meets a host's own or another fastbase instance's. A listed origin gets
// its own origin back with credentials; any other gets no CORS header at all (its preflight is a 404),
// so a browser keeps the answer from its page. A host that registered @fastify/cors itself keeps its own.
import fp from 'fastify-plugin'
import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import { ERROR_CODE_HEADER } from '../../lib/errors.js'
import { REQUEST_ID_HEADER } from '../../lib/request-id.js'
import { DELETED_FILES_HEADER, UPLOADED_FILES_HEADER } from '../../lib/files/headers.js'

export interface CorsOptions {
  /** Serialized origins (`https://app.example.com`), compared with the browser's `Origin` as it sends it. */
  origins: readonly string[]
}

/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600

async function cors (app: FastifyInstance, opts: CorsOptions): Promise<void> {
  if (opts.origins.length === 0) return
  if (app.hasRequestDecorator('corsPreflightEnabled')) {
    app.log.warn('fastbase: the app registered @fastify/cors itself; its settings answer for fastbase\'s routes, not cors.origins')
    return
  }
  const listed = new Set(opts.origins)
  const allowed: FastifyCorsOptions = {
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // What a client reads besides the body: the stable error code, the request id to quote, and
    // what an upload stored or removed (a page needs the stored names it just uploaded).
    exposedHeaders: [ERROR_CODE_HEADER, REQUEST_ID_HEADER, UPLOADED_FILES_HEADER, DELETED_FILES_HEADER],
    maxAge: PREFLIGHT_MAX_AGE
  }
  await app.register(fastifyCors, {
    delegator: (request, callback) => {
      const origin = request.headers.origin
      callback(null, origin !== undefined && listed.has(origin) ? { ...allowed, origin } : { origin: false })
    }
  })
}

export default fp(cors, { fastify: '5.x', name: 'fastbase-cors' })
