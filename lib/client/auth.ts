// fb.auth: the sign-in flows of one auth table (docs/auth.md, docs/oauth.md), keeping what they
// answer in the session.
import type { Core } from './core.js'
import type { AuthState, SessionData } from './session.js'
import { FastbaseError } from './error.js'

function sessionOf (body: unknown): SessionData {
  if (typeof body === 'object' && body !== null && 'token' in body && typeof body.token === 'string' &&
      'refresh_token' in body && typeof body.refresh_token === 'string' && 'record' in body && typeof body.record === 'object' && body.record !== null) {
    return { token: body.token, refresh_token: body.refresh_token, record: { ...body.record } }
  }
  throw new FastbaseError(0, 'FB_ERR_BAD_ANSWER', 'The server did not answer a session')
}

export interface PasswordChange { password: string, passwordConfirm?: string, passwordCurrent: string }
export interface PasswordReset { token: string, password: string, passwordConfirm?: string }

export class Auth {
  constructor (private readonly core: Core, readonly table: string) {}

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
    if (typeof body === 'object' && body !== null && 'token' in body) {
      await session.set(sessionOf(body))
    } else if (typeof body === 'object' && body !== null && 'record' in body && typeof body.record === 'object' && body.record !== null) {
      await session.update({ ...body.record })
    }
    return session.user ?? {}
  }
}
