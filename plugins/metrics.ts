// Prometheus metrics at `metrics.path` (default /metrics), for a scraper that sends
// `Authorization: Bearer <metrics.token>` (docs/metrics.md). Registered by app.ts only when the config
// has a `metrics` block that is not `enabled: false`: otherwise no hook, timer or counter exists.
// Registered before the routes, so its onResponse hook sees every fastbase route.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { secretDigest, matchesDigest } from '../lib/auth/secret-compare.js'
import { errors } from '../lib/errors.js'

export const DEFAULT_METRICS_PATH = '/metrics'

const metricsPlugin: FastifyPluginAsync = async (app) => {
  const settings = app.fastbase.config.metrics!
  const { executor, db } = app.fastbase
  // prom-client is loaded here, not when app.ts imports this file: a server without metrics never loads it.
  const { createMetrics } = await import('../lib/metrics/registry.js')
  const metrics = createMetrics({
    knex: db,
    held: executor.direct?.held,
    // Read on each scrape: the realtime plugin registers after this one.
    realtime: () => app.fastbase.realtime?.load() ?? { streams: 0, classes: 0, queuedBytes: 0, pendingChanges: 0 },
    lastBackup: async () => await app.fastbase.backups.lastSuccess()
  })
  if (executor.direct !== undefined) executor.direct = metrics.timedRunner(executor.direct)
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  const token = secretDigest(settings.token)
  // externalCredential: the bearer token is the scraper's, not a user's: the auth context leaves it alone.
  app.get(settings.path ?? DEFAULT_METRICS_PATH, { schema: { hide: true }, config: { externalCredential: true } }, async (request, reply) => {
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

/** Metrics are served when the config has a `metrics` block without `enabled: false`. */
export function metricsEnabled (config: { metrics?: { enabled?: boolean } }): boolean {
  return config.metrics !== undefined && config.metrics.enabled !== false
}

export default fp(metricsPlugin, { fastify: '5.x', name: 'fastbase-metrics', dependencies: ['fastbase-backups'] })
