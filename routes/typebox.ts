// The instance every route module registers on: the TypeBox type provider gives `request.body`,
// `params` and `query` the static types of the route's schemas (validation itself is
// plugins/validation.ts). A plugin typed with it registers on any Fastify instance.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'

export type TypeBoxApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>
