// The one error path: every error leaves as { code, message, data? } with code == HTTP status.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { FastbaseError, errors } from '../lib/errors.js'
import { fieldErrors } from '../lib/validation.js'

interface ErrorBody { code: number, message: string, data?: Record<string, unknown> }

/** Errors Fastify itself raises on bad requests, mapped to the fastbase table. */
function fromFastify (error: FastifyError): FastbaseError | undefined {
  if (error.validation !== undefined) {
    return errors.validation(fieldErrors(error.validation.map((v) => ({ path: v.instancePath, message: v.message ?? 'Invalid value' }))))
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY': case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.badRequest('Invalid JSON body')
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return errors.payloadTooLarge()
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return errors.unsupportedMediaType(String(error.message.split(': ').at(-1)))
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new FastbaseError(error.statusCode, error.code ?? 'FB_ERR_BAD_REQUEST', error.message)
  }
  return undefined
}

/** Database errors any route can meet: a lock outlasting the busy timeout, or a caller's value the database refused. */
function fromDatabase (app: FastifyInstance, error: unknown): FastbaseError | undefined {
  const dialect = app.fastbase.dialect
  if (dialect === undefined) return undefined
  if (dialect.isBusy(error)) return errors.busy()
  const bad = dialect.badInput(error)
  return bad === undefined ? undefined : errors.badRequest(`Invalid value in query: ${bad}`)
}

async function errorHandling (app: FastifyInstance): Promise<void> {
  const expose = app.fastbase.options.exposeErrors

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let body: ErrorBody
    let known: FastbaseError | undefined
    try {
      known = error instanceof FastbaseError ? error : fromFastify(error) ?? fromDatabase(app, error)
    } catch (mapping) {
      // A bug in describing the error must still end in the standard body, not Fastify's own.
      request.log.error({ err: mapping, reqId: request.id }, 'error handler failed')
    }
    if (known !== undefined) {
      body = { code: known.statusCode, message: known.message }
      if (known.data !== undefined) body.data = known.data
      if (known.statusCode >= 500) request.log.warn({ reqId: request.id, code: known.errorCode }, known.message)
    } else {
      // Unexpected: log everything with the request id, show the caller nothing about SQL or stacks in production.
      request.log.error({ err: error, reqId: request.id }, 'request failed')
      body = { code: 500, message: expose ? `Internal Server Error: ${error.message}` : `Internal Server Error (request ${request.id})` }
    }
    void reply.code(body.code).type('application/json').send(body)
  })
}

/**
 * The standard 404 body for unknown paths under the scope's prefix. Fastify allows one 404 handler
 * per prefix across the whole app, so fastbase sets it on its API prefix only, never on the host's.
 */
export function routeNotFound (scope: FastifyInstance): void {
  scope.setNotFoundHandler((request, reply) => {
    const error = errors.routeNotFound(request.method, request.url.split('?')[0])
    void reply.code(404).send({ code: 404, message: error.message })
  })
}

export default fp(errorHandling, { name: 'fastbase-errors', dependencies: ['fastbase-config'] })
