// The app as a whole: registered inside another Fastify app, its OpenAPI document, start-up
// failures, and SQLite's locking behaviour.
import t from 'tap'
import Fastify from 'fastify'
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { validate as validateOpenApi } from '@readme/openapi-parser'
import fp from 'fastify-plugin'
import fastbase, { sql, sqlValue, baseFields } from '../../index.js'
import { fastbaseScope, REQUEST_PIPELINE } from '../../app.js'
import { buildApp, forEachDialect, adminToken, freshDir, sharedDatabase } from '../helper.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  appName: 'Notes',
  tables: [{
    name: 'notes',
    autoSetUid: true,
    fields: [
      ...baseFields,
      { name: 'body', type: 'text', sqlType: 'text', notNull: true, default: sqlValue('') },
      { name: 'pinned', type: 'bool', sqlType: 'boolean', notNull: true, default: sqlValue(false) },
      { name: 'stamp', type: 'date', sqlType: 'timestamp', default: sql`CURRENT_TIMESTAMP` }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }]
}

t.test('registers inside another Fastify app, next to its own routes', async (t) => {
  const host = Fastify()
  t.teardown(() => host.close())
  host.get('/hello', async () => ({ hello: 'world' }))
  await host.register(fastbase, { config, databaseUrl: `sqlite:${join(t.testdir(), 'db.sqlite')}`, dataDir: t.testdir(), adminServiceToken: adminToken })
  await host.ready()
  t.same((await host.inject('/hello')).json(), { hello: 'world' })
  t.equal((await host.inject('/api/v1/health')).json().status, 'ok')
  const created = await host.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'hi' }, returning: '*' } })
  t.equal(created.statusCode, 200, created.body)
  t.match(created.json()[0], { body: 'hi', pinned: false, stamp: /^\d{4}-\d{2}-\d{2}T/ })
  t.ok(host.fastbase.db, 'the instance is decorated with the database')
  t.ok(host.fastbase.descriptors.get('notes'), 'and with compiled tables')
})

forEachDialect(t, 'OpenAPI document', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const res = await app.inject('/api/v1/doc')
  t.equal(res.statusCode, 200)
  const doc = res.json()
  t.equal(doc.openapi, '3.1.0')
  await t.resolves(validateOpenApi(structuredClone(doc)), 'valid OpenAPI 3.1')
  for (const op of ['select', 'list', 'insert', 'update', 'delete']) t.ok(doc.paths[`/api/v1/table/notes/${op}`], op)
  t.ok(doc.paths['/api/v1/table/notes/view/{id}'].get)
  t.ok(doc.paths['/api/v1/table/notes/edit/{id}'].post)
  const insertBody = doc.paths['/api/v1/table/notes/insert'].post.requestBody.content['application/json'].schema
  t.equal(insertBody.$ref, '#/components/schemas/notes.insert', 'the insert body is a shared component')
  t.match(JSON.stringify(doc.components.schemas['notes.new']), /"pinned"/, 'the record schema of the table is in the document')
  t.equal((await app.inject('/api/v1/doc/ui/')).statusCode, 200)
  t.equal((await app.inject('/api/v1/health')).json().dialect, dialect)
})

t.test('start-up refuses a bad config, listing every problem', async (t) => {
  const bad = {
    jwtSecret: 'x',
    appUrl: 'http://l',
    tables: [{ name: 'a', fields: [{ name: 'x', type: 'nope', sqlType: 'text' }], extensions: [{ name: 'rules', listRule: 'x ==' }] }]
  } as unknown as DatabaseSettings
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(fastbase, { config: bad, databaseUrl: 'sqlite::memory:', dataDir: t.testdir() }).ready() }, /tables\[0\]\.fields\[0\]\.type/)
  const badRule = { ...config, tables: [{ ...config.tables[0], extensions: [{ name: 'rules' as const, listRule: 'nosuch == 1', viewRule: 'body ==' }] }] }
  const app2 = Fastify()
  t.teardown(() => app2.close())
  const error = await app2.register(fastbase, { config: badRule, databaseUrl: 'sqlite::memory:', dataDir: t.testdir() }).ready().then(() => undefined, (e: Error) => e)
  t.match(error?.message, /tables\.notes\.listRule: Unknown column "nosuch" at position 0/)
  t.match(error?.message, /tables\.notes\.viewRule: Unexpected end of expression at position 7/)
  t.notMatch(error?.stack, /\n\s+at /, 'no stack trace, just the list')
})

t.test('SQLite: a lock that outlasts the busy timeout is 503, not 500', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'locked.sqlite')
  process.env.FASTBASE_SQLITE_BUSY_TIMEOUT = '100'
  t.teardown(() => { delete process.env.FASTBASE_SQLITE_BUSY_TIMEOUT })
  const app = await buildApp(t, config, { dialect: 'sqlite', databaseUrl: `sqlite:${file}` })
  const other = new Database(file)
  t.teardown(() => other.close())
  other.exec('BEGIN EXCLUSIVE')
  const res = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'x' } } })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { code: 503, message: 'Database is busy, try again', data: {} })
  const read = await app.inject('/api/v1/table/notes/select')
  t.equal(read.statusCode, 200, 'WAL: readers are not blocked by a writer')
  other.exec('ROLLBACK')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'x' } } })).statusCode, 200, 'and it recovers')
})

t.test('SQLite pragmas: WAL, synchronous NORMAL, foreign keys', async (t) => {
  const app = await buildApp(t, config, { dialect: 'sqlite' })
  const pragma = async (name: string) => Object.values((await app.fastbase.db.raw(`PRAGMA ${name}`))[0])[0]
  t.equal(await pragma('journal_mode'), 'wal')
  t.equal(await pragma('synchronous'), 1)
  t.equal(await pragma('foreign_keys'), 1)
  t.ok(Number(await pragma('busy_timeout')) > 0)
})

// The services are built by the kernel (lib/kernel/index.ts) before any plugin: the plugins only add
// hooks and routes over them, so the order they are registered in cannot change an answer.
forEachDialect(t, 'the request pipeline registered in reverse gives the same answers; app.fastbase is sealed', async (t, dialect) => {
  const withMetrics: DatabaseSettings = { ...config, metrics: { token: 'metrics-token-0123456789abcdef' } }
  const reversed = [...REQUEST_PIPELINE].reverse()
  async function build (pipeline: typeof REQUEST_PIPELINE) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(fp(async (host) => {
      host.decorateRequest('fastbaseAuth', undefined)
      await host.register(async (scope) => {
        const fb = await fastbaseScope(scope, { config: withMetrics, databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken }, scope, pipeline)
        host.decorate('fastbase', fb)
      })
    }))
    await app.ready()
    return app
  }
  const apps = [await build(REQUEST_PIPELINE), await build(reversed)]
  const answers = []
  for (const app of apps) {
    const admin = { authorization: `Bearer ${adminToken}` }
    const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: admin, payload: { values: { body: 'hi' }, returning: ['body', 'pinned'] } })
    const badToken = await app.inject({ method: 'POST', url: '/api/v1/table/notes/list', headers: { authorization: 'Bearer not-a-token' }, payload: {} })
    const badJson = await app.inject({ method: 'POST', url: '/api/v1/table/notes/list', headers: { 'content-type': 'application/json' }, payload: '{' })
    const unknown = await app.inject('/api/v1/nothing-here')
    const settings = await app.inject({ url: '/api/v1/settings', headers: admin })
    const doc = (await app.inject('/api/v1/doc')).json()
    const scrape = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789abcdef' } })
    answers.push({
      inserted: [inserted.statusCode, inserted.json()],
      badToken: [badToken.statusCode, badToken.json()],
      badJson: [badJson.statusCode, badJson.json()],
      unknown: [unknown.statusCode, unknown.json()],
      settings: settings.statusCode,
      operations: Object.keys(doc.paths).sort(),
      // The insert above was counted by the metrics hook, whatever the order.
      counted: /fastbase_http_requests_total\{[^}]*route="\/api\/v1\/table\/notes\/insert"/.test(scrape.body)
    })
  }
  t.match(answers[0], { inserted: [200, [{ body: 'hi', pinned: false }]], badToken: [401], badJson: [400], unknown: [404], settings: 200, counted: true }, 'the usual order answers as fastbase does')
  t.same(answers[1], answers[0], 'the reversed order answers the same')

  const fb = apps[1].fastbase
  t.ok(Object.isFrozen(fb), 'app.fastbase is frozen')
  t.ok(Object.isFrozen(fb.executor), 'and so is its executor')
  t.throws(() => { (fb as { storage: unknown }).storage = undefined }, TypeError, 'a service cannot be replaced after the start')
  t.throws(() => { (fb.executor as { changes: unknown }).changes = undefined }, TypeError, 'nor the executor\'s change sink')
})
