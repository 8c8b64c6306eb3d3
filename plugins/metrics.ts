// Prometheus metrics (lib/metrics/registry.ts, built by the kernel when the config has a `metrics`
// block that is not `enabled: false`): every answered request of fastbase's routes is counted here;
// routes/metrics.ts serves them. Without metrics no hook, timer or counter exists.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import type {} from './types.js'

const metricsPlugin: FastifyPluginAsync = async (app) => {
  const { metrics } = app.fastbase
  if (metrics === undefined) return
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}

export default fp(metricsPlugin, { fastify: '5.x', name: 'fastbase-metrics' })
