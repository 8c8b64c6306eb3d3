// The one error path: every error leaves as { code, message, data } with code == HTTP status; `data`
// is `{}` when the error carries none, as teenybase sends it (clients read `data.<field>` unguarded; decision D92).
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_CODE_HEADER, FastbaseError, errors } from '../lib/errors.js'
import { validationError } from '../lib/validation.js'
import { databaseError } from '../lib/crud/db-errors.js'
import { finishErrorAnswer } from './answer-hooks.js'
import { requestLog } from './server-log.js'

interface ErrorBody { code: number, message: string, data: Record<string, unknown> }

/** Errors Fastify itself raises on bad requests, mapped to the fastbase table. */
function fromFastify (error: FastifyError, request: FastifyRequest): FastbaseError | undefined {
  if (error.validation !== undefined) {
    return validationError(error.validation.map((v) => ({ path: v.instancePath, message: v.message ?? 'Invalid value' })))
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY': case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.badRequest('Invalid JSON body')
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return errors.payloadTooLarge()
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return errors.unsupportedMediaType(mediaTypeOf(request))
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return errors.clientError(error.statusCode, error.message)
  }
  return undefined
}

/** The request's media type as the caller sent it, without parameters and cut short (it is echoed back). */
function mediaTypeOf (request: FastifyRequest): string {
  const type = String(request.headers['content-type'] ?? '').split(';')[0].trim()
  return type.length > 100 ? `${type.slice(0, 100)}...` : type
}

/** Database errors any route can meet (lib/crud/db-errors.ts). */
function fromDatabase (app: FastifyInstance, error: unknown): FastbaseError | undefined {
  const dialect = app.fastbase.dialect
  return dialect === undefined ? undefined : databaseError(dialect, error)
}

async function errorHandling (app: FastifyInstance): Promise<void> {
  const expose = app.fastbase.options.exposeErrors

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let known: FastbaseError | undefined
    try {
      known = error instanceof FastbaseError ? error : fromFastify(error, request) ?? fromDatabase(app, error)
    } catch (mapping) {
      // A bug in describing the error must still end in the standard body, not Fastify's own.
      requestLog(request).error({ err: mapping }, 'error handler failed')
    }
    if (known !== undefined) {
      if (known.statusCode >= 500) requestLog(request).warn({ code: known.errorCode }, known.message)
    } else {
      // Unexpected: log everything (the request logger binds the request id as reqId), show the caller
      // nothing about SQL or stacks in production.
      requestLog(request).error({ err: error }, 'request failed')
      known = errors.internal(expose ? `Internal Server Error: ${error.message}` : `Internal Server Error (request ${request.id})`)
    }
    sendError(reply, known)
  })
}

/**
 * The one rendering of an error: the `{ code, message, data }` body and the stable code's header.
 * An error may be answered before its request's body has arrived (a refused upload, a bad token, a
 * body too large, an unknown path): it then closes the connection lingering (decision D91,
 * plugins/answer-hooks.ts).
 */
export function sendError (reply: FastifyReply, error: FastbaseError): void {
  finishErrorAnswer(reply)
  const body: ErrorBody = { code: error.statusCode, message: error.message, data: error.data ?? {} }
  void reply.code(error.statusCode).header(ERROR_CODE_HEADER, error.errorCode).type('application/json').send(body)
}

/**
 * The standard 404 body for unknown paths under the scope's prefix. Fastify allows one 404 handler
 * per prefix across the whole app, so fastbase sets it on its API prefix only, never on the host's.
 */
export function routeNotFound (scope: FastifyInstance): void {
  scope.setNotFoundHandler((request, reply) => {
    sendError(reply, errors.routeNotFound(request.method, request.url.split('?')[0]))
  })
}

export default fp(errorHandling, { name: 'fastbase-errors' })
