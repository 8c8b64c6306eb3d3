// What every call of the client shares: the API's base URL, the fetch to use, the session, and the
// retry after a 401 (the session refreshed once, the call sent again).
import { bodyOf, send, urlOf, type Answer, type Call, type Fetch, type Json, type Progress } from './http.js'
import type { Session } from './session.js'

export interface CallOptions {
  query?: Record<string, unknown>
  json?: unknown
  /** A multipart body (multipart.ts); a stream one cannot be sent twice, so it is not retried. */
  multipart?: { body: FormData | ReadableStream<Uint8Array>, contentType?: string }
  /** false: sent without the session's token, and not retried after a 401 (sign-ins, refresh). */
  auth?: boolean
  /** This token rather than the session's (logout of the token the session had). */
  token?: string
  onProgress?: (progress: Progress) => void
}

export class Core {
  constructor (
    /** The API's URL with its prefix (`https://api.example.com/api/v1`). */
    readonly base: string,
    readonly fetch: Fetch,
    readonly session: Session,
    /** Cookie mode: requests carry the browser's cookies, also to another origin (CORS with credentials). */
    readonly cookies: boolean
  ) {}

  get credentials (): RequestCredentials { return this.cookies ? 'include' : 'omit' }

  url (path: string, query?: Record<string, unknown>): string {
    return urlOf(this.base, path, query)
  }

  /** Headers of a call made with `token` (none: anonymous, or the cookie in cookie mode). */
  headers (token: string | null | undefined): Record<string, string> {
    return token === null || token === undefined ? {} : { authorization: `Bearer ${token}` }
  }

  async call (method: Call['method'], path: string, options: CallOptions = {}): Promise<Json> {
    const token = options.token ?? (options.auth === false ? null : await this.session.fresh())
    let answer = await this.once(method, path, options, token)
    if (answer.status === 401 && token !== null && options.auth !== false && !(options.multipart?.body instanceof ReadableStream)) {
      const renewed = await this.session.refresh(token)
      if (renewed !== null) answer = await this.once(method, path, options, renewed.token)
    }
    return bodyOf(answer)
  }

  private async once (method: Call['method'], path: string, options: CallOptions, token: string | null): Promise<Answer> {
    const headers = this.headers(token)
    let body: Call['body']
    if (options.multipart !== undefined) {
      body = options.multipart.body
      if (options.multipart.contentType !== undefined) headers['content-type'] = options.multipart.contentType
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] = 'application/json'
    }
    return await send(this.fetch, { method, url: this.url(path, options.query), headers, body, credentials: this.credentials, onProgress: options.onProgress })
  }
}
