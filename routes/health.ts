// GET <prefix>/health: liveness plus a real readiness check, so a load balancer takes an instance
// out of rotation when its database is unreachable (decision D23 fixes the 200 body's `status`).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
// The `app.fastbase` declaration.
import type {} from '../plugins/types.js'
import { packageVersion } from '../lib/package.js'
import { errors } from '../lib/errors.js'

export const HealthSchema = Type.Object({
  status: Type.Literal('ok'),
  name: Type.String(),
  version: Type.String(),
  dialect: Type.Optional(Type.String()),
  uptime: Type.Number({ description: 'Seconds since the process started' }),
  timestamp: Type.Integer({ description: 'The server\'s clock in milliseconds since 1970 (Date.now()), as teenybase answers it' })
})

const UnavailableSchema = Type.Object({
  code: Type.Literal(503),
  message: Type.String()
})

/** A check that hangs (exhausted pool, dead PostgreSQL host) must fail before the prober gives up. */
const DB_CHECK_TIMEOUT_MS = 3000

const health: FastifyPluginAsync = async (app) => {
  const version = packageVersion
  app.get('/health', {
    schema: {
      tags: ['meta'],
      summary: 'Health check',
      description: 'Answers 503 when the database does not answer `select 1`.',
      security: [],
      response: { 200: HealthSchema, 503: UnavailableSchema }
    }
  }, async (request) => {
    try {
      await withTimeout(app.fastbase.db.raw('select 1'), DB_CHECK_TIMEOUT_MS)
    } catch (err) {
      request.log.warn({ err }, 'health check: database unavailable')
      throw errors.databaseUnavailable()
    }
    return {
      status: 'ok' as const,
      name: app.fastbase.config.appName ?? 'fastbase',
      version,
      dialect: app.fastbase.dialect?.name,
      uptime: process.uptime(),
      timestamp: Date.now()
    }
  })
}

async function withTimeout<T> (work: PromiseLike<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}


export default health
