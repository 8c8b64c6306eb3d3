// Routes whose plugins are loaded on their first request (decision D136). The panel's, the explorer's
// and the bundled example's files are served by @fastify/static and @fastify/swagger-ui, which bring
// glob, send and their kin: about 2 MiB that a server answering only its API never needs. Fastify
// takes routes and plugins only before it starts, so these paths are routes of the app from the
// start, and the plugins live in a Fastify instance of their own, built on the first request and
// asked with `inject` from then on. Each answer is then sent as the app's own, through its hooks
// (request id, metrics, slow-answer log), and a path the inner instance does not know gets the
// app's standard 404 body. An answer is held whole while it is sent (the largest, Swagger UI's bundle,
// is 1.5 MB), in one Buffer per file content that all its answers share (lib/shared-bodies.ts).
import Fastify, { LogController, type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { errors } from '../lib/errors.js'
import { SharedBodies } from '../lib/shared-bodies.js'

/** Headers of the inner answer that the outer reply sets for itself. */
const OWN_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])
/** Headers of the request that describe a body, which the inner GET is not sent. */
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'content-type'])

/**
 * GET (and so HEAD) routes at `urls` on `app`, answered by the instance `build` fills with routes at
 * the same paths (under `app`'s prefix in both), made on the first request and closed with `app`. A
 * build that fails is tried again on the next request.
 */
export function lazyRoutes (app: FastifyInstance, urls: readonly string[], build: (inner: FastifyInstance) => Promise<void>): void {
  let inner: Promise<FastifyInstance> | undefined
  const bodies = new SharedBodies()
  const ready = async (): Promise<FastifyInstance> => await (inner ??= made(app, build).catch((error: unknown) => {
    inner = undefined
    throw error
  }))
  app.addHook('onClose', async () => {
    const built = await inner?.catch(() => undefined)
    await built?.close()
  })
  for (const url of urls) {
    app.get(url, { schema: { hide: true } }, async (request, reply) => {
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !BODY_HEADERS.has(name)))
      const answer = await (await ready()).inject({ method: 'GET', url: request.url, headers })
      if (answer.statusCode >= 400) throw refusal(request.method, request.url, answer)
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !OWN_HEADERS.has(name)) reply.header(name, value)
      }
      return await reply.code(answer.statusCode).send(bodies.of(answer.headers.etag, answer.rawPayload))
    })
  }
}

/**
 * An inner error as the app's own: a path it does not know is the standard 404, another refusal keeps
 * its status and message in the standard body, and a failure is logged by the app's error handler
 * and shown to no one.
 */
function refusal (method: string, url: string, answer: LightMyRequestResponse): Error {
  let message = answer.statusMessage
  try {
    const body: unknown = JSON.parse(answer.body)
    if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') message = body.message
  } catch {}
  if (answer.statusCode === 404) return errors.routeNotFound(method, url.split('?')[0])
  if (answer.statusCode < 500) return errors.clientError(answer.statusCode, message)
  return new Error(`the lazily loaded routes answered ${answer.statusCode}: ${message}`)
}

async function made (app: FastifyInstance, build: (inner: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const inner = Fastify({ loggerInstance: app.log, logController: new LogController({ disableRequestLogging: true }), routerOptions: { maxParamLength: 1024 } })
  // Under the prefix a host registered fastbase with, so that the paths are the app's own.
  await inner.register(async (scope) => { await build(scope) }, { prefix: app.prefix })
  await inner.ready()
  return inner
}
