// The log of fastbase's own server (decision D142). With a logger, Fastify gives every request a
// child logger and two response listeners, and times it, whatever the request logs: a twentieth of
// a small write's CPU. So unless every request is to be logged (FASTBASE_LOG_REQUESTS=true), the
// server runs without one (app.ts#options) and this gives it fastbase's own: pino at the level and
// format fastify-cli was given (`-l`/FASTIFY_LOG_LEVEL, `-P`/FASTIFY_PRETTY_LOGS, `-L`), set as the
// server's `log` before anything logs (start-up, `Server listening at`, shutdown, fastbase's errors
// with their request id: `requestLog`). Answers slower than FASTBASE_SLOW_REQUEST_MS are timed from
// the arrival their request notes (lib/request-id.ts#ArrivingRequest) to Node's own event of the
// answer's end, instead of by Fastify's listeners.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import { pino, stdSerializers, type LoggerOptions } from 'pino'
import { ArrivingRequest } from '../lib/request-id.js'

/** The servers given their own log: Fastify has no logger there, and a request logs through its server's own. */
const ownLogged = new WeakSet<Server>()

/** fastify-cli's reading of its arguments and FASTIFY_* variables (the logging part). */
interface CliLogArgs { logLevel: string, prettyLogs: boolean, loggingModule?: string }

/**
 * Gives `host`, the server fastbase was started as (app.ts#options, without a logger), its own log,
 * and times its answers (`slowMs`, 0: not timed). A server that has a logger keeps it.
 */
export function ownServerLog (host: FastifyInstance, slowMs: number): void {
  if (host.log.child({}) !== host.log) return
  ownLogged.add(host.server)
  const log = pino(loggerOptions(cliLogArgs()))
  host.log = log
  if (slowMs > 0) watchSlowAnswers(host, log, slowMs)
}

/** Whether `app`'s server runs without a Fastify logger and logs through its own (its requests' loggers are Fastify's silent one). */
export function logsOnItsOwn (app: FastifyInstance): boolean {
  return ownLogged.has(app.server)
}

/** `request`'s logger: Fastify's, or on a server with fastbase's own log, a child of it bound to the request id. */
export function requestLog (request: FastifyRequest): FastifyBaseLogger {
  return logsOnItsOwn(request.server) ? request.server.log.child({ reqId: request.id }) : request.log
}

function cliLogArgs (): CliLogArgs {
  // fastify-cli's own parser, so `fastify start` and `npm start` read the same arguments the same way.
  const parse: (argv: string[]) => CliLogArgs = createRequire(import.meta.url)('fastify-cli/args.js')
  return parse(process.argv.slice(2))
}

function loggerOptions ({ logLevel, prettyLogs, loggingModule }: CliLogArgs): LoggerOptions {
  // A logging module gives pino's options itself, as it does to Fastify under fastify-cli.
  const base: LoggerOptions = loggingModule === undefined ? { level: logLevel } : moduleOptions(loggingModule)
  return {
    ...base,
    serializers: { err: stdSerializers.err, ...base.serializers },
    ...(prettyLogs ? { transport: { target: 'pino-pretty' } } : {})
  }
}

function moduleOptions (path: string): LoggerOptions {
  const loaded: LoggerOptions & { default?: LoggerOptions } = createRequire(`${process.cwd()}/`)(path)
  return loaded.default ?? loaded
}

interface HttpEvent { request: IncomingMessage, response: ServerResponse, server: Server }

/** Whether `message` is an event of Node's http.server.* channels about `server`. */
function ofServer (message: unknown, server: Server): message is HttpEvent {
  return typeof message === 'object' && message !== null && 'server' in message && message.server === server
}

/**
 * Logs each answer of `host`'s server that took longer than `slowMs`, with its request id, method,
 * path (never the query string: it may hold filters, addresses, tokens), status and time. Node
 * publishes the event to subscribers only: the cost is one event as each answer ends.
 */
function watchSlowAnswers (host: FastifyInstance, log: FastifyBaseLogger, slowMs: number): void {
  const finished = (message: unknown): void => {
    if (!ofServer(message, host.server)) return
    const { request, response } = message
    // Every request of fastbase's own server is one (app.ts#options).
    if (!(request instanceof ArrivingRequest)) return
    const ms = performance.now() - request.arrivedAt
    if (ms <= slowMs) return
    const path = (request.url ?? '').split('?')[0]
    log.warn({ reqId: request.requestId, method: request.method, path, statusCode: response.statusCode, ms: Math.round(ms) }, 'slow request')
  }
  subscribe(FINISHED, finished)
  host.addHook('onClose', (_instance, done) => {
    unsubscribe(FINISHED, finished)
    done()
  })
}

const FINISHED = 'http.server.response.finish'
