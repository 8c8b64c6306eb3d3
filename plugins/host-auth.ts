// fastbase's authentication for a host's own routes: `app.fastbase.authenticate({ require })` is a
// preHandler that reads the same credentials as fastbase's routes (bearer token, the auth cookie with
// its origin check, the service token) and refuses in fastbase's error body; `app.fastbase.callerOf`
// gives the caller it proved. Each instance remembers its own callers, so with two instances in one
// host a request authenticated by one is never taken as a caller of the other (whose tables, rules
// and uids are another matter).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthContext } from '../lib/auth-context.js'
import { errors, FastbaseError } from '../lib/errors.js'
import type { ProvenCallers } from '../lib/auth/proven-callers.js'
import { sendError } from './errors.js'

export interface AuthenticateOptions {
  /**
   * `any` (default): anonymous callers pass, as `ANONYMOUS`. `user`: a signed-in caller, a user or an
   * admin (as an action's `requireAuth`). `admin`: the service token or an admin token.
   * Anonymous where more is required is 401; a caller who is not enough is 403.
   */
  require?: 'any' | 'user' | 'admin'
  /** With `require: 'user'`: only users of this auth table (and admins) pass. */
  table?: string
}

export type AuthenticateHook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

export interface HostAuthentication {
  authenticate: (options?: AuthenticateOptions) => AuthenticateHook
  /** The caller `authenticate` proved for this request; an Error (a bug in the host) where it did not run. */
  callerOf: (request: FastifyRequest) => AuthContext
}

/** Refuses `caller` for a route that requires `options` (401 anonymous, 403 not enough). */
export function checkRequirement (caller: AuthContext, options: AuthenticateOptions): void {
  const required = options.require ?? 'any'
  if (required === 'any') return
  if (caller.uid === null) throw errors.unauthorized()
  if (required === 'admin' && !caller.admin) throw errors.forbidden('Admins only')
  if (required === 'user' && options.table !== undefined && !caller.admin && caller.cid !== options.table) throw errors.forbidden(`Users of ${options.table} only`)
}

export function hostAuthentication (callerFrom: (request: FastifyRequest) => AuthContext | Promise<AuthContext>, callers: ProvenCallers, authTables: ReadonlySet<string>): HostAuthentication {
  return {
    authenticate (options = {}) {
      // A typo in a table name would refuse every user: said at start-up, not per request.
      if (options.table !== undefined && !authTables.has(options.table)) throw new Error(`fastbase authenticate: "${options.table}" is not an auth table`)
      if (options.require !== undefined && !['any', 'user', 'admin'].includes(options.require)) throw new Error(`fastbase authenticate: require must be 'any', 'user' or 'admin' (got ${String(options.require)})`)
      return async (request, reply) => {
        try {
          const caller = await callerFrom(request)
          checkRequirement(caller, options)
          callers.remember(request, caller)
          request.fastbaseAuth = caller
        } catch (error) {
          if (!(error instanceof FastbaseError)) throw error
          sendError(reply, error)
          // Returning the reply tells Fastify the hook answered: the handler does not run.
          return reply
        }
      }
    },
    callerOf: (request) => callers.of(request)
  }
}
