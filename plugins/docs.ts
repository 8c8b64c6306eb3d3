// The API description: OpenAPI 3.1 JSON at <prefix>/doc and Swagger UI at <prefix>/doc/ui, both
// generated from the TypeBox schemas every route declares, with what each route declares of itself
// for clients applied (`x-document`, schemas/openapi/finish.ts, decision D70). @fastify/swagger
// collects routes in an onRoute hook, so this plugin must be registered before any route (app.ts does that).
import fp from 'fastify-plugin'
import { Type } from '@sinclair/typebox'
import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger'
import type { FastifyInstance, FastifyPluginAsync, FastifySchema } from 'fastify'
// The `app.fastbase` declaration.
import type {} from './types.js'
import { packageVersion } from '../lib/package.js'
import { documentComponents } from '../schemas/openapi/components.js'
import { finishDocument } from '../schemas/openapi/finish.js'
import { identifyCaller } from './auth-context.js'
import { lazyRoutes } from './lazy-routes.js'

export interface DocsOptions {
  /** API prefix, e.g. `/api/v1`. Applied here: a fastify-plugin ignores Fastify's own `prefix`. */
  prefix: string
}

const docs: FastifyPluginAsync<DocsOptions> = async (app, opts) => {
  const { prefix } = opts
  const config = app.fastbase.config
  // A host app's own @fastify/swagger sees every route, fastbase's included (onRoute hooks reach
  // child scopes), but none of the components fastbase's routes refer to: its document would fail.
  // So fastbase's routes are hidden from every document but fastbase's own, which shows the ones
  // it documents (those not hidden already) again in `transform`.
  const documented = new WeakSet<object>()
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide === true) return
    documented.add(route)
    route.schema = { ...route.schema, hide: true }
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: config.appName ?? 'fastbase', version: packageVersion },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }
      },
      // A token is optional everywhere (anonymous callers are subject to rules), and listing the
      // scheme lets Swagger UI's "Authorize" button send it on every call.
      security: [{ bearerAuth: [] }, {}]
    },
    // No `servers`: paths keep the full `/api/v1/...` form, as teenybase's document did.
    refResolver: { buildLocalReference: componentNamer() },
    transform: (input) => nestRootIds(documented.has(input.route) ? { ...input, schema: shown(input.schema) } : input),
    transformObject: (document) => {
      const doc = unwrapNested(document)
      const fb = app.fastbase
      // A minimal instance (tests of this plugin alone) has no tables: the routes' own view is kept.
      if (fb.descriptors === undefined) return doc
      return finishDocument(doc, { prefix, config, components: documentComponents(fb), version: packageVersion })
    }
  })
  // Swagger UI, loaded on its first visit (plugins/lazy-routes.ts, decision D136).
  const ui = `${prefix}/doc/ui`
  lazyRoutes(app, [ui, `${ui}/*`], async (inner) => {
    await inner.register(documentOf(app))
    await inner.register((await import('@fastify/swagger-ui')).default, { routePrefix: ui })
  })
  // Listed in its own document, as teenybase's is (clients and its tests look for it there). Outside
  // the API routes' scope, it looks at credentials itself: a bad token is a 401 here too (decisions D12, D134).
  app.get(`${prefix}/doc`, {
    onRequest: identifyCaller(app.fastbase.callerFrom),
    schema: {
      tags: ['meta'],
      operationId: 'doc',
      summary: 'This API description (OpenAPI 3.1.0 JSON)',
      'x-document': { errors: [401] },
      security: [],
      response: { 200: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) }
    }
  }, async () => app.swagger())
}

/**
 * The explorer's instance shows this app's document: @fastify/swagger-ui asks for a plugin of
 * @fastify/swagger's name and reads the document through its `swagger` decorator.
 */
function documentOf (app: FastifyInstance) {
  return fp(async (inner: FastifyInstance) => {
    inner.decorate('swagger', app.swagger.bind(app))
  }, { name: '@fastify/swagger' })
}

/**
 * Names schemas after their `$id` (`fastbase/record/users` -> `fastbase.record.users`) instead
 * of swagger's `def-N`, so `components.schemas` reads well and stays stable. Component keys may
 * only hold `[A-Za-z0-9._-]`; a clash gets a numeric suffix.
 */
function componentNamer () {
  const byId = new Map<string, string>()
  const taken = new Set<string>()
  return (json: { $id?: unknown }, _baseUri: unknown, _fragment: unknown, i: number): string => {
    const id = json.$id
    if (typeof id !== 'string' || id === '' || id.startsWith('#')) return `def-${i}`
    const known = byId.get(id)
    if (known !== undefined) return known
    let name = id
      .replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*\//i, '')
      .replace(/#.*$/, '')
      .replace(/\.json$/i, '')
      .replace(/[^A-Za-z0-9._-]+/g, '.')
      .replace(/^\.+|\.+$/g, '')
    if (name === '') name = `def-${i}`
    if (taken.has(name)) name = `${name}-${i}`
    byId.set(id, name)
    taken.add(name)
    return name
  }
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const hasRootId = (s: unknown): s is Json =>
  isObject(s) && typeof s.$id === 'string' && !s.$id.startsWith('#') && !('content' in s)

/**
 * @fastify/swagger inlines a body or response schema that carries its `$id` at the root (a
 * TypeBox record schema used whole), and a recursive one is left with a dangling `$ref`. Nested
 * one level down, it is hoisted into `components.schemas` like any nested `$id`. Only the document
 * sees this copy; validation and serialization keep the route's own schema.
 */
const nestRootIds: SwaggerTransform = ({ schema, url }) => {
  if (!isObject(schema)) return { schema, url }
  const out: Json = { ...schema }
  if (hasRootId(out.body)) out.body = nest(out.body)
  if (isObject(out.response)) {
    out.response = Object.fromEntries(Object.entries(out.response)
      .map(([code, s]) => [code, hasRootId(s) ? nest(s) : s]))
  }
  return { schema: out, url }
}

/** The route's schema without the `hide` that keeps it out of a host app's document. */
function shown (schema: FastifySchema): FastifySchema {
  const { hide: _hidden, ...rest } = schema
  return rest
}

// The response description is read from the wrapper, so it moves up with the schema.
const nest = (s: Json): Json =>
  typeof s.description === 'string' ? { description: s.description, allOf: [s] } : { allOf: [s] }

/**
 * Undoes the wrapper `nestRootIds` adds: `{ allOf: [x] }` becomes `x` (a `$ref` to the hoisted
 * component, or the schema itself where swagger inlined it, e.g. a shared schema used whole).
 */
const unwrapNested: SwaggerTransformObject = (document) => {
  const doc = 'openapiObject' in document ? document.openapiObject : document.swaggerObject
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item ?? {})) {
      if (!isObject(op)) continue
      const bodies = [op.requestBody, ...Object.values(isObject(op.responses) ? op.responses : {})]
      for (const body of bodies) {
        if (!isObject(body) || !isObject(body.content)) continue
        for (const media of Object.values(body.content)) {
          if (isObject(media) && isObject(media.schema)) media.schema = unwrap(media.schema)
        }
      }
    }
  }
  return doc
}

function unwrap (s: Json): Json {
  const { allOf, description, ...rest } = s
  if (Object.keys(rest).length > 0 || !Array.isArray(allOf) || allOf.length !== 1) return s
  const [only]: unknown[] = allOf
  if (!isObject(only)) return s
  return description === undefined || 'description' in only ? only : { ...only, description }
}


export default fp(docs, { fastify: '5.x', name: 'fastbase-docs' })
