// The signed-in session: kept in a pluggable store, refreshed shortly before the access token
// expires and once after a 401, every caller waiting on the same refresh (a refresh token works
// once: two refreshes at once would revoke the session, docs/auth.md).
import { FastbaseError } from './error.js'

export interface SessionData {
  token: string
  refresh_token: string
  record: Record<string, unknown>
}

/** Where the session is kept. May answer synchronously or with a promise (React Native's AsyncStorage). */
export interface SessionStore {
  get: () => SessionData | null | Promise<SessionData | null>
  set: (session: SessionData | null) => void | Promise<void>
}

export function memoryStore (): SessionStore {
  let session: SessionData | null = null
  return { get: () => session, set: (value) => { session = value } }
}

function isSession (value: unknown): value is SessionData {
  return typeof value === 'object' && value !== null && 'token' in value && typeof value.token === 'string' &&
    'refresh_token' in value && typeof value.refresh_token === 'string' && 'record' in value && typeof value.record === 'object'
}

/** The browser's localStorage under `key` (survives reloads; every script of the origin can read it). */
export function localStorageStore (key: string): SessionStore {
  return {
    get: () => {
      try {
        const value: unknown = JSON.parse(globalThis.localStorage.getItem(key) ?? 'null')
        return isSession(value) ? value : null
      } catch {
        return null
      }
    },
    set: (value) => {
      if (value === null) globalThis.localStorage.removeItem(key)
      else globalThis.localStorage.setItem(key, JSON.stringify(value))
    }
  }
}

/** A number claim of a JWT (`exp`, `iat`: seconds since the epoch), or undefined when it cannot be read. */
export function claimOf (token: string, name: 'exp' | 'iat'): number | undefined {
  try {
    const payload = (token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')
    const claims: unknown = JSON.parse(atob(payload.padEnd(Math.ceil(payload.length / 4) * 4, '=')))
    if (typeof claims !== 'object' || claims === null || !(name in claims)) return undefined
    const value: unknown = Object.getOwnPropertyDescriptor(claims, name)?.value
    return typeof value === 'number' ? value : undefined
  } catch {
    return undefined
  }
}

/** How a session is renewed: POST refresh-token with the refresh token (the old access token along). */
export type Renew = (session: SessionData) => Promise<SessionData>

export interface AuthState { user: Record<string, unknown> | null, token: string | null }

export class Session {
  private data: SessionData | null = null
  private loaded: Promise<void> | undefined
  private refreshing: Promise<SessionData | null> | undefined
  private readonly listeners = new Set<(state: AuthState) => void>()
  constructor (private readonly store: SessionStore, private readonly renew: Renew) {}

  get user (): Record<string, unknown> | null { return this.data?.record ?? null }
  get token (): string | null { return this.data?.token ?? null }

  /** Reads the store once (the first call of anything that needs the session). */
  async ready (): Promise<void> {
    this.loaded ??= (async () => { this.data = (await this.store.get()) ?? null })()
    await this.loaded
  }

  onChange (listener: (state: AuthState) => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  async set (data: SessionData | null): Promise<void> {
    await this.ready()
    this.data = data
    await this.store.set(data)
    const state = { user: this.user, token: this.token }
    for (const listener of [...this.listeners]) listener(state)
  }

  /** A new record of the signed-in user (same tokens). */
  async update (record: Record<string, unknown>): Promise<void> {
    await this.ready()
    if (this.data !== null) await this.set({ ...this.data, record })
  }

  /** The access token to send: refreshed first when it expires within a minute (or a quarter of its life). */
  async fresh (): Promise<string | null> {
    await this.ready()
    const data = this.data
    if (data === null) return null
    const exp = claimOf(data.token, 'exp')
    if (exp === undefined) return data.token
    // A minute before, or a quarter of the token's life for short ones (a 60 s token at 15 s left).
    const life = exp - (claimOf(data.token, 'iat') ?? 0)
    if (exp * 1000 - Date.now() > Math.min(60, life / 4) * 1000) return data.token
    const renewed = await this.refresh(data.token)
    // The session ended (its refresh was refused): the call fails as the server would have answered
    // it, rather than going out anonymously as if nobody had been signed in.
    if (renewed === null) throw new FastbaseError(401, 'FB_ERR_INVALID_TOKEN', 'The session ended: sign in again')
    return renewed.token
  }

  /**
   * Renews the session whose access token is `stale` (the one a call used): callers at the same time
   * share one refresh, and a call that used a token already replaced gets the new one without
   * another refresh. A refused refresh ends the session; a network failure keeps it.
   */
  async refresh (stale?: string): Promise<SessionData | null> {
    await this.ready()
    if (this.refreshing !== undefined) return await this.refreshing
    const data = this.data
    if (data === null) return null
    if (stale !== undefined && data.token !== stale) return data
    this.refreshing = (async () => {
      try {
        const renewed = await this.renew(data)
        await this.set(renewed)
        return renewed
      } catch (error) {
        if (typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
          await this.set(null)
          return null
        }
        throw error
      } finally {
        this.refreshing = undefined
      }
    })()
    return await this.refreshing
  }
}
