// A config edited and then reverted on one server (A, then B, then A again; decision D98) is the
// same on both dialects: the revert's start migrates back (the search index is rebuilt), since no
// instance that serves the newer config is running. While one is, the reverted config is still older
// and plans nothing, so the panel's "Apply pending" cannot drop what the newer config made.
import t from 'tap'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { heartbeat } from '../../../lib/backup/liveness.js'
import type { FastifyInstance } from 'fastify'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const items = (tokenize: 'trigram' | 'unicode61'): TableData => ({
  name: 'items',
  fields: [id, { name: 'title', type: 'text', sqlType: 'text' }],
  fullTextSearch: { fields: ['title'], tokenize },
  extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
})
const config = (tokenize: 'trigram' | 'unicode61'): DatabaseSettings => ({ jwtSecret: 'revert-secret-revert-secret', appUrl: 'http://localhost:3000', rateLimit: false, tables: [items(tokenize)] })
const ADMIN = { authorization: `Bearer ${adminToken}` }

async function ids (app: FastifyInstance, where: string): Promise<string[]> {
  const res = await app.inject({ url: '/api/v1/table/items/list', query: { where, order: 'id' }, headers: ADMIN })
  if (res.statusCode !== 200) throw new Error(res.body)
  return (res.json().items as Array<{ id: string }>).map((r) => r.id)
}

forEachDialect(t, 'a reverted config on a stopped server migrates back', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  let app = await buildApp(t, config('unicode61'), { dialect, databaseUrl })
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', headers: ADMIN, payload: { values: [{ id: 'a', title: 'Espresso' }] } })).statusCode, 200)
  await app.close()
  app = await buildApp(t, config('trigram'), { dialect, databaseUrl })
  t.same(await ids(app, 'items @@ \'presso\''), ['a'], 'the edit: substrings')
  await app.close()

  app = await buildApp(t, config('unicode61'), { dialect, databaseUrl })
  const status = await app.fastbase.schema.status()
  t.equal(status.outdated, undefined, 'the revert is not an older server')
  t.same(await ids(app, 'items @@ \'presso\''), [], 'the revert: words again, the index rebuilt')
  t.same(await ids(app, 'items @@ \'espresso\''), ['a'])
})

forEachDialect(t, 'a reverted config beside a running newer instance stays older', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const first = await buildApp(t, config('unicode61'), { dialect, databaseUrl })
  await first.close()
  const newer = await buildApp(t, config('trigram'), { dialect, databaseUrl })
  t.equal((await newer.inject({ method: 'POST', url: '/api/v1/table/items/insert', headers: ADMIN, payload: { values: [{ id: 'a', title: 'Espresso' }] } })).statusCode, 200)
  const beat = heartbeat(newer.fastbase.db, { warn: () => {} })
  await beat.start()
  t.teardown(async () => { await beat.stop() })

  const older = await buildApp(t, config('unicode61'), { dialect, databaseUrl })
  t.match((await older.fastbase.schema.status()).outdated, { newerAppliedAt: String }, 'an instance is alive: this is an older server')
  const apply = await older.inject({ method: 'POST', url: '/api/v1/migrations', headers: ADMIN, payload: { allowDestructive: true } })
  t.equal(apply.headers['fastbase-error-code'], 'FB_ERR_CONFIG_OUTDATED', 'its apply is refused')
  t.equal((await newer.fastbase.schema.status()).outdated, undefined, 'the newer config stays the latest')
  t.same(await ids(newer, 'items @@ \'presso\''), ['a'], 'the newer config\'s index is untouched')
})
