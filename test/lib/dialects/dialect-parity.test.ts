// Answers that SQLite and PostgreSQL would give differently unless fastbase says what it means:
// where nulls sort, and bare columns beside aggregates.
import t from 'tap'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost', jwtSecret: 'parity-secret',
  tables: [{
    name: 'items',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
      { name: 'title', type: 'text', sqlType: 'text', notNull: true },
      { name: 'rank', type: 'integer', sqlType: 'integer' }
    ],
    indexes: [{ fields: 'title' }],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }]
}

forEachDialect(t, 'nulls sort first ascending and last descending, on both databases', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: [{ title: 'b', rank: 2 }, { title: 'a', rank: null }, { title: 'c', rank: 1 }] } })
  const titles = async (order: string) => ((await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { order, select: 'title' } })).json() as Array<{ title: string }>).map((r) => r.title)
  t.same(await titles('rank'), ['a', 'c', 'b'], 'ascending: null first')
  t.same(await titles('-rank'), ['b', 'c', 'a'], 'descending: null last')
  t.same(await titles('rank desc, title'), ['b', 'c', 'a'])
  t.same(await titles('-title'), ['c', 'b', 'a'], 'a never-null column sorts as before')
})

forEachDialect(t, 'a bare column beside an aggregate is refused on both databases', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: [{ title: 'a', rank: 1 }, { title: 'a', rank: 2 }, { title: 'b', rank: 3 }] } })
  const select = (query: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/table/items/select', query, headers: { authorization: `Bearer ${adminToken}` } })
  const bare = await select({ select: 'count(*) as n, title' })
  t.equal(bare.statusCode, 400)
  t.match(bare.json(), { code: 400, message: /"title" must be in group or inside an aggregate/ })
  const ungrouped = await select({ select: 'title, sum(rank) as total', group: 'rank' })
  t.equal(ungrouped.statusCode, 400, 'grouped by another column')
  const grouped = await select({ select: 'title, sum(rank) as total', group: 'title', order: 'title' })
  t.same([grouped.statusCode, grouped.json()], [200, [{ title: 'a', total: 3 }, { title: 'b', total: 3 }]])
  const computed = await select({ select: 'upper(title) as t, count(*) as n', group: 'title', order: 't' })
  t.same([computed.statusCode, computed.json()], [200, [{ t: 'A', n: 2 }, { t: 'B', n: 1 }]], 'computed columns over grouped ones are left to the database')
  t.same((await select({ select: 'count(*) as n' })).json(), [{ n: 3 }], 'aggregates alone')
})
