// Request ids: one `reqId` per log line, the id in every answer of fastbase's routes (`x-request-id`),
// and an incoming id kept only when it is a short plain token. Embedded, the host's own routes are
// left alone. On SQLite and PostgreSQL.
import t from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import fastbase, { options as serverOptions } from '../../app.js'
import { AnswerLog } from '../../plugins/answer-hooks.js'
import { ArrivingRequest } from '../../lib/request-id.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { SseClient, config as realtimeConfig, listening } from '../fixtures/realtime/client.js'

const config: DatabaseSettings = {
  jwtSecret: 'request-id-secret',
  appUrl: 'http://127.0.0.1',
  tables: [{
    name: 'notes',
    autoSetUid: true,
    fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
  }]
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

forEachDialect(t, 'ids in logs and answers', async (t, dialect) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done() } })
  const app = Fastify({ ...serverOptions, logger: { ...(serverOptions.logger as object), level: 'info', stream } })
  t.teardown(() => app.close())
  app.get('/host/hello', async () => ({ hello: true }))
  await app.register(fastbase, { config, databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken })
  await app.ready()

  t.test('every answer of fastbase names its id; the host route does not', async (t) => {
    const health = await app.inject('/api/v1/health')
    t.match(health.headers['x-request-id'], UUID, 'a random UUID by default')
    const missing = await app.inject('/api/v1/nope')
    t.equal(missing.statusCode, 404)
    t.match(missing.headers['x-request-id'], UUID, 'the JSON 404 under the prefix too')
    t.not(missing.headers['x-request-id'], health.headers['x-request-id'], 'one id per request')
    const refused = await app.inject({ url: '/api/v1/table/notes/select', headers: { authorization: 'Bearer not-a-token' } })
    t.equal(refused.statusCode, 401)
    t.match(refused.headers['x-request-id'], UUID, 'a refusal by the caller hook')
    const malformed = await app.inject('/api/v1/table/notes/view/%E0%A4%A')
    t.equal(malformed.statusCode, 400, 'a malformed path')
    t.match(malformed.headers['x-request-id'], UUID, 'the router\'s own error, answered before any hook')
    t.notOk((await app.inject('/host/hello')).headers['x-request-id'], 'a host route is left alone')
  })

  t.test('an incoming id is kept only when it is a short plain token', async (t) => {
    const echoed = async (id: string): Promise<unknown> => (await app.inject({ url: '/api/v1/health', headers: { 'x-request-id': id } })).headers['x-request-id']
    for (const id of ['4bf92f3577b34da6a3ce929d0e0e4736', '01J9Z8Q6YF5K6C2N3XWZ7A8B9C', 'lb-7:abc.def+1']) t.equal(await echoed(id), id, `kept: ${id}`)
    for (const id of ['two words', '<script>', 'a'.repeat(129), 'id\u00e9', '']) t.match(await echoed(id), UUID, `replaced: ${JSON.stringify(id.slice(0, 20))}`)
  })

  t.test('a failed request is logged once with one reqId, the id its answer carries', async (t) => {
    // A table dropped under the running app: the read fails in a way no handler expects (a 500).
    await app.fastbase.db.schema.dropTable('notes')
    const res = await app.inject({ url: '/api/v1/table/notes/list', headers: { 'x-request-id': 'trace-500' } })
    t.equal(res.statusCode, 500)
    t.equal(res.headers['x-request-id'], 'trace-500')
    const failed = lines.filter((line) => line.includes('"request failed"'))
    t.equal(failed.length, 1, 'one error line')
    t.equal(failed[0]?.match(/"reqId"/g)?.length, 1, 'with reqId once')
    t.equal(JSON.parse(failed[0] ?? '{}').reqId, 'trace-500')
    t.ok(lines.every((line) => (line.match(/"reqId"/g)?.length ?? 0) <= 1), 'no line carries reqId twice')
  })
})

// A realtime stream is a hijacked reply: it writes its head itself, with the id the onRequest hook put
// on the reply (plugins/answer-hooks.ts).
forEachDialect(t, 'a realtime stream names its request id', async (t, dialect) => {
  const { base } = await listening(t, realtimeConfig(), { dialect })
  const client = await SseClient.open(base, { headers: { 'x-request-id': 'trace-stream' } })
  t.teardown(() => { client.close() })
  t.equal(client.status, 200)
  t.equal(client.headers?.get('x-request-id'), 'trace-stream', 'the id it was sent with')
  const fresh = await SseClient.open(base)
  t.teardown(() => { fresh.close() })
  t.match(fresh.headers?.get('x-request-id'), UUID, 'a random UUID otherwise')
})

// FASTBASE_SLOW_REQUEST_MS (docs/running.md): an answer that took longer is logged with its
// id, route and status, never its query string (filters, addresses, tokens); 0 turns it off.
forEachDialect(t, 'slow answers are logged without their query string', async (t, dialect) => {
  const logged = async (threshold: string): Promise<string[]> => {
    const lines: string[] = []
    const stream = new Writable({ write (chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done() } })
    const before = process.env.FASTBASE_SLOW_REQUEST_MS
    process.env.FASTBASE_SLOW_REQUEST_MS = threshold
    // The server's log controller reads the variable when it is made (app.ts#options makes it as the module loads).
    const app = Fastify({ ...serverOptions, logController: new AnswerLog({ disableRequestLogging: true }), logger: { ...(serverOptions.logger as object), level: 'info', stream } })
    try {
      await app.register(fastbase, { config, databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken })
      await app.ready()
    } finally {
      if (before === undefined) delete process.env.FASTBASE_SLOW_REQUEST_MS
      else process.env.FASTBASE_SLOW_REQUEST_MS = before
    }
    const res = await app.inject({ url: '/api/v1/table/notes/select?where=body%3D%3D%27secret%40example.com%27', headers: { 'x-request-id': 'trace-slow' } })
    t.equal(res.statusCode, 200, res.body)
    await app.close()
    return lines.filter((line) => line.includes('"slow request"'))
  }
  // Any answer takes longer than a microsecond to start.
  const slow = await logged('0.001')
  t.equal(slow.length, 1, 'one line')
  t.match(JSON.parse(slow[0] ?? '{}'), { level: 40, reqId: 'trace-slow', method: 'GET', route: '/api/v1/table/notes/select', statusCode: 200 })
  t.notOk(slow[0]?.includes('secret'), 'no query string')
  t.same(await logged('0'), [], '0 turns it off')
})

// fastbase's own server makes each request an ArrivingRequest (app.ts#options, decision D145): its
// arrival and id are fields from its construction, which the slow-answer log reads from Node's objects.
t.test('a request on fastbase\'s own server notes its arrival and id as fields of its own', async (t) => {
  const app = Fastify({ ...serverOptions, logger: false })
  let seen: { arriving: boolean, declared: boolean, id: unknown, waited: number } | undefined
  app.get('/probe', async (request) => {
    const raw = request.raw
    seen = raw instanceof ArrivingRequest
      ? { arriving: true, declared: Object.hasOwn(raw, 'arrivedAt') && Object.hasOwn(raw, 'requestId'), id: raw.requestId === request.id ? 'same' : raw.requestId, waited: performance.now() - raw.arrivedAt }
      : { arriving: false, declared: false, id: undefined, waited: -1 }
    return {}
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const res = await fetch(`${address}/probe`, { headers: { 'x-request-id': 'trace-arrival' } })
  t.equal(res.status, 200)
  t.match(seen, { arriving: true, declared: true, id: 'same' })
  t.ok(seen !== undefined && seen.waited >= 0 && seen.waited < 10_000, 'arrived before its handler ran')
})
