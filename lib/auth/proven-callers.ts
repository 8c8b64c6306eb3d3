// The callers an instance's `authenticate` proved for a host's requests (plugins/host-auth.ts). Each
// instance keeps its own, so with two instances in one host a request authenticated by one is never
// taken as a caller of the other; the in-process API reads them for `as: request`.
import type { AuthContext } from '../auth-context.js'

export class ProvenCallers {
  private readonly callers = new WeakMap<object, AuthContext>()

  remember (request: object, caller: AuthContext): void {
    this.callers.set(request, caller)
  }

  /** The caller proved for `request`; an Error (a bug in the host) where `authenticate` did not run. */
  of (request: object): AuthContext {
    const caller = this.callers.get(request)
    if (caller === undefined) throw new Error('fastbase: this request was not authenticated by this instance: add its authenticate() as a preHandler of the route')
    return caller
  }
}
