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

/**
 * A sign-in of a user whose second factor (TOTP) is on: the first factor was right, but there is no
 * session until `fb.auth.verifyMfa({ challenge, code })` (decision D129). Thrown rather than answered,
 * so code that knows nothing of MFA fails loudly instead of going on as if signed in.
 */
export class FastbaseMfaRequired extends FastbaseError {
  /** Single use, for verifyMfa. */
  readonly challenge: string
  /** Seconds the challenge lives (unknown, 0, when it came from an OAuth redirect's address). */
  readonly expiresIn: number
  /** What verifyMfa accepts: `totp` (a code), `recovery_code`. */
  readonly methods: string[]

  constructor (challenge: string, expiresIn = 0, methods: string[] = ['totp', 'recovery_code']) {
    super(401, 'FB_ERR_MFA_REQUIRED', 'A second factor is required: complete the sign-in with verifyMfa')
    this.name = 'FastbaseMfaRequired'
    this.challenge = challenge
    this.expiresIn = expiresIn
    this.methods = methods
  }
}
