// table.subscribe(): one realtime stream per subscription (GET /realtime?subscribe=<table>), read with
// fetch. It reconnects with backoff after a network failure, a stalled stream (no heartbeat), a
// server shutdown or an overflow; after missing changes (a reconnect, `gap`, `overflow`) it lists the
// rows again and hands them over (`refetch`); it ends when the user signs out or the session is revoked.
import type { Core } from './core.js'
import { FastbaseError, errorOf } from './error.js'
import { readEvents } from './sse.js'

export type RealtimeEvent<R> =
  | { type: 'open', clientId: string }
  | { type: 'change', action: 'insert' | 'update' | 'delete', record: R }
  | { type: 'refetch', reason: 'gap' | 'overflow' | 'reconnect', items: R[], total: number }
  /** The subscription is over: signed out (or the session revoked), or a refusal (`error`). */
  | { type: 'end', reason: 'signed-out' | 'error', error?: FastbaseError }

export interface SubscribeOptions {
  /** The subscription's filter (the expression language of `list`). */
  where?: string
  /** First and longest wait between reconnections, in ms (default 250 and 10,000). */
  backoff?: { min?: number, max?: number }
}

type Listed<R> = () => Promise<{ items: R[], total: number }>

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const field = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null ? Object.getOwnPropertyDescriptor(value, name)?.value : undefined

export function subscribe<R> (core: Core, table: string, options: SubscribeOptions, callback: (event: RealtimeEvent<R>) => void, list: Listed<R>): () => void {
  const min = options.backoff?.min ?? 250
  const max = options.backoff?.max ?? 10_000
  let stopped = false
  let attempt = 0
  let controller: AbortController | undefined
  let wake: (() => void) | undefined
  let missed: 'gap' | 'overflow' | 'reconnect' | undefined
  let openedAs: unknown

  const stop = (): void => {
    stopped = true
    offAuth()
    controller?.abort()
    wake?.()
  }
  const end = (reason: 'signed-out' | 'error', error?: FastbaseError): void => {
    if (stopped) return
    stop()
    callback({ type: 'end', reason, error })
  }
  // Signing out ends a stream opened signed in; another user signing in reopens it as them.
  const offAuth = core.session.onChange(({ user }) => {
    if (openedAs === undefined) return
    if (user === null) end('signed-out')
    else if (field(user, 'id') !== openedAs) controller?.abort()
  })
  const pause = async (): Promise<void> => {
    const ms = Math.min(max, min * 2 ** attempt++) * (0.75 + Math.random() / 2)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      wake = () => { clearTimeout(timer); resolve() }
    })
  }
  const refetch = (reason: 'gap' | 'overflow' | 'reconnect'): void => {
    list().then(({ items, total }) => { if (!stopped) callback({ type: 'refetch', reason, items, total }) }, () => { missed ??= reason })
  }

  const connect = async (): Promise<void> => {
    let retriedAuth = false
    while (!stopped) {
      const token = await core.session.fresh().catch(() => core.session.token)
      controller = new AbortController()
      const query = { subscribe: table, [`where.${table}`]: options.where }
      let response: Response
      try {
        response = await core.fetch(core.url('/realtime', query), {
          headers: { ...core.headers(token), accept: 'text/event-stream' }, credentials: core.credentials, signal: controller.signal, cache: 'no-store'
        })
      } catch {
        missed ??= 'reconnect'
        await pause()
        continue
      }
      if (response.status !== 200 || response.body === null) {
        const error = errorOf(response.status, response.headers.get('fastbase-error-code'), parseJson(await response.text()))
        if (response.status === 401 && token !== null && !retriedAuth) {
          retriedAuth = true
          if ((await core.session.refresh(token).catch(() => null)) !== null) continue
        }
        if (response.status === 429 || response.status >= 500) {
          await pause()
          continue
        }
        end(response.status === 401 && token !== null ? 'signed-out' : 'error', error)
        return
      }
      retriedAuth = false
      openedAs = field(core.session.user, 'id') ?? undefined
      const reason = await read(response.body, controller)
      if (reason === 'revoked') return end('signed-out')
      if (reason === 'forbidden') return end('error', new FastbaseError(403, 'FB_ERR_FORBIDDEN', 'The subscription is no longer allowed'))
      if (reason === 'overflow') missed = 'overflow'
      else {
        missed ??= 'reconnect'
        if (reason !== 'expired') await pause()
      }
    }
  }

  /** Reads one stream; answers why it ended (the `error` event's reason, else 'closed'). */
  const read = async (body: ReadableStream<Uint8Array>, abort: AbortController): Promise<string> => {
    let reason = 'closed'
    let watchdog: ReturnType<typeof setTimeout> | undefined
    let patience = 60_000
    const alive = (): void => {
      clearTimeout(watchdog)
      watchdog = setTimeout(() => abort.abort(), patience)
    }
    try {
      await readEvents(body, ({ event, data }) => {
        const value = parseJson(data)
        if (event === 'connect') {
          attempt = 0
          const heartbeat = field(value, 'heartbeatSeconds')
          // Two heartbeats missed (and some slack): the connection is dead even if no socket says so.
          if (typeof heartbeat === 'number' && heartbeat > 0) patience = (heartbeat * 2 + 5) * 1000
          alive()
          callback({ type: 'open', clientId: String(field(value, 'clientId')) })
          if (missed !== undefined) refetch(missed)
          missed = undefined
        } else if (event === 'change') {
          const action = field(value, 'action')
          if (action === 'insert' || action === 'update' || action === 'delete') callback({ type: 'change', action, record: JSON.parse(data).record })
        } else if (event === 'gap') refetch('gap')
        else if (event === 'error') reason = String(field(value, 'reason'))
      }, alive)
    } catch {
      // aborted (unsubscribe, a stalled stream) or the connection broke: the loop decides
    } finally {
      clearTimeout(watchdog)
    }
    return reason
  }

  void connect()
  return stop
}
