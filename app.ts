// The fastbase root plugin. `fastify start --options dist/app.js` runs it; other apps `register` it, as
// often as they like: everything fastbase sets up lives in a scope of its own (see `fastbase` below).
import fp from 'fastify-plugin'
import type { FastifyError, FastifyHttpOptions, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify'
import type { Fastbase } from './plugins/types.js'
import errorsPlugin from './plugins/errors.js'
import validationPlugin from './plugins/validation.js'
import authPlugin from './plugins/auth.js'
import { fileHooksOf } from './plugins/files.js'
import metricsPlugin from './plugins/metrics.js'
import authContextPlugin, { callerResolver } from './plugins/auth-context.js'
import docsPlugin from './plugins/docs.js'
import { hostAuthentication } from './plugins/host-auth.js'
import corsPlugin from './plugins/external/cors.js'
import healthRoutes from './routes/health.js'
import tableRoutes from './routes/tables/index.js'
import authRoutes from './routes/auth/index.js'
import actionRoutes from './routes/actions.js'
import fileRoutes from './routes/files.js'
import panelRoutes from './routes/panel.js'
import examplePage from './routes/example-page.js'
import adminRoutes from './routes/admin.js'
import backupRoutes from './routes/backups.js'
import realtimeRoutes from './routes/realtime.js'
import metricsRoutes from './routes/metrics.js'
import { lenientJsonBodies } from './plugins/request-parsing.js'
import { routeNotFound, sendError } from './plugins/errors.js'
import { errors } from './lib/errors.js'
import { ArrivingRequest, rawRequestId } from './lib/request-id.js'
import { buildKernel, type KernelServices } from './lib/kernel/index.js'
import { OWN_SERVER, refuseStartWithoutServerOptions, startedAsOwnServer } from './plugins/standalone.js'
import { AnswerLog, finishAnswers, slowAnswerMs } from './plugins/answer-hooks.js'
import { requestLoggersOnFirstUse } from './plugins/request-logger.js'
import { ownServerLog } from './plugins/server-log.js'
import type { FastbaseOptions } from './plugins/types.js'

export type { FastbaseOptions }

/**
 * What fastbase adds to Fastify before its routes: error handling, schema compilers, cookies and rate
 * limits, request metrics, the API document (multipart bodies are parsed in the table writes' own
 * scope, routes/tables/index.ts; who the caller is, in the API prefix's scope after CORS). Each reads
 * the sealed `app.fastbase` and adds hooks, parsers or compilers only, so their order does not matter
 * (test/app/app.test.ts registers them in reverse); all of them come before any route.
 */
export const REQUEST_PIPELINE: readonly PipelineStep[] = [
  async (app) => { await app.register(errorsPlugin) },
  async (app) => { await app.register(validationPlugin) },
  async (app) => { await app.register(authPlugin) },
  async (app) => { await app.register(metricsPlugin) },
  async (app, prefix) => { await app.register(docsPlugin, { prefix }) }
]

/** One plugin of the request pipeline, registered on fastbase's scope; `prefix` is the API's. */
export type PipelineStep = (app: FastifyInstance, prefix: string) => Promise<void>

/**
 * Registers fastbase in a child scope of the host: its validator and serializer compilers, error
 * handler, body parsers, hooks and decorators apply to its own routes only, and its 404 handler to
 * its API prefix only, so the host's routes, schemas and handlers behave exactly as without it and
 * several instances can live side by side. The host gets the instance as `app[decorator]`.
 */
const fastbase: FastifyPluginAsync<FastbaseOptions> = async (host, opts) => {
  refuseStartWithoutServerOptions(host, opts)
  if (startedAsOwnServer(opts)) ownServerLog(host, slowAnswerMs())
  const decorator = opts.decorator ?? 'fastbase'
  if (decorator !== false && host.hasDecorator(decorator)) {
    throw new Error(`fastbase: the app already has a "${decorator}" decorator (another fastbase instance?); give this one its own with the \`decorator\` option`)
  }
  let instance: Fastbase | undefined
  // Host routes get it from `authenticate` (plugins/host-auth.ts); declared once however many instances.
  if (!host.hasRequestDecorator('fastbaseAuth')) host.decorateRequest('fastbaseAuth', undefined)
  if (opts.standalone === true) routeNotFound(host)
  await host.register(async (app) => {
    instance = await fastbaseScope(app, opts, opts.standalone === true ? host : app)
  })
  if (decorator !== false) host.decorate(decorator, instance)
}

/**
 * fastbase inside its scope `app`: the kernel builds every service (lib/kernel/index.ts), the
 * request-facing functions are added, and the whole is sealed as `app.fastbase`; then the request
 * pipeline (in `pipeline`'s order) and the routes. `edge` is where answers are finished (their
 * request id and an early answer's lingering close: plugins/answer-hooks.ts), the
 * whole server when standalone.
 */
export async function fastbaseScope (app: FastifyInstance, opts: FastbaseOptions, edge: FastifyInstance, pipeline: readonly PipelineStep[] = REQUEST_PIPELINE): Promise<Fastbase> {
  const { services, lifecycle } = await buildKernel({ options: opts, bundledExampleAllowed: startedAsOwnServer(opts), codeActions: opts.actions ?? [], log: app.log })
  app.addHook('onReady', async () => { await lifecycle.started() })
  // preClose runs after a failed start too: the database is still open for what must finish.
  app.addHook('preClose', async () => { await lifecycle.preClose() })
  app.addHook('onClose', async () => { await lifecycle.close() })
  finishAnswers(edge, services.limits)
  requestLoggersOnFirstUse(app)
  app.decorate('fastbase', sealed(services))
  const prefix = opts.prefix ?? '/api/v1'
  for (const step of pipeline) await step(app, prefix)
  const { metrics, config } = services
  if (metrics !== undefined && config.metrics !== undefined) await app.register(metricsRoutes, { metrics, settings: config.metrics })
  // Everything under the prefix in one scope, so CORS (when origins are listed) covers it all.
  await app.register(async (scope) => {
    await scope.register(corsPlugin, { origins: services.options.origins })
    // Who the caller is, after CORS's hook (plugins/auth-context.ts).
    await scope.register(authContextPlugin)
    // GET and POST <prefix>/realtime, unless realtime is off.
    if (services.realtime !== undefined) await scope.register(realtimeRoutes)
    await scope.register(api)
  }, { prefix })
  if (opts.panelPrefix !== false) await app.register(panelRoutes, { path: opts.panelPrefix ?? '/panel', apiPrefix: prefix })
  if (services.options.bundledExample === true) await app.register(examplePage)
  return app.fastbase
}

/** The kernel's services with the functions that know requests, frozen: `app.fastbase`. */
function sealed (services: Readonly<KernelServices>): Fastbase {
  const callerFrom = callerResolver(services)
  const host = hostAuthentication(callerFrom, services.callers, new Set(services.auth.tables.keys()))
  // The declared type narrows the in-process API, the hooks and runAction per table and action (plugins/types.ts); the values are the kernel's.
  return Object.freeze({ ...services, callerFrom, authenticate: host.authenticate, callerOf: host.callerOf, fileHooks: fileHooksOf(services) }) as unknown as Fastbase
}

/**
 * The API under its prefix: bodies up to `limits.bodySize` (decision D38), an empty JSON body read
 * as `{}` (decision D36), the standard 404 body for unknown API paths (per-request log lines are
 * off by default, see `options`; slow answers are logged by plugins/server-log.ts or `AnswerLog`).
 */
async function api (scope: FastifyInstance): Promise<void> {
  scope.addHook('onRoute', (route) => { route.bodyLimit ??= scope.fastbase.limits.bodySize })
  lenientJsonBodies(scope)
  routeNotFound(scope)
  // Each group in a scope of its own (their body parsers and hooks differ).
  for (const routes of [healthRoutes, tableRoutes, authRoutes, actionRoutes, fileRoutes, adminRoutes, backupRoutes]) await scope.register(routes as FastifyPluginAsync)
}

export default fp(fastbase, { fastify: '5.x', name: 'fastbase' })

/**
 * FASTBASE_TRUST_PROXY: unset = trust no proxy (a client could otherwise fake X-Forwarded-For and
 * dodge rate limits); `true`, or a comma-separated list of proxy addresses / CIDR ranges.
 */
function trustProxy (value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === 'false') return false
  return value === 'true' ? true : value
}

/**
 * Server options for `fastify start --options` (fastify-cli reads this export and passes it to the
 * plugin as its options too: `standalone` gives the whole server fastbase's 404 and request ids, and
 * the OWN_SERVER mark tells the plugin it is the server, plugins/standalone.ts; Fastify ignores both).
 */
export const options: FastifyHttpOptions<RawServerDefault> & Pick<FastbaseOptions, 'standalone'> & { [OWN_SERVER]: true } = {
  standalone: true,
  [OWN_SERVER]: true,
  trustProxy: trustProxy(process.env.FASTBASE_TRUST_PROXY),
  // Request ids tie 5xx logs to responses (`x-request-id`): a proxy's is kept when well-formed
  // (lib/request-id.ts), anything else gets a random UUID. Every line of the request names it as `reqId`.
  requestIdHeader: false,
  genReqId: rawRequestId,
  // Node's server makes each request with the fields the slow-answer log reads (decision D145).
  http: { IncomingMessage: ArrivingRequest },
  // Two log lines per request cost more than many a request itself, and a logger alone costs every
  // request its listeners (decision D142): none unless FASTBASE_LOG_REQUESTS=true, and the plugin
  // gives the server its own log (plugins/server-log.ts). Errors, 5xx and slow requests
  // (FASTBASE_SLOW_REQUEST_MS) are logged either way, with the request id. Caller text is never
  // logged (a query string holds filters, e-mail addresses, tokens): requests by method and path.
  logger: process.env.FASTBASE_LOG_REQUESTS === 'true' && {
    serializers: {
      req: (request: { method: string, url: string }) => ({ method: request.method, url: request.url.split('?')[0] })
    }
  },
  logController: new AnswerLog({ disableRequestLogging: process.env.FASTBASE_LOG_REQUESTS !== 'true' }),
  // Start-up applies the safe migration steps, and one may rewrite a large table (a search index made
  // anew, decision D71) for longer than Fastify's 10 s: a start that timed out would roll it back and
  // never get further. The start waits for it instead (a host sets its own pluginTimeout).
  pluginTimeout: 0,
  // Ids and file names in paths are checked by their routes (255 characters); the router's own cap sits above that.
  routerOptions: { maxParamLength: 1024 },
  // Errors the router raises before any route runs (a malformed or too long path) get the standard body too.
  frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400
    sendError(reply, errors.clientError(status, error.message))
  }
}
