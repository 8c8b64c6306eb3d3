// What the auth routes need of Fastify across fastbase's scope: rate limits, counted in the database
// when instances share it (cookies are registered with the auth routes, the only ones that set them:
// routes/auth/index.ts). The auth services themselves are the kernel's (lib/kernel/auth.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import rateLimitPlugin from './external/rate-limit.js'
import { databaseRateLimitStore } from '../lib/auth/stores/rate-limit-store.js'
import type {} from './types.js'

async function auth (app: FastifyInstance): Promise<void> {
  const { config, dialect } = app.fastbase
  await app.register(rateLimitPlugin, config.rateLimit !== false && dialect.sharedByInstances ? { store: sharedRateLimits(app) } : {})
}

/**
 * Rate-limit counters in the database (lib/internal/internal-tables.ts#internalTablesFor), so every instance
 * on it counts the same hits.
 */
function sharedRateLimits (app: FastifyInstance): FastifyRateLimitStoreCtor {
  const { db } = app.fastbase
  const store = databaseRateLimitStore(db, (err) => app.log.warn({ err }, 'rate limit store failed'))
  // The plugin's typings say child() gets the route's options; it gets the merged limit settings with
  // the route under `routeInfo` (@fastify/rate-limit index.js), which is what the store reads.
  return store as unknown as FastifyRateLimitStoreCtor
}

export default fp(auth, { name: 'fastbase-auth' })
