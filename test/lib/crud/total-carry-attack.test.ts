// Attacks on D132 (carried list totals).
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { totalCacheCounts } from '../../../lib/crud/total-cache.js'

const open = { listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const config: DatabaseSettings = {
  jwtSecret: 'total-carry-attack-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'items',
      fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'n', type: 'integer', sqlType: 'integer' }],
      extensions: [{ name: 'rules', ...open }]
    }
  ],
  actions: [
    { name: 'add_plain', params: { id: 'integer' }, sql: { type: 'INSERT', table: 'items', values: { id: '{:id}', n: 1 } } }
  ]
}

async function call (t: Test, app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<any> {
  const res = await app.inject({ method, url, payload: payload as object })
  t.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`)
  return res.json()
}

forEachDialect(t, 'two apps on two databases: one app\'s inserts carry the other\'s totals', async (t, dialect) => {
  const a = await buildApp(t, config, { dialect, databaseUrl: sharedDatabase(t, dialect) })
  const b = await buildApp(t, config, { dialect, databaseUrl: sharedDatabase(t, dialect) })
  await call(t, b, 'POST', '/api/v1/table/items/insert', { values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((id) => ({ id, n: 0 })) })
  await call(t, a, 'POST', '/api/v1/table/items/insert', { values: [{ id: 1, n: 0 }] })
  const wrong: number[] = []
  let carried = 0
  for (let id = 2; id <= 10; id++) {
    t.equal((await call(t, b, 'GET', '/api/v1/table/items/list?limit=1')).total, 10, 'b counts its 10 rows')
    await call(t, a, 'POST', '/api/v1/table/items/insert', { values: { id, n: 0 } })
    const before = totalCacheCounts.carried
    const total = (await call(t, b, 'GET', '/api/v1/table/items/list?limit=1')).total
    carried += totalCacheCounts.carried - before
    if (total !== 10) wrong.push(total)
  }
  t.comment(`carried ${carried} times`)
  t.same(wrong, [], 'b\'s total is 10 after every insert into a\'s table')
})

forEachDialect(t, 'an SQL-mode INSERT without returning while totals are kept', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await call(t, app, 'POST', '/api/v1/table/items/insert', { values: { id: 1, n: 0 } })
  t.equal((await call(t, app, 'GET', '/api/v1/table/items/list')).total, 1)
  const res = await app.inject({ method: 'POST', url: '/api/v1/action/add_plain', payload: { id: 2 } })
  t.equal(res.statusCode, 200, `the action runs: ${res.body}`)
  t.equal((await call(t, app, 'GET', '/api/v1/table/items/list')).total, res.statusCode === 200 ? 2 : 1)
})

const uidConfig: DatabaseSettings = {
  jwtSecret: 'total-carry-attack-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      // No primary key: the record_uid field is the key (TableDescriptor#key), and nothing makes it unique.
      name: 'notes',
      fields: [{ name: 'uid', type: 'text', sqlType: 'text', usage: 'record_uid' }, { name: 'n', type: 'integer', sqlType: 'integer' }],
      extensions: [{ name: 'rules', ...open }]
    }
  ]
}

forEachDialect(t, 'a key that is not unique', async (t, dialect) => {
  const app = await buildApp(t, uidConfig, { dialect })
  await call(t, app, 'POST', '/api/v1/table/notes/insert', { values: { uid: 'a', n: 1 } })
  t.equal((await call(t, app, 'GET', '/api/v1/table/notes/list')).total, 1)
  let wrong = 0
  for (let i = 0; i < 20 && wrong === 0; i++) {
    await call(t, app, 'POST', '/api/v1/table/notes/insert', { values: { uid: 'a', n: 2 } })
    const body = await call(t, app, 'GET', '/api/v1/table/notes/list')
    if (body.total !== body.items.length) wrong++
    t.equal(body.total, body.items.length, 'the total is the rows listed')
  }
})

forEachDialect(t, 'parallel inserts and lists', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  let id = 1
  const wrong: string[] = []
  for (let round = 0; round < 15; round++) {
    const work: Array<Promise<unknown>> = []
    for (let i = 0; i < 4; i++) {
      work.push(app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: i % 2 === 0 ? { id: id++, n: 0 } : [{ id: id++, n: 0 }, { id: id++, n: 1 }] } }))
      work.push(app.inject({ method: 'GET', url: '/api/v1/table/items/list?limit=1' }))
      work.push(app.inject({ method: 'GET', url: '/api/v1/table/items/list?limit=1&where=n%20%3D%3D%200' }))
      if (i === 2) work.push(app.fastbase.tables.items.insert({ values: { id: id++, n: 0 } } as never, { as: 'system' }))
    }
    await Promise.all(work)
    const total = (await call(t, app, 'GET', '/api/v1/table/items/list?limit=1')).total
    const zeros = (await call(t, app, 'GET', '/api/v1/table/items/list?limit=1&where=n%20%3D%3D%200')).total
    const fresh = (await call(t, app, 'GET', `/api/v1/table/items/list?limit=1&where=id%20!%3D%20${-round - 1}`)).total
    const freshZeros = (await call(t, app, 'GET', `/api/v1/table/items/list?limit=1&where=n%20%3D%3D%200%20%26%20id%20!%3D%20${-round - 1}`)).total
    if (total !== fresh || zeros !== freshZeros) wrong.push(`round ${round}: ${total}/${fresh} ${zeros}/${freshZeros}`)
  }
  t.same(wrong, [], 'after each round the kept totals are the fresh counts')
})
