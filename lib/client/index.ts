// `import { createClient } from 'fastbase/client'`: the API of a fastbase server from browsers, Node,
// Deno, Bun and React Native. Plain ESM on fetch (and XMLHttpRequest for upload progress where it
// exists), no dependency and no Node built-in (test/lib/client/client-module.test.ts checks the built graph).
import { Auth } from './auth.js'
import { Core } from './core.js'
import { errorOf } from './error.js'
import type { Fetch } from './http.js'
import { Session, localStorageStore, memoryStore, type SessionStore } from './session.js'
import { Table } from './table.js'
import type { ActionName, Params, TableName } from './types.js'

export { FastbaseError, FastbaseMfaRequired } from './error.js'
export { memoryStore, localStorageStore } from './session.js'
export type { SessionData, SessionStore, AuthState } from './session.js'
export type { ClientTables, ClientActions, Row, Insert, Update, Params } from './types.js'
export type { RealtimeEvent, SubscribeOptions } from './realtime.js'
export type { FileInput } from './multipart.js'
export type { Progress } from './http.js'
export type { Table, ListParams, SelectParams } from './table.js'
export type { Auth, OtpProof, MfaProof } from './auth.js'
export type { Mfa, MfaDisableProof, TotpEnrollment } from './mfa.js'

export interface ClientOptions {
  /** The API's prefix (default `/api/v1`). */
  prefix?: string
  /**
   * Where the session is kept: 'local' (localStorage; the default where it exists), 'memory' (the
   * default elsewhere), 'cookie' (the server's HttpOnly auth cookie, sent with every call, also to
   * another origin; a sign-in's tokens are held in memory only), or your own SessionStore.
   */
  session?: 'local' | 'memory' | 'cookie' | SessionStore
  /** The auth table the sign-ins use (default `users`). */
  authTable?: string
  /** The localStorage key (default `fastbase-session:<url>`). */
  storageKey?: string
  /** Another fetch (React Native: one whose responses stream, such as expo/fetch's). */
  fetch?: Fetch
}

export interface Client {
  auth: Auth
  table: <N extends TableName>(name: N) => Table<N>
  /** Runs a config action: one array of rows per query or step. */
  action: <N extends ActionName>(name: N, ...params: Record<string, never> extends Params<N> ? [Params<N>?] : [Params<N>]) => Promise<unknown[][]>
  /**
   * Any other route under the prefix (admin, backups...), with the session (or `token`): its JSON answer,
   * or a FastbaseError. `form`: a multipart body built by the caller.
   */
  request: (method: 'GET' | 'POST' | 'DELETE', path: string, options?: { query?: Record<string, unknown>, json?: unknown, form?: FormData, token?: string }) => Promise<unknown>
  files: {
    /** The download URL of a file (`name`: the value of the record's file field). */
    url: (table: TableName, id: string, name: string) => string
    /** The file as a Blob, fetched with the session (an `<img src>` cannot send the token). */
    get: (table: TableName, id: string, name: string) => Promise<Blob>
  }
}

function storeOf (session: ClientOptions['session'], key: string): SessionStore {
  if (typeof session === 'object') return session
  const hasLocal = typeof globalThis.localStorage !== 'undefined'
  if (session === 'local' || (session === undefined && hasLocal)) return localStorageStore(key)
  return memoryStore()
}

export function createClient (url: string, options: ClientOptions = {}): Client {
  const base = `${url.replace(/\/+$/, '')}${(options.prefix ?? '/api/v1').replace(/\/+$/, '')}`
  const authTable = options.authTable ?? 'users'
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis)
  let core: Core | undefined
  const session = new Session(storeOf(options.session, options.storageKey ?? `fastbase-session:${base}`), async (data) => {
    // Without the old access token: after a 401 it is one the server refuses (it would refuse the refresh too).
    // The session calls this only once the client below exists; never before.
    if (core === undefined) throw new Error('fastbase client: refreshed before it was made')
    return await core.call('POST', `/table/${encodeURIComponent(authTable)}/auth/refresh-token`, { json: { refresh_token: data.refresh_token }, auth: false })
  })
  core = new Core(base, fetchFn, session, options.session === 'cookie')
  const ready = core
  const fileUrl = (table: string, id: string, name: string): string =>
    ready.url(`/files/${[table, id, name].map(encodeURIComponent).join('/')}`)
  return {
    auth: new Auth(ready, authTable),
    table: (name) => new Table(ready, name),
    request: async (method, path, options = {}) => await ready.call(method, path, {
      query: options.query, json: options.json, multipart: options.form === undefined ? undefined : { body: options.form }, token: options.token
    }),
    action: async (name, ...params) => await ready.call('POST', `/action/${encodeURIComponent(name)}`, { json: params[0] ?? {} }),
    files: {
      url: fileUrl,
      get: async (table, id, name) => {
        const token = await session.fresh()
        const response = await fetchFn(fileUrl(table, id, name), { headers: ready.headers(token), credentials: ready.credentials })
        if (!response.ok) throw errorOf(response.status, response.headers.get('fastbase-error-code'), await response.json().catch(() => undefined))
        return await response.blob()
      }
    }
  }
}
