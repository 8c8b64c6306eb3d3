// What the auth routes need of Fastify across fastbase's scope: rate limits, counted in the database
// when instances share it (cookies are registered with the auth routes, the only ones that set them:
// routes/auth/index.ts). The auth services themselves are the kernel's (lib/kernel/auth.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import rateLimitPlugin from './external/rate-limit.js'
import type {} from './types.js'

async function auth (app: FastifyInstance): Promise<void> {
  // The store's typings say child() gets the route's options; it gets the merged limit settings with
  // the route under `routeInfo` (@fastify/rate-limit index.js), which is what the store reads.
  const store = app.fastbase.auth.rateLimitStore as FastifyRateLimitStoreCtor | undefined
  await app.register(rateLimitPlugin, store === undefined ? {} : { store })
}

export default fp(auth, { name: 'fastbase-auth' })
