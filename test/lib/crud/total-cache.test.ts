// A list's total is kept per data version (lib/crud/total-cache.ts, decision D125): the same list
// asked again is not counted again, and any write anywhere (the table API, a raw statement, another
// connection as another instance or process would make, a transaction rolled back) makes the next
// list count again. Kept per caller; never for a rule that reads the clock. Both dialects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { totalCacheCounts } from '../../../lib/crud/total-cache.js'
import { connect, dialectFor } from '../../../lib/dialects/index.js'

const open = { createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const config: DatabaseSettings = {
  jwtSecret: 'total-cache-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'notes',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'due', type: 'date', sqlType: 'timestamp' }
      ],
      extensions: [{ name: 'rules', listRule: 'owner == auth.uid | owner == \'public\'', viewRule: 'true', ...open }]
    },
    {
      name: 'timed',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'due', type: 'date', sqlType: 'timestamp' }
      ],
      // Its answer changes as time passes, with no write: never kept.
      extensions: [{ name: 'rules', listRule: 'unixepoch(due) < unixepoch()', viewRule: 'true', ...open }]
    }
  ]
}

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

forEachDialect(t, 'list totals kept per data version', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const app = await buildApp(t, config, { dialect, databaseUrl, setup: simulateUsers })
  const total = async (uid?: string, table = 'notes'): Promise<number> => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/table/${table}/list`, headers: uid === undefined ? {} : { 'x-test-uid': uid } })
    t.equal(res.statusCode, 200, res.body)
    const body = res.json()
    t.equal(body.items.length, Math.min(body.total, 100), 'the page agrees with the total')
    return body.total
  }
  const counted = async (what: () => Promise<number>): Promise<{ total: number, hits: number, misses: number }> => {
    const [hits, misses] = [totalCacheCounts.hits, totalCacheCounts.misses]
    const value = await what()
    return { total: value, hits: totalCacheCounts.hits - hits, misses: totalCacheCounts.misses - misses }
  }
  let nextId = 1
  const insert = async (owner: string): Promise<void> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { id: nextId++, owner } } })
    t.equal(res.statusCode, 200, res.body)
  }

  await insert('public')
  await insert('alice')
  t.same(await counted(() => total('alice')), { total: 2, hits: 0, misses: 1 }, 'the first list counts')
  t.same(await counted(() => total('alice')), { total: 2, hits: 1, misses: 0 }, 'the same list again: the kept total')

  // Kept per caller: bob's list of the same shape (same statement, other values) counts its own,
  // and alice's kept total tells him nothing.
  t.same(await counted(() => total('bob')), { total: 1, hits: 0, misses: 1 }, 'another caller counts his own')
  t.same(await counted(() => total()), { total: 1, hits: 0, misses: 1 }, 'an anonymous caller counts its own')

  await insert('alice')
  // A lone insert through the API: the total is carried across it (decision D132, total-carry.test.ts),
  // on PostgreSQL only if no other transaction of the cluster completed meanwhile.
  const afterInsert = await counted(() => total('alice'))
  t.equal(afterInsert.total, 3, 'after an insert through the API')
  t.equal(afterInsert.hits, 0, 'not the kept total as it was')
  if (dialect === 'sqlite') t.equal(afterInsert.misses, 0, 'carried, not counted')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', payload: { where: "owner == 'public'" } })).statusCode, 200)
  t.same(await counted(() => total('alice')), { total: 2, hits: 0, misses: 1 }, 'after a delete: counted again')

  // A statement fastbase did not write (a host app's own query).
  await app.fastbase.db('notes').insert({ id: 100, owner: 'alice' })
  t.same(await counted(() => total('alice')), { total: 3, hits: 0, misses: 1 }, 'after a raw insert on the app\'s connection')

  // Another connection to the same database: another instance on PostgreSQL, another process on SQLite.
  const other = connect(databaseUrl, freshDir(t, 'other-'))
  t.teardown(other.close)
  await other.knex('notes').insert({ id: 101, owner: 'alice' })
  t.same(await counted(() => total('alice')), { total: 4, hits: 0, misses: 1 }, 'after an insert by another connection')
  await other.knex('notes').where({ id: 101 }).update({ owner: 'carol' })
  t.equal(await total('alice'), 3, 'after an update by another connection')
  t.equal(await total('carol'), 1)

  // A transaction: lists while it is open count (no version), and its rollback leaves nothing kept
  // that it had added.
  t.equal(await total('alice'), 3)
  const trx = await app.fastbase.db.transaction()
  await trx('notes').insert({ id: 102, owner: 'alice' })
  t.equal(await total('alice'), 3, 'a list while a transaction is open sees committed rows')
  await trx.rollback()
  t.equal(await total('alice'), 3, 'after the rollback')
  const trx2 = await app.fastbase.db.transaction()
  await trx2('notes').insert({ id: 103, owner: 'alice' })
  await trx2.commit()
  t.equal(await total('alice'), 4, 'after a commit')

  // A rule that reads the clock is never kept.
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/timed/insert', payload: { values: [{ id: 1, due: '2000-01-01 00:00:00' }, { id: 2, due: '2999-01-01 00:00:00' }] } })).statusCode, 200)
  t.same(await counted(() => total(undefined, 'timed')), { total: 1, hits: 0, misses: 0 }, 'a rule reading the clock: counted, not kept')
  t.same(await counted(() => total(undefined, 'timed')), { total: 1, hits: 0, misses: 0 }, 'and counted again')
})

t.test('every clock either dialect writes is seen as one', async (t) => {
  for (const name of ['sqlite', 'postgres'] as const) {
    const dialect = dialectFor(name)
    t.ok(dialect.readsClock(`SELECT ${dialect.now()}`), `${name}: now`)
    for (const fn of ['datetime', 'date', 'time', 'unixepoch']) {
      t.ok(dialect.readsClock(`SELECT ${dialect.callFunction(fn, [])!}`), `${name}: ${fn}()`)
      t.notOk(dialect.readsClock(`SELECT ${dialect.callFunction(fn, ['"t"."due"'])!}`), `${name}: ${fn}(due) reads a column, not the clock`)
    }
    t.notOk(dialect.readsClock('SELECT count(*) FROM "notes" WHERE "owner" = ?'), `${name}: a plain count`)
  }
})
