// GET <prefix>/realtime: a server-sent event stream of table changes; POST <prefix>/realtime: replace
// the subscriptions of a stream. The protocol is in docs/realtime.md and in the descriptions below.
import { Type, type Static } from '@sinclair/typebox'
import type {} from '../plugins/types.js'
import type { AuthContext } from '../lib/auth-context.js'
import { errors } from '../lib/errors.js'
import { userContext } from '../lib/auth/sessions/user-context.js'
import { frame, type RealtimeClient, type Subscription } from '../lib/realtime/hub.js'
import { clientAddress } from '../lib/client-address.js'
import type { TypeBoxApp } from './typebox.js'
import { callerOf } from '../plugins/auth-context.js'
import { ErrorSchema } from '../schemas/http/error.js'

// How long a stream the server ended (overflow, expiry...) waits for its client to read the rest.
const DRAIN_GRACE_MS = 30_000

const errorResponses = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 429: ErrorSchema, 503: ErrorSchema }
const ERRORS = [400, 401, 403, 404, 429, 500, 503]

const SubscriptionSchema = Type.Object({
  table: Type.String({ minLength: 1, maxLength: 255 }),
  where: Type.Optional(Type.String({ description: 'An expression in the table API\'s language; only rows it matches are sent' }))
}, { additionalProperties: false })

const SubscribeBody = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 64, description: 'The id the stream\'s `connect` event gave' }),
  subscriptions: Type.Array(SubscriptionSchema, { maxItems: 1000, description: 'The new set (replaces the old one; [] unsubscribes from everything)' })
}, { additionalProperties: false })

const StreamQuery = Type.Object({
  subscribe: Type.Optional(Type.String({ maxLength: 8192, description: 'Tables to subscribe to at once, comma-separated' }))
}, { additionalProperties: Type.String({ maxLength: 8192 }), description: '`where.<table>=<expression>` narrows the subscription to <table>' })

/** The stream's query with one documented `where.<table>` parameter per table, so the API document (and its clients) can send them. */
function streamQueryOf (tables: Iterable<string>): typeof StreamQuery {
  const wheres = Object.fromEntries([...tables].map((table) => [`where.${table}`, Type.Optional(Type.String({ maxLength: 8192, description: `Only changes to ${table} rows this expression matches (with ${table} in subscribe)` }))]))
  return Type.Object({ ...StreamQuery.properties, ...wheres }, { additionalProperties: Type.String({ maxLength: 8192 }) }) as unknown as typeof StreamQuery
}

const STREAM_DESCRIPTION = [
  'A `text/event-stream` of changes to tables, filtered per subscriber by the table\'s `listRule` and the subscription\'s `where`, exactly as `list` would filter them; non-admins never get `noSelect` fields.',
  'Authenticate with `Authorization: Bearer <token>` (fetch-based clients) or the auth cookie (a browser `EventSource` on the same origin sends it). Tokens are never taken from the URL.',
  'Events: `connect` `{ clientId, subscriptions, heartbeatSeconds }` first; `change` `{ action: "insert" | "update" | "delete", table, record }` after each committed write (a delete carries the record as it was); `gap` when changes may have been missed (refetch); `error` `{ code, message, reason }` as the last event before the server ends the stream (reason `overflow`, `expired`, `revoked`, `forbidden` or `shutdown`). Comment lines (`: ping`) are heartbeats.',
  'Subscribe at once with `?subscribe=posts,comments&where.posts=published == true`, or later with `POST /realtime`.'
].join('\n\n')

function identityOf (auth: AuthContext): string {
  if (auth.admin) return `admin:${auth.adminRole ?? ''}:${auth.uid ?? ''}`
  if (auth.uid !== null) return `user:${auth.cid ?? ''}:${auth.uid}`
  return 'anonymous'
}

function subscriptionsOf (query: Static<typeof StreamQuery>): Subscription[] {
  const tables = (query.subscribe ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '')
  const wheres = query as Record<string, string | undefined>
  for (const key of Object.keys(wheres)) {
    if (key.startsWith('where.') && !tables.includes(key.slice(6))) throw errors.badRequest(`${key}: ${key.slice(6)} is not in subscribe`)
  }
  return [...new Set(tables)].map((table) => ({ table, where: wheres[`where.${table}`] }))
}

export default async function realtimeRoutes (app: TypeBoxApp): Promise<void> {
  const hub = app.fastbase.realtime!
  const heartbeatSeconds = hub.settings.heartbeatMs / 1000

  /** The session re-check of a user token: logout and revocation end the stream. */
  function recheckOf (auth: AuthContext): (() => Promise<AuthContext | undefined>) | undefined {
    if (auth.admin || auth.cid === null || auth.sid === null) return undefined
    const table = app.fastbase.auth.tables.get(auth.cid)
    if (table === undefined) return undefined
    return async () => await userContext(app.fastbase.executor, table, auth.jwt)
  }

  app.get('/realtime', {
    schema: {
      tags: ['realtime'],
      operationId: 'realtime_stream',
      'x-document': { errors: ERRORS },
      summary: 'Subscribe to table changes (server-sent events)',
      description: STREAM_DESCRIPTION,
      querystring: streamQueryOf(app.fastbase.descriptors.keys()),
      response: { 200: { description: 'The event stream', content: { 'text/event-stream': { schema: Type.String() } } }, ...errorResponses }
    }
  }, async (request, reply) => {
    const auth = callerOf(request)
    const subscriptions = subscriptionsOf(request.query)
    const identity = identityOf(auth)
    const res = reply.raw
    let closeTimer: NodeJS.Timeout | undefined
    const exp = typeof auth.jwt.exp === 'number' ? auth.jwt.exp * 1000 : undefined
    // Changes committed once this resolves reach the stream, whichever instance makes them.
    // The address as Fastify trusts it (the socket's, or behind trustProxy the proxy's X-Forwarded-For),
    // an IPv6 one by its /64.
    const address = clientAddress(request.ip)
    const holder = { limitKey: auth.uid === null ? `ip:${address}` : identity, address }
    await hub.admit(auth, subscriptions, holder)
    const client: RealtimeClient = hub.connect({
      auth,
      identity,
      ...holder,
      expiresAt: exp,
      recheck: recheckOf(auth),
      sink: {
        write: (chunk) => { res.write(chunk) },
        buffered: () => res.writableLength,
        end: () => {
          res.end()
          // What the client has not read yet (the last event included) stays for it a while; a
          // client that never reads again loses its socket then. Until the socket is gone the
          // stream keeps its place in the limits (hub.detach below), so its buffer stays counted.
          closeTimer = setTimeout(() => res.destroy(), DRAIN_GRACE_MS).unref()
        }
      }
    })
    try {
      hub.subscribe(client, subscriptions)
    } catch (error) {
      hub.detach(client)
      throw error
    }
    reply.hijack()
    const gone = (): void => {
      if (closeTimer !== undefined) clearTimeout(closeTimer)
      client.close()
      hub.detach(client)
    }
    res.on('close', gone)
    // A client that left while the subscriptions were checked: 'close' has been and gone.
    if (res.destroyed) {
      gone()
      return
    }
    // The headers hooks set (the request id, plugins/answer-hooks.ts; CORS for a listed origin): a
    // hijacked reply does not send them itself.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value)
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive'
    })
    res.write(frame('connect', { clientId: client.id, subscriptions: client.subscriptions, heartbeatSeconds }))
  })

  app.post('/realtime', {
    schema: {
      tags: ['realtime'],
      operationId: 'realtime_subscribe',
      'x-document': { errors: ERRORS },
      summary: 'Replace the subscriptions of a realtime stream',
      description: 'The caller must be who opened the stream (the same user, admin, or anonymous), else 403. All or nothing: one bad subscription (unknown table 404, forbidden 403, bad where or `@@` 400, a table full of distinct subscriptions on this instance 503) changes nothing.',
      body: SubscribeBody,
      response: {
        200: Type.Object({ clientId: Type.String(), subscriptions: Type.Array(SubscriptionSchema) }),
        ...errorResponses
      }
    }
  }, async (request) => {
    const { clientId, subscriptions } = request.body
    const client = hub.clients.get(clientId)
    if (client === undefined || client.closed) throw errors.realtimeClientNotFound()
    const auth = callerOf(request)
    if (identityOf(auth) !== client.options.identity) throw errors.forbidden()
    const wanted = subscriptions.map((s) => ({ table: s.table, where: s.where }))
    await hub.admit(auth, wanted, client.options, client)
    if (client.closed) throw errors.realtimeClientNotFound()
    hub.subscribe(client, wanted)
    client.send(frame('subscriptions', { subscriptions: client.subscriptions }))
    return { clientId, subscriptions: client.subscriptions }
  })
}
