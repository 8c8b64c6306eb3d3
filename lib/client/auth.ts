// fb.auth: the sign-in flows of one auth table (docs/auth.md, docs/oauth.md), keeping what they
// answer in the session.
import type { Core } from './core.js'
import type { AuthState, SessionData } from './session.js'
import { FastbaseError, FastbaseMfaRequired } from './error.js'
import { Mfa } from './mfa.js'

/** A sign-in's answer: the session, or (a second factor being on) FastbaseMfaRequired with its challenge. */
function sessionOf (body: unknown): SessionData {
  if (typeof body === 'object' && body !== null && 'mfa_required' in body && body.mfa_required === true && 'challenge' in body && typeof body.challenge === 'string') {
    const methods = 'methods' in body && Array.isArray(body.methods) ? body.methods.map(String) : undefined
    throw new FastbaseMfaRequired(body.challenge, 'expires_in' in body && typeof body.expires_in === 'number' ? body.expires_in : 0, methods)
  }
  if (typeof body === 'object' && body !== null && 'token' in body && typeof body.token === 'string' &&
      'refresh_token' in body && typeof body.refresh_token === 'string' && 'record' in body && typeof body.record === 'object' && body.record !== null) {
    return { token: body.token, refresh_token: body.refresh_token, record: { ...body.record } }
  }
  throw new FastbaseError(0, 'FB_ERR_BAD_ANSWER', 'The server did not answer a session')
}

export interface PasswordChange { password: string, passwordConfirm?: string, passwordCurrent: string }
export interface PasswordReset { token: string, password: string, passwordConfirm?: string }
/** The emailed code with its address, or the token of the emailed link. */
export type OtpProof = { email: string, code: string } | { token: string }
/** A challenge with a current TOTP code, or with an unused recovery code. */
export type MfaProof = { challenge: string, code: string } | { challenge: string, recoveryCode: string }

export class Auth {
  /** The signed-in user's TOTP second factor: enroll, confirm, disable. */
  readonly mfa: Mfa

  constructor (private readonly core: Core, readonly table: string) {
    this.mfa = new Mfa(core, (route) => this.path(route))
  }

  private path (route: string): string {
    return `/table/${encodeURIComponent(this.table)}/auth/${route}`
  }

  private async signIn (route: string, json: unknown): Promise<Record<string, unknown>> {
    const session = sessionOf(await this.core.call('POST', this.path(route), { json, auth: false }))
    await this.core.session.set(session)
    return session.record
  }

  /** The signed-in user's record (as the sign-in answered it), or null. */
  get user (): Record<string, unknown> | null { return this.core.session.user }
  /** The access token, or null (and in cookie mode after a reload: the cookie is the script's to never see). */
  get token (): string | null { return this.core.session.token }
  /** Called with `{ user, token }` on every sign-in, refresh and sign-out; returns the unsubscribe. */
  onChange (listener: (state: AuthState) => void): () => void { return this.core.session.onChange(listener) }
  /** Waits for the stored session to be read (needed only to read `user` at once with an async store). */
  async ready (): Promise<void> { await this.core.session.ready() }

  async signUp (fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    return await this.signIn('sign-up', fields)
  }

  async login (credentials: { identity: string, password: string }): Promise<Record<string, unknown>> {
    return await this.signIn('login-password', credentials)
  }

  /**
   * The OAuth start URL of `provider`; in a browser it goes there (`navigate: false` only returns it).
   * The server's callback sets the auth cookie and sends the browser to `redirect` (docs/oauth.md).
   */
  loginWith (provider: string, options: { redirect?: string, navigate?: boolean } = {}): string {
    const url = this.core.url(this.path(`oauth/${encodeURIComponent(provider)}`), { redirect: options.redirect })
    if (options.navigate !== false && typeof location !== 'undefined') location.assign(url)
    return url
  }

  /** Emails a sign-in code and link (always succeeds: whether the account exists is never said). */
  async requestOtp (request: { email: string }): Promise<void> {
    await this.core.call('POST', this.path('request-otp'), { json: { email: request.email }, auth: false })
  }

  /** Signs in with the emailed code (`{ email, code }`) or the link's token (`{ token }`). */
  async loginWithOtp (proof: OtpProof): Promise<Record<string, unknown>> {
    return await this.signIn('login-otp', 'token' in proof ? { token: proof.token } : { email: proof.email, code: proof.code })
  }

  /**
   * Completes a sign-in that threw FastbaseMfaRequired: sets the session (and, where configured, the
   * server sets the auth cookie). A wrong code is a FastbaseError `FB_ERR_MFA_INVALID`.
   */
  async verifyMfa (proof: MfaProof): Promise<Record<string, unknown>> {
    return await this.signIn('mfa/verify', 'code' in proof ? { challenge: proof.challenge, code: proof.code } : { challenge: proof.challenge, recoveryCode: proof.recoveryCode })
  }

  /**
   * On the page `loginWith`'s `redirect` leads back to (default: this page's address): throws
   * FastbaseMfaRequired when the callback asks for the second factor (`mfa_challenge`), a
   * FastbaseError when the sign-in was refused (`error`, `error_description`); otherwise the callback
   * set the auth cookie and there is nothing to do.
   */
  async finishRedirect (url: string = typeof location === 'undefined' ? '' : location.href): Promise<void> {
    const params = new URL(url, 'http://localhost').searchParams
    const challenge = params.get('mfa_challenge')
    if (challenge !== null && challenge !== '') throw new FastbaseMfaRequired(challenge)
    const error = params.get('error')
    // `error` is the provider's code (access_denied) or login_failed: kept in data, the code is the stable one.
    if (error !== null) throw new FastbaseError(400, 'FB_ERR_OAUTH_FAILED', params.get('error_description') ?? 'The sign-in was refused', { error })
  }

  /** One-tap: exchanges a provider's ID token (Google's `credential`) for a session. */
  async oneTap (credential: string, options: { provider?: string } = {}): Promise<Record<string, unknown>> {
    return await this.signIn(`${encodeURIComponent(options.provider ?? 'google')}-login`, { token: credential })
  }

  /** Renews the session now (it is renewed on its own before it expires). Null: signed out. */
  async refresh (): Promise<Record<string, unknown> | null> {
    return (await this.core.session.refresh())?.record ?? null
  }

  /**
   * Ends the session on the server (and clears the auth cookie) and here; the realtime streams opened
   * while signed in end. A session the server already ended is signed out all the same.
   */
  async logout (): Promise<void> {
    const token = await this.core.session.fresh().catch(() => this.core.session.token)
    try {
      if (token !== null || this.core.cookies) await this.core.call('POST', this.path('logout'), token === null ? { auth: false } : { token })
    } catch (error) {
      if (!(error instanceof FastbaseError && error.status === 401)) throw error
    } finally {
      await this.core.session.set(null)
    }
  }

  /** The user's other sessions end on the server; this one stays. */
  async changePassword (change: PasswordChange): Promise<void> {
    await this.core.call('POST', this.path('change-password'), { json: { passwordConfirm: change.password, ...change } })
  }

  /** Always succeeds (no account enumeration); the email carries a token for confirmPasswordReset. */
  async requestPasswordReset (email: string): Promise<void> {
    await this.core.call('POST', this.path('request-password-reset'), { json: { email }, auth: false })
  }

  /** Sets the password and signs in (every other session ends). */
  async confirmPasswordReset (reset: PasswordReset): Promise<Record<string, unknown>> {
    return await this.signIn('confirm-password-reset', { passwordConfirm: reset.password, ...reset })
  }

  async requestVerification (): Promise<void> {
    await this.core.call('POST', this.path('request-verification'), { json: {} })
  }

  /** Verifies the email; signed in, the user record is updated, otherwise the answer signs in. */
  async confirmVerification (token: string): Promise<Record<string, unknown>> {
    const session = this.core.session
    const body = await this.core.call('POST', this.path('confirm-verification'), { json: { token } })
    if (typeof body === 'object' && body !== null && ('token' in body || 'mfa_required' in body)) {
      await session.set(sessionOf(body))
    } else if (typeof body === 'object' && body !== null && 'record' in body && typeof body.record === 'object' && body.record !== null) {
      await session.update({ ...body.record })
    }
    return session.user ?? {}
  }
}
