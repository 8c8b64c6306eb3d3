// An upload refused before its body is read (the caller may not write the table) is answered over real
// HTTP, however the client sends: 40 file parts of 5 MiB from an anonymous caller get their 403 whether
// the client reads the answer while it sends or only once it has sent everything, and the server
// stays healthy and stores nothing. Raw sockets, so no HTTP client library hides how bytes flow.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect } from './helper.js'
import type { DatabaseSettings } from '../schemas/config.js'

const MiB = 1024 * 1024
const PARTS = 40
const PART_SIZE = 5 * MiB
const ANSWER_WITHIN_MS = 30_000

const config: DatabaseSettings = {
  jwtSecret: 'x',
  appUrl: 'http://localhost',
  tables: [{
    name: 'docs',
    autoSetUid: true,
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true },
      { name: 'file', type: 'file', sqlType: 'text' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'auth.uid != null', updateRule: null, deleteRule: null }]
  }]
}

const BOUNDARY = 'fastbase-refusal-boundary'
const partHead = (i: number) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="@filePayload"; filename="f${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
const CLOSING = Buffer.from(`--${BOUNDARY}--\r\n`)
const CRLF = Buffer.from('\r\n')
const CHUNK = Buffer.alloc(MiB, 0x61)
const bodyLength = Array.from({ length: PARTS }, (_, i) => partHead(i).length + PART_SIZE + CRLF.length).reduce((a, b) => a + b, 0) + CLOSING.length

interface Outcome { status: number, body: string, sentBytes: number, sentAll: boolean }

/**
 * POSTs the 200 MiB multipart body on a raw socket. `readWhileSending`: the answer is read as it
 * comes and sending stops there (a browser, curl); otherwise the whole body is sent first and only
 * then is the answer read (simpler clients).
 */
async function upload (port: number, path: string, readWhileSending: boolean): Promise<Outcome> {
  const socket = connect(port, '127.0.0.1')
  let received = Buffer.alloc(0)
  let sentBytes = 0
  let answer: { status: number, body: string } | undefined
  let sending = true
  // Bounds sending and waiting together: a server that stops reading must not hang the test.
  const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms (${sentBytes} bytes sent)`)), ANSWER_WITHIN_MS)
  const answered = new Promise<{ status: number, body: string }>((resolve, reject) => {
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      const end = received.indexOf('\r\n\r\n')
      if (end < 0) return
      const head = received.subarray(0, end).toString('latin1')
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN)
      if (received.length < end + 4 + length) return
      resolve({ status: Number(head.split(' ')[1]), body: received.subarray(end + 4, end + 4 + length).toString('utf8') })
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`connection closed without an answer after ${sentBytes} bytes sent`)))
  })
  answered.catch(() => {})
  if (readWhileSending) void answered.then((a) => { answer = a; sending = false }, () => { sending = false })
  else socket.pause()

  const write = async (data: Buffer): Promise<void> => {
    if (!sending) return
    sentBytes += data.length
    // once() rejects on 'error': a connection the server resets while the body is sent fails the test.
    if (!socket.write(data)) await once(socket, 'drain')
  }
  try {
    await once(socket, 'connect')
    await write(Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${bodyLength}\r\n\r\n`))
    for (let i = 0; i < PARTS && sending; i++) {
      await write(partHead(i))
      for (let sent = 0; sent < PART_SIZE && sending; sent += CHUNK.length) await write(CHUNK)
      await write(CRLF)
    }
    await write(CLOSING)
    const sentAll = sending
    if (!readWhileSending) socket.resume()
    const { status, body } = answer ?? await answered
    return { status, body, sentBytes, sentAll }
  } finally {
    clearTimeout(timer)
    destroyQuietly(socket)
  }
}

function destroyQuietly (socket: Socket): void {
  socket.removeAllListeners('close')
  socket.on('error', () => {})
  socket.destroy()
}

async function storedFiles (app: FastifyInstance): Promise<string[]> {
  return await readdir(join(app.fastbase.options.dataDir, 'files', 'docs')).catch(() => [])
}

forEachDialect(t, 'a refused 40 x 5 MiB upload is answered over real HTTP', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  t.equal(bodyLength > PARTS * PART_SIZE, true, `the body is ${(bodyLength / MiB).toFixed(0)} MiB`)

  for (const [label, path, readWhileSending] of [
    ['insert, answer read while sending', '/api/v1/table/docs/insert', true],
    ['insert, answer read after sending everything', '/api/v1/table/docs/insert', false],
    ['update with no updateRule, answer read after sending everything', '/api/v1/table/docs/update', false]
  ] as const) {
    const outcome = await upload(port, path, readWhileSending)
    t.equal(outcome.status, 403, `${label}: 403`)
    t.same(JSON.parse(outcome.body), { code: 403, message: 'Forbidden', data: {} }, `${label}: the standard error body`)
    if (readWhileSending) t.ok(outcome.sentBytes < bodyLength, `${label}: the answer came before the body was sent (${(outcome.sentBytes / MiB).toFixed(1)} MiB sent)`)
    else t.ok(outcome.sentAll, `${label}: the server took the whole body, so a client that reads only afterwards gets its answer`)
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/table/docs/select`)
    t.equal(health.status, 200, `${label}: the server still answers`)
  }
  t.same(await storedFiles(app), [], 'not a byte stored')
})
