// What a route says of itself in the API document beyond its validation schemas: `x-document` in the
// route's schema, beside the `operationId`, `tags`, `summary` and `description` @fastify/swagger
// reads. Route schemas validate leniently (a write body may name a field the server then refuses with
// 403; multipart bodies are JSON by validation time), so where a client needs more, the route states
// it here, mostly as references into schemas/openapi/components.ts. @fastify/swagger copies `x-`
// keys onto the operation as they are; plugins/docs.ts applies them (schemas/openapi/finish.ts).

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI fragments are JSON of any shape
export type Json = Record<string, any>

export interface OperationDocument {
  /** The error statuses the route answers, each the shared response of its status. */
  errors: number[]
  /** The request body clients send, in place of the one derived from the validation schema. */
  requestBody?: Json
  /** An example of the derived JSON body. */
  bodyExample?: unknown
  /** The derived body may be left out. */
  bodyOptional?: true
  /** Answers (by status) in place of the ones derived from the response schemas. */
  responses?: Json
  /** Parameters by name: merged onto the derived one of that name, else added. */
  parameters?: Record<string, Json>
  /** The query parameters are shared: the component of `<shared>.<name>` (the same on every table). */
  sharedQuery?: string
  /** The name of the path's wildcard (`*`) parameter, in the path and its parameters. */
  wildcard?: string
}

declare module 'fastify' {
  interface FastifySchema {
    'x-document'?: OperationDocument
  }
}
