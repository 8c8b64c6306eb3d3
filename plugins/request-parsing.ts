// Body parsing of the API routes, as lenient as teenybase clients need it (decision D36) and no more.
import type { FastifyInstance } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { urlencodedBody } from '../lib/form-fields.js'

/**
 * JSON bodies as Fastify parses them (prototype-poisoning checks, the route's body limit), except that
 * an empty or whitespace-only body means `{}`: teenybase clients send logout and request-verification
 * with a JSON content type and nothing in it. Any other text that is not JSON stays a 400.
 */
export function lenientJsonBodies (scope: FastifyInstance): void {
  const parse = scope.getDefaultJsonParser('error', 'error')
  scope.removeContentTypeParser('application/json')
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.trim() === '') return done(null, {})
    parse(request, body, done)
  })
}

/**
 * `application/x-www-form-urlencoded` bodies (teenybase clients post forms to table routes): fields
 * named like multipart ones (`values.title`, `values[title]`), converted to the route's body types,
 * within the route's body limit and at most `limits.fields` fields.
 */
export function urlencodedBodies (scope: FastifyInstance): void {
  const maxFields = scope.fastbase.limits.fields
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body: string, done) => {
    try {
      done(null, urlencodedBody(body, maxFields, request.routeOptions.schema?.body as TSchema | undefined))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}
