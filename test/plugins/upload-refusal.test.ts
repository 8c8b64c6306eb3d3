// Answers sent before the request's body has arrived reach the client over real HTTP, however it
// sends (decision D91): an anonymous upload of 40 file parts of 5 MiB gets its 403 when the client
// reads the answer while it sends, and one of 20 parts (under `lingerBytes`) also when the client
// reads only once it has sent everything, with or without `Connection: close`; so do the other early
// answers (the auth cookie from another origin, too many files, a file part a table cannot take, a
// JSON body over the limit). Afterwards the server reads and discards at most `lingerBytes` and waits
// at most `limits.lingerTime`, then closes, and a server shutting down does not wait for it; a host's
// own routes are left alone. Raw sockets, so no HTTP client library hides how bytes flow; each client
// keeps its side open when the server half-closes (as a browser still uploading does).
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect } from '../helper.js'
import type { DialectName } from '../../lib/dialects/types.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import { DEFAULT_LIMITS, lingerBytes } from '../../lib/limits.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const MiB = 1024 * 1024
// Bounds sending and waiting for one exchange: a server that stops reading must fail, not hang, the test.
const EXCHANGE_WITHIN_MS = 30_000

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const file = { name: 'file', type: 'file', sqlType: 'text' } as const
const rules = (createRule: string) => ({ name: 'rules' as const, listRule: 'true', viewRule: 'true', createRule, updateRule: null, deleteRule: null })

const config = (limits?: DatabaseSettings['limits']): DatabaseSettings => ({
  jwtSecret: 'x',
  appUrl: 'http://localhost',
  rateLimit: false,
  authCookie: { name: 'refusal_auth' },
  ...(limits === undefined ? {} : { limits }),
  tables: [
    { name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields], extensions: [{ name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 3600 }, rules('true')] },
    // Anonymous callers may not write: refused before a byte of the body is read.
    { name: 'docs', autoSetUid: true, fields: [id, file], extensions: [rules('auth.uid != null')] },
    // Anyone may write, with at most `limits.files` files.
    { name: 'open', autoSetUid: true, fields: [id, file], extensions: [rules('true')] },
    // Anyone may write, but there is no file field for a file part.
    { name: 'notes', autoSetUid: true, fields: [id, { name: 'title', type: 'text', sqlType: 'text' }], extensions: [rules('true')] }
  ]
})

const BOUNDARY = 'fastbase-refusal-boundary'
const CHUNK = Buffer.alloc(MiB, 0x61)

interface Body { type: string, length: number, chunks: () => Generator<Buffer> }

/** `parts` file parts of `size` bytes each, as one multipart body. */
function multipart (parts: number, size: number): Body {
  const head = (i: number) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="@filePayload"; filename="f${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const closing = Buffer.from(`--${BOUNDARY}--\r\n`)
  const crlf = Buffer.from('\r\n')
  const length = Array.from({ length: parts }, (_, i) => head(i).length + size + crlf.length).reduce((a, b) => a + b, 0) + closing.length
  return {
    type: `multipart/form-data; boundary=${BOUNDARY}`,
    length,
    * chunks () {
      for (let i = 0; i < parts; i++) {
        yield head(i)
        for (let sent = 0; sent < size; sent += CHUNK.length) yield CHUNK.subarray(0, Math.min(CHUNK.length, size - sent))
        yield crlf
      }
      yield closing
    }
  }
}

/** `size` bytes of `type` (the server refuses them by their length, before reading them). */
function plain (type: string, size: number): Body {
  return {
    type,
    length: size,
    * chunks () { for (let sent = 0; sent < size; sent += CHUNK.length) yield CHUNK.subarray(0, Math.min(CHUNK.length, size - sent)) }
  }
}

/**
 * How the client behaves once it has sent its head: `read-while-sending` reads the answer as it comes
 * and stops sending there (curl); `read-after-sending` sends everything, then reads (browsers on
 * HTTP/1.1, simple clients); `keep-sending` reads the answer but sends everything anyway;
 * `stop-sending` sends `stopAfter` bytes of the body and then nothing, keeping the connection open.
 */
type Mode = 'read-while-sending' | 'read-after-sending' | 'keep-sending' | 'stop-sending'

interface Outcome {
  status?: number
  headers: Record<string, string>
  body?: string
  /** Body bytes the client handed to its socket. */
  sentBytes: number
  sentAll: boolean
  /** How a write failed, when it did: the server closed the connection while the client was sending. */
  writeError?: string
  /** Whether the server's side of this connection was closed when the exchange ended. */
  serverClosed: boolean
}

interface Exchange { mode: Mode, method?: string, headers?: Record<string, string>, stopAfter?: number }

/** The server-side sockets of `app` by the client's port, so a test sees when the server closes one. */
function serverSockets (app: FastifyInstance): Map<number, Socket> {
  const sockets = new Map<number, Socket>()
  app.server.on('connection', (socket: Socket) => { if (socket.remotePort !== undefined) sockets.set(socket.remotePort, socket) })
  return sockets
}

/** `promise`, or an error naming `what` once EXCHANGE_WITHIN_MS have passed. */
async function within<T> (promise: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what()} within ${EXCHANGE_WITHIN_MS} ms`)), EXCHANGE_WITHIN_MS) })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

interface Server { app: FastifyInstance, port: number, sockets: Map<number, Socket> }

async function listening (t: Test, dialect: DialectName, limits?: DatabaseSettings['limits'], setup?: (app: FastifyInstance) => void): Promise<Server> {
  const app = await buildApp(t, config(limits), { dialect, setup })
  const sockets = serverSockets(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port, sockets }
}

/** A raw client sending `body` to `path` as `exchange.mode` says; keeps its side open when the server half-closes. */
async function send (server: Server, path: string, body: Body, exchange: Exchange): Promise<Outcome> {
  const { mode } = exchange
  const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true })
  const outcome: Outcome = { headers: {}, sentBytes: 0, sentAll: false, serverClosed: false }
  let received = Buffer.alloc(0)
  const answered = new Promise<void>((resolve, reject) => {
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      const end = received.indexOf('\r\n\r\n')
      if (end < 0 || outcome.status !== undefined) return
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n')
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
      const length = Number(headers['content-length'])
      if (received.length < end + 4 + length) return
      Object.assign(outcome, { status: Number(statusLine.split(' ')[1]), headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') })
      resolve()
    })
    socket.on('close', () => reject(new Error(`connection closed without an answer (${outcome.writeError ?? 'no error'}) after ${outcome.sentBytes} bytes sent`)))
  })
  answered.catch(() => {})
  socket.on('error', (error: NodeJS.ErrnoException) => { outcome.writeError ??= error.code ?? error.message })
  if (mode === 'read-after-sending') socket.pause()
  // Returns once the write went out, or the connection failed (which ends the sending).
  const write = async (data: Buffer): Promise<void> => {
    if (socket.write(data)) return
    await new Promise<void>((resolve) => {
      const done = () => { socket.off('drain', done); socket.off('close', done); resolve() }
      socket.on('drain', done)
      socket.on('close', done)
    })
  }
  const progress = () => `${path} (${mode}, ${outcome.sentBytes} bytes sent)`
  let serverClosed: Promise<void> = Promise.resolve()
  const exchanged = async () => {
    await once(socket, 'connect')
    const serverSocket = server.sockets.get(socket.localPort ?? 0)
    if (serverSocket === undefined) throw new Error('the server did not see the connection')
    // Not once(): a server socket that closes on a client's error emits 'error' first.
    serverClosed = new Promise((resolve) => serverSocket.once('close', () => { outcome.serverClosed = true; resolve() }))
    const extra = Object.entries(exchange.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('')
    await write(Buffer.from(`${exchange.method ?? 'POST'} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: ${body.type}\r\nContent-Length: ${body.length}\r\n${extra}\r\n`))
    for (const chunk of body.chunks()) {
      if (socket.destroyed || outcome.writeError !== undefined) break
      if (mode === 'read-while-sending' && outcome.status !== undefined) break
      if (mode === 'stop-sending' && outcome.sentBytes >= (exchange.stopAfter ?? 0)) break
      outcome.sentBytes += chunk.length
      await write(chunk)
    }
    outcome.sentAll = outcome.sentBytes === body.length && outcome.writeError === undefined
    if (mode === 'read-after-sending') socket.resume()
    await answered
  }
  try {
    await within(exchanged(), () => `no answer to ${progress()}`)
    // These clients are still connected: the server must close the connection (a bound in bytes or time).
    if (mode === 'keep-sending' || mode === 'stop-sending') await within(serverClosed, () => `the server did not close ${progress()}`)
    return outcome
  } finally {
    socket.removeAllListeners('close')
    socket.on('error', () => {})
    socket.destroy()
  }
}

async function storedFiles (app: FastifyInstance, table: string): Promise<string[]> {
  return await readdir(join(app.fastbase.options.dataDir, 'files', table)).catch(() => [])
}

async function stillAnswers (server: Server): Promise<number> {
  return (await fetch(`http://127.0.0.1:${server.port}/api/v1/table/open/select`)).status
}

const FORBIDDEN = { status: 403, code: 'FB_ERR_FORBIDDEN', answer: { code: 403, message: 'Forbidden', data: {} } }

forEachDialect(t, 'answers sent before the body arrived reach the client (default limits)', async (t, dialect) => {
  const server = await listening(t, dialect)
  const bound = lingerBytes(DEFAULT_LIMITS)
  // The upload of the finding: past the bound. Clients that read only after sending get theirs under it.
  const large = multipart(40, 5 * MiB)
  const underBound = multipart(20, 5 * MiB)
  t.ok(large.length > bound && underBound.length < bound, `40 x 5 MiB (${(large.length / MiB).toFixed(0)} MiB) is past lingerBytes (${(bound / MiB).toFixed(0)} MiB), 20 x 5 MiB under it`)
  const crossOrigin = { cookie: 'refusal_auth=whatever', origin: 'http://evil.example' }

  const cases: Array<{ label: string, path: string, body: Body, exchange: Exchange, status: number, code: string, answer?: unknown }> = [
    { label: 'refused insert, 40 x 5 MiB, answer read while sending', path: '/api/v1/table/docs/insert', body: large, exchange: { mode: 'read-while-sending' }, ...FORBIDDEN },
    { label: 'refused insert, Connection: close, answer read while sending', path: '/api/v1/table/docs/insert', body: large, exchange: { mode: 'read-while-sending', headers: { connection: 'close' } }, ...FORBIDDEN },
    { label: 'refused insert, 20 x 5 MiB, answer read after sending everything', path: '/api/v1/table/docs/insert', body: underBound, exchange: { mode: 'read-after-sending' }, ...FORBIDDEN },
    { label: 'refused insert, Connection: close, answer read after sending everything', path: '/api/v1/table/docs/insert', body: underBound, exchange: { mode: 'read-after-sending', headers: { connection: 'close' } }, ...FORBIDDEN },
    { label: 'update with no updateRule, answer read after sending everything', path: '/api/v1/table/docs/update', body: underBound, exchange: { mode: 'read-after-sending' }, ...FORBIDDEN },
    { label: 'the auth cookie from another origin (refused in onRequest), answer read after sending everything', path: '/api/v1/table/open/insert', body: underBound, exchange: { mode: 'read-after-sending', headers: crossOrigin }, status: 403, code: 'FB_ERR_CROSS_ORIGIN' },
    { label: '20 files to a table that takes 10, answer read after sending everything', path: '/api/v1/table/open/insert', body: underBound, exchange: { mode: 'read-after-sending' }, status: 413, code: 'FB_ERR_PAYLOAD_TOO_LARGE' },
    { label: 'a file part for a table without file fields, answer read after sending everything', path: '/api/v1/table/notes/insert', body: underBound, exchange: { mode: 'read-after-sending' }, status: 400, code: 'FB_ERR_BAD_REQUEST' },
    { label: 'an unknown path, answer read after sending everything', path: '/api/v1/nowhere', body: underBound, exchange: { mode: 'read-after-sending' }, status: 404, code: 'FB_ERR_ROUTE_NOT_FOUND' },
    { label: 'a JSON body over limits.bodySize, answer read after sending everything', path: '/api/v1/table/notes/insert', body: plain('application/json', underBound.length), exchange: { mode: 'read-after-sending' }, status: 413, code: 'FB_ERR_PAYLOAD_TOO_LARGE', answer: { code: 413, message: 'Request body is too large', data: {} } }
  ]
  for (const c of cases) {
    await t.test(c.label, async (t) => {
      const outcome = await send(server, c.path, c.body, c.exchange)
      t.equal(outcome.status, c.status, `${c.status}`)
      t.equal(outcome.headers['fastbase-error-code'], c.code, c.code)
      if (c.answer !== undefined) t.same(JSON.parse(outcome.body ?? ''), c.answer, 'the standard error body')
      else t.equal(JSON.parse(outcome.body ?? '').code, c.status, 'the standard error body')
      t.equal(outcome.headers.connection, 'close', 'the answer says the connection ends')
      if (c.exchange.mode === 'read-while-sending') t.ok(outcome.sentBytes < c.body.length, `the answer came before the body was sent (${(outcome.sentBytes / MiB).toFixed(1)} MiB sent)`)
      else t.ok(outcome.sentAll, `the server took the whole body (${(outcome.sentBytes / MiB).toFixed(0)} MiB)`)
      t.equal(await stillAnswers(server), 200, 'the server still answers')
    })
  }

  // Nobody reads a GET's body: its answer is early however it turns out (plugins/answer-hooks.ts).
  await t.test('a read sent with a body, answer read after sending everything', async (t) => {
    const read = await send(server, '/api/v1/table/open/select', underBound, { mode: 'read-after-sending', method: 'GET' })
    t.equal(read.status, 200, 'the read is answered')
    t.equal(read.headers.connection, 'close', 'the answer says the connection ends')
    t.ok(read.sentAll, `the server took the whole body (${(read.sentBytes / MiB).toFixed(0)} MiB)`)
    t.equal(await stillAnswers(server), 200, 'the server still answers')
  })

  await t.test('past lingerBytes', async (t) => {
    const past = await send(server, '/api/v1/table/docs/insert', large, { mode: 'keep-sending' })
    t.equal(past.status, 403, 'a client that ignores the answer and keeps sending: it reads the 403')
    t.ok(past.serverClosed && !past.sentAll, `the server closed the connection before the client sent everything (${past.writeError ?? 'no write error'})`)
    t.ok(past.sentBytes >= bound, `after reading and discarding lingerBytes (${(past.sentBytes / MiB).toFixed(0)} MiB of ${(large.length / MiB).toFixed(0)} sent)`)
  })

  await t.test('an answer sent once the whole body was read', async (t) => {
    const json = Buffer.from(JSON.stringify({ values: { title: 'kept' } }))
    const wholeBody = await send(server, '/api/v1/table/notes/insert', { type: 'application/json', length: json.length, * chunks () { yield json } }, { mode: 'read-after-sending' })
    t.equal(wholeBody.status, 200, 'an insert: 200')
    t.equal(wholeBody.headers.connection, 'keep-alive', 'the connection is kept for the next request')
  })

  for (const table of ['docs', 'open', 'notes']) t.same(await storedFiles(server.app, table), [], `${table}: not a byte stored`)
})

forEachDialect(t, 'after an early answer the server reads at most lingerBytes and waits at most lingerTime', async (t, dialect) => {
  const limits = { files: 2, uploadSize: MiB, bodySize: 64 * 1024, lingerTime: 1000 }
  const server = await listening(t, dialect, limits)
  const bound = lingerBytes({ ...DEFAULT_LIMITS, ...limits })

  await t.test('under the bound', async (t) => {
    const under = await send(server, '/api/v1/table/docs/insert', multipart(2, MiB), { mode: 'read-after-sending' })
    t.equal(under.status, 403, 'a body under the bound, answer read after sending everything: 403')
    t.ok(under.sentAll, 'the server took the whole body')
  })

  await t.test('past the bound in bytes', async (t) => {
    const body = multipart(64, MiB)
    const past = await send(server, '/api/v1/table/docs/insert', body, { mode: 'keep-sending' })
    t.equal(past.status, 403, 'a client that keeps sending 64 MiB: it reads the 403')
    t.ok(past.serverClosed && !past.sentAll, `the server closed the connection (${past.writeError ?? 'no write error'})`)
    t.ok(past.sentBytes >= bound && past.sentBytes < body.length, `once it had discarded lingerBytes (${(past.sentBytes / MiB).toFixed(1)} MiB of 64 sent; the socket buffers hold the rest)`)
  })

  await t.test('past the bound in time', async (t) => {
    const silent = await send(server, '/api/v1/table/docs/insert', multipart(8, MiB), { mode: 'stop-sending', stopAfter: 256 * 1024 })
    t.equal(silent.status, 403, 'a client that stops sending and keeps the connection open: it reads the 403')
    t.ok(silent.serverClosed, 'and the server closes the connection after lingerTime')
    t.equal(await stillAnswers(server), 200, 'the server still answers')
  })
})

forEachDialect(t, 'a server shutting down closes lingering connections', async (t, dialect) => {
  // Ten minutes: longer than the test may wait, so only the shutdown can close it.
  const server = await listening(t, dialect, { lingerTime: 600_000 })
  const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true })
  t.teardown(() => socket.destroy())
  socket.on('error', () => {})
  await once(socket, 'connect')
  const serverSocket = server.sockets.get(socket.localPort ?? 0)
  if (serverSocket === undefined) throw new Error('the server did not see the connection')
  const body = multipart(1, MiB)
  socket.write(`POST /api/v1/table/docs/insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${body.type}\r\nContent-Length: ${body.length}\r\n\r\n`)
  socket.write(body.chunks().next().value ?? Buffer.alloc(0))
  const [answer] = await within(once(socket, 'data'), () => 'no answer') as [Buffer]
  t.match(answer.toString('latin1'), /^HTTP\/1\.1 403 /, 'the early answer arrives')
  t.equal(serverSocket.destroyed, false, 'the connection lingers, waiting for the rest of the body')
  await within(server.app.close(), () => 'the server did not shut down')
  t.equal(serverSocket.destroyed, true, 'shutting down closed it')
})

t.test('a host app\'s own routes keep Node\'s handling', async (t) => {
  // A host route that answers before reading its body, as fastbase's refusals do.
  const server = await listening(t, 'sqlite', undefined, (app) => {
    app.post('/host/upload', { onRequest: (_request, reply, _done) => { void reply.code(403).send({ host: 'refused' }) } }, async () => ({}))
  })
  const body = multipart(20, 5 * MiB)
  const host = await send(server, '/host/upload', body, { mode: 'read-while-sending' })
  t.equal(host.status, 403, 'the host\'s early answer')
  t.equal(host.headers.connection, 'keep-alive', 'is left as Node sends it')
  const own = await send(server, '/api/v1/table/docs/insert', body, { mode: 'read-while-sending' })
  t.equal(own.headers.connection, 'close', 'while fastbase\'s own answer in the same app lingers')
})
