// Request ids: one `reqId` per log line, the id in every answer of fastbase's routes (`x-request-id`),
// and an incoming id kept only when it is a short plain token. Embedded, the host's own routes are
// left alone. On SQLite and PostgreSQL.
import t from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import fastbase, { options as serverOptions } from '../../app.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

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
