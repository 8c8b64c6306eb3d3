// Searches read from the index (decision D77): a where that requires its first `@@` reads the matches
// from the search index joined to the table, on SQLite. The answers are those of the same where read
// the other way; a where that does not require the search, or an index whose row id is not the
// table's, is read the other way; the ranked candidates are the first matches in rowid order.
import t from 'tap'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { RANK_CANDIDATES } from '../../../lib/search/fts.js'

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const text = (name: string) => ({ name, type: 'text', sqlType: 'text' }) as const
const rules = (listRule: string) => [{ name: 'rules' as const, listRule, viewRule: listRule, createRule: null, updateRule: null, deleteRule: null }]

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  // The undriven form repeats the search, and one case searches twice (decision D85).
  limits: { searches: 4 },
  tables: [
    // Anonymous callers see the published half. `body` is a column of the table and of its index.
    { name: 'posts', fields: [id, text('status'), text('body'), { ...text('tag'), foreignKey: { table: 'tags', column: 'name' } }], fullTextSearch: { fields: ['body'] }, extensions: rules('status == \'published\'') },
    { name: 'tags', fields: [{ name: 'name', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' }, text('label')], extensions: rules('true') },
    // The index's row id is an integer column that is not the key: no row is found by it in one seek.
    {
      name: 'numbered',
      fields: [id, { name: 'n', type: 'integer', sqlType: 'integer', unique: true }, text('body')],
      fullTextSearch: { fields: ['body'], content_rowid: 'n' },
      extensions: rules('true')
    }
  ]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }
const WORDS = ['apple', 'banana', 'cherry', 'date', 'elder']

forEachDialect(t, 'searches read from the index', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const insert = async (table: string, values: object[]) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: ADMIN, payload: { values, returning: [] } })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  // Keys inserted out of key order, so that rowid order and key order differ.
  const rows = Array.from({ length: 60 }, (_, i) => {
    const n = (i * 37) % 60
    return { id: `p${String(n).padStart(2, '0')}`, status: n % 2 === 0 ? 'published' : 'draft', body: `${WORDS[n % 5]} ${WORDS[(n * 3) % 5]} ${n % 7 === 0 ? 'apple apple' : 'fig'}`, tag: n % 3 === 0 ? 'red' : 'blue' }
  })
  await insert('tags', [{ name: 'red', label: 'Red' }, { name: 'blue', label: 'Blue' }])
  await insert('posts', rows)
  await insert('numbered', rows.map((r, i) => ({ id: r.id, n: 1000 - i, body: r.body })))

  const get = async (url: string, query: Record<string, string>) => {
    const res = await app.inject({ method: 'GET', url, query })
    return `${res.statusCode} ${res.body}`
  }
  // `(S) | (id == 'none' & S)` means S, but with the first search false it still admits rows: not driven.
  const undriven = (where: string, search: string) => `(${where}) | (id == 'none' & ${search})`

  t.test('the same answers as the where read the other way', async (t) => {
    const cases: Array<{ search: string, where: string }> = [
      { search: 'posts @@ \'apple\'', where: 'posts @@ \'apple\'' },
      { search: 'posts @@ \'apple\'', where: 'posts @@ \'apple\' & body != \'apple fig\' & tag == \'red\'' },
      { search: 'posts @@ \'banana OR cherry\'', where: 'posts @@ \'banana OR cherry\' & (tag == \'red\' | status == \'draft\')' },
      { search: 'body @@ \'"apple apple"\'', where: 'body @@ \'"apple apple"\' & posts @@ \'apple -date\'' },
      { search: 'posts @@ \'zzz\'', where: 'posts @@ \'zzz\'' }
    ]
    const shapes: Array<Record<string, string>> = [
      { limit: '5' },
      { limit: '4', offset: '3' },
      { order: '-id', limit: '6' },
      { order: 'tag,-id', limit: '50' },
      { select: 'id,tag', limit: '3', offset: '2' },
      { select: 'id, tag(label)', limit: '4' },
      { select: 'tag,count()', group: 'tag', limit: '5' },
      { select: 'tag', distinct: 'true', limit: '5' }
    ]
    for (const c of cases) {
      for (const shape of shapes) {
        for (const op of ['list', 'select']) {
          const url = `/api/v1/table/posts/${op}`
          const driven = await get(url, { where: c.where, ...shape })
          const other = await get(url, { where: undriven(c.where, c.search), ...shape })
          t.equal(driven, other, `${op} ${c.where} ${JSON.stringify(shape)}`)
          t.match(driven, /^200 /)
        }
      }
    }
    t.match(await get('/api/v1/table/posts/list', { where: 'posts @@ \'apple\'', select: 'id', limit: '100', order: 'id' }), /"total":\d+/)
  })

  t.test('a count read from the index counts what the caller may see', async (t) => {
    const expected = rows.filter((r) => r.status === 'published' && r.body.split(' ').includes('apple')).length
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { where: 'posts @@ \'apple\'', limit: '1' } })
    t.equal(res.json().total, expected)
    const admin = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', headers: ADMIN, query: { where: 'posts @@ \'apple\'', limit: '1' } })
    t.equal(admin.json().total, rows.filter((r) => r.body.split(' ').includes('apple')).length, 'an admin, with no rule: every match')
  })

  t.test('an index keyed by another column answers the same', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/numbered/list', query: { where: 'numbered @@ \'apple\'', select: 'id', order: 'id', limit: '100' } })
    const expected = rows.filter((r) => r.body.split(' ').includes('apple')).map((r) => r.id).sort()
    t.same(res.json(), { items: expected.map((id) => ({ id })), total: expected.length })
  })
})

forEachDialect(t, 'ranked candidates', async (t, dialect) => {
  const app = await buildApp(t, { ...config, tables: config.tables.slice(0, 2) }, { dialect })
  // Keys inserted in descending order: the first rows stored have the last keys. The row stored
  // first matches twice (it is a candidate by rowid order, not by key order); the row with the first
  // key, stored last, matches three times.
  const count = RANK_CANDIDATES + 10
  const key = (i: number) => `k${String(i).padStart(5, '0')}`
  const values = Array.from({ length: count }, (_, j) => {
    const i = count - 1 - j
    return { id: key(i), status: 'published', body: i === 0 ? 'kiwi kiwi kiwi' : i === count - 1 ? 'kiwi kiwi' : 'kiwi' }
  })
  for (let i = 0; i < count; i += 500) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: ADMIN, payload: { values: values.slice(i, i + 500), returning: [] } })
    t.equal(res.statusCode, 200, res.body)
  }
  const page = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { where: 'posts @@ \'kiwi\'', select: 'id', limit: '2' } })
  if (dialect === 'sqlite') {
    // The candidates are the first RANK_CANDIDATES stored: the last keys. The first key is not among them.
    t.same(page.json(), { items: [{ id: key(count - 1) }, { id: key(10) }], total: count }, 'SQLite: the first matches stored are ranked')
  } else {
    t.same(page.json(), { items: [{ id: key(0) }, { id: key(1) }], total: count }, 'PostgreSQL: the first matches in key order are ranked')
  }
})
