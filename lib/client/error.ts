// The client's one error: every refusal of the API (its status, the stable code from the
// `Fastbase-Error-Code` header, its message and data) and a server that did not answer (status 0).

export class FastbaseError extends Error {
  readonly status: number
  /** The stable code (`FB_ERR_*`, docs/errors.md); `FB_ERR_NETWORK` when the server did not answer. */
  readonly code: string
  readonly data: Record<string, unknown>

  constructor (status: number, code: string, message: string, data: Record<string, unknown> = {}) {
    super(message)
    this.name = 'FastbaseError'
    this.status = status
    this.code = code
    this.data = data
  }
}

/** The error of an answer that is not ok: its body is `{ code: <status>, message, data }`. */
export function errorOf (status: number, code: string | null, body: unknown): FastbaseError {
  const parsed = typeof body === 'object' && body !== null ? body : {}
  const message = 'message' in parsed && typeof parsed.message === 'string' ? parsed.message : `HTTP ${status}`
  const data = 'data' in parsed && typeof parsed.data === 'object' && parsed.data !== null ? { ...parsed.data } : {}
  return new FastbaseError(status, code ?? `HTTP_${status}`, message, data)
}
