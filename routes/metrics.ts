// Prometheus metrics at `metrics.path` (default /metrics), for a scraper that sends
// `Authorization: Bearer <metrics.token>` (docs/metrics.md). Registered by app.ts only when the
// kernel built metrics (plugins/metrics.ts counts the requests).
import type { FastifyPluginAsync } from 'fastify'
import { secretDigest, matchesDigest } from '../lib/auth/secret-compare.js'
import { errors } from '../lib/errors.js'
import type { Metrics } from '../lib/metrics/registry.js'

export const DEFAULT_METRICS_PATH = '/metrics'

export interface MetricsRouteOptions {
  metrics: Metrics
  settings: { path?: string, token: string }
}

const metricsRoutes: FastifyPluginAsync<MetricsRouteOptions> = async (app, { metrics, settings }) => {
  const token = secretDigest(settings.token)
  // Outside the API prefix's scope, where no hook reads credentials (decision D134): the bearer token
  // is the scraper's, checked here alone.
  app.get(settings.path ?? DEFAULT_METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const header = request.headers.authorization
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined
    if (given === undefined || !matchesDigest(given, token)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"')
      throw errors.unauthorized('A metrics token is required')
    }
    void reply.header('content-type', metrics.registry.contentType)
    return await metrics.registry.metrics()
  })
}

export default metricsRoutes
