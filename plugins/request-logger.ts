// Fastify gives every request a child of the server's logger bound to its request id, made before any
// route code runs: with pino, an object of its own whose bindings are serialized to JSON at once. Yet
// nearly every answer logs nothing (per-request lines are off unless FASTBASE_LOG_REQUESTS=true; errors,
// 5xx and slow answers log). Here the child is made on the first line its request logs: a request that
// logs nothing makes one small object instead (decision D133). The lines themselves are pino's, with
// the same bindings, level and serializers.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { logsOnItsOwn } from './server-log.js'

type Bindings = Record<string, unknown>
type Options = Parameters<FastifyBaseLogger['child']>[1]
type Line = [objOrMessage: unknown, message?: string, ...args: unknown[]]
type Logger = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean, bindings?: () => Bindings, flush?: (cb?: (error?: Error) => void) => void }

/** A request's logger: pino's child of `parent`, made when first used. */
class RequestLogger implements FastifyBaseLogger {
  private made: Logger | undefined

  constructor (private readonly parent: FastifyBaseLogger, private readonly bound: Bindings, private readonly options: Options) {}

  private get logger (): Logger {
    return this.made ??= this.parent.child(this.bound, this.options)
  }

  get level (): string { return this.logger.level }
  set level (level: string) { this.logger.level = level }
  fatal (...line: Line): void { this.logger.fatal(...line) }
  error (...line: Line): void { this.logger.error(...line) }
  warn (...line: Line): void { this.logger.warn(...line) }
  info (...line: Line): void { this.logger.info(...line) }
  debug (...line: Line): void { this.logger.debug(...line) }
  trace (...line: Line): void { this.logger.trace(...line) }
  silent (..._line: Line): void {}
  child (bindings: Bindings, options?: Options): FastifyBaseLogger { return this.logger.child(bindings, options) }
  // pino's own, for code that reads a request's logger as pino's.
  isLevelEnabled (level: string): boolean { return this.logger.isLevelEnabled?.(level) ?? true }
  bindings (): Bindings { return this.logger.bindings?.() ?? { ...this.bound } }
  flush (cb?: (error?: Error) => void): void { if (this.logger.flush !== undefined) this.logger.flush(cb); else cb?.() }
}

/**
 * Requests of `app`'s routes (those registered after this) get their logger made on first use. Not
 * where the server has no Fastify logger (it logs nothing, or through its own: plugins/server-log.ts):
 * Fastify then gives every request its silent logger itself, cheaper still.
 */
export function requestLoggersOnFirstUse (app: FastifyInstance): void {
  if (app.log.child({}) === app.log || logsOnItsOwn(app)) return
  app.setChildLoggerFactory((logger, bindings, options) => new RequestLogger(logger, bindings, options))
}
