// What the auth routes and the auth-context hook need of Fastify: cookies (the auth cookie) and rate
// limits, counted in the database when instances share it. The auth services themselves are the
// kernel's (lib/kernel/auth.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import cookiePlugin from './external/cookie.js'
import rateLimitPlugin from './external/rate-limit.js'
import { databaseRateLimitStore } from '../lib/auth/stores/rate-limit-store.js'
import type {} from './types.js'

async function auth (app: FastifyInstance): Promise<void> {
  await app.register(cookiePlugin)
  const { config, dialect } = app.fastbase
  await app.register(rateLimitPlugin, config.rateLimit !== false && dialect.sharedByInstances ? { store: sharedRateLimits(app) } : {})
}

/**
 * Rate-limit counters in the database (lib/internal/tables.ts#internalTablesFor), so every instance
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
