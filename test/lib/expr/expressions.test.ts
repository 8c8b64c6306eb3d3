// The expression language, end to end through GET /select on both dialects: every operator and
// function, typed literals, and the errors (token and position named) for what it rejects.
import t from 'tap'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import { parseExpression, parseList } from '../../../lib/expr/parse.js'
import { ExpressionError } from '../../../lib/expr/errors.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  tables: [{
    name: 'items',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
      { name: 'title', type: 'text', sqlType: 'text' },
      { name: 'views', type: 'integer', sqlType: 'integer' },
      { name: 'price', type: 'number', sqlType: 'real' },
      { name: 'published', type: 'bool', sqlType: 'boolean' },
      { name: 'meta', type: 'json', sqlType: 'json' },
      { name: 'created', type: 'date', sqlType: 'timestamp' },
      { name: 'secret', type: 'text', sqlType: 'text', noSelect: true }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }]
}

const rows = [
  { id: 1, title: 'Alpha', views: 10, price: 1.5, published: true, meta: { n: 3, s: 'x', tags: ['a', 'b'] }, created: '2026-01-05T10:00:00Z', secret: 's1' },
  { id: 2, title: 'beta', views: 1, price: 20, published: false, meta: { n: 1, s: 'y', tags: ['b'] }, created: '2025-06-01T00:00:00Z', secret: 's2' },
  { id: 3, title: 'Gamma', views: 100, price: 3.25, published: true, meta: { n: 10, s: 'x', tags: [] }, created: '2026-11-21T15:07:47.123Z', secret: 's3' },
  { id: 4, title: null, views: 0, price: null, published: false, meta: null, created: '2024-02-29T12:00:00Z', secret: null }
]

t.test('parser', async (t) => {
  t.test('precedence: & binds tighter than |, comparisons tighter than &', async (t) => {
    const e = parseExpression('a > 1 & b < 5 | c == \'x\'') as { type: string, op: string, left: { op: string } }
    t.equal(e.op, '|')
    t.equal(e.left.op, '&')
  })
  t.test('in takes (a, b) and [a, b]', async (t) => {
    t.match(parseExpression('a in (1, 2)'), { type: 'binary', op: 'in', right: { type: 'list', items: [{ value: 1 }, { value: 2 }] } })
    t.match(parseExpression('a in [1, 2]'), { type: 'binary', op: 'in', right: { type: 'list' } })
  })
  t.test('both quote styles and escapes', async (t) => {
    t.match(parseExpression('"it\'s"'), { type: 'literal', value: 'it\'s' })
    t.match(parseExpression('\'say \\\'hi\\\'\''), { type: 'literal', value: 'say \'hi\'' })
  })
  t.test('count(*) and list aliases', async (t) => {
    t.match(parseExpression('count(*)'), { type: 'call', name: 'count', star: true })
    t.match(parseList('title, views + 1 as v, lower(title) => l, *'), [
      { alias: undefined, source: 'title' }, { alias: 'v', source: 'views + 1' }, { alias: 'l' }, { expr: '*' }
    ])
  })
  const rejects: Array<[string, RegExp]> = [
    ['title = \'a\' AND views = 1', /Unexpected identifier "AND" \(use & instead of AND\) at position 12/],
    ['title LIKE \'a\'', /Unexpected identifier "LIKE" \(use ~ instead of LIKE\) at position 6/],
    ['views ==', /Unexpected end of expression at position 8/],
    ['1; DROP TABLE items', /Unexpected character ";" at position 1/],
    ['\'abc', /Unterminated string at position 0/],
    ['0x10', /Invalid number "0x" at position 0/],
    ['a in 5', /"in" needs a list/],
    ['a in ()', /Unexpected token "\)"|"in" needs at least one value/],
    ['', /Empty expression/],
    ['a ? 1 : 2', /Unexpected character "\?" at position 2/],
    ['title[0]', /Unexpected token "\[" at position 5/],
    ['x'.repeat(10_001), /longer than 10000 characters/],
    ['('.repeat(201) + '1' + ')'.repeat(201), /nested deeper than 200 levels/],
    ['!'.repeat(300) + 'a', /nested deeper than 200 levels/],
    [Array(300).fill('a').join(' | '), /nested deeper than 200 levels/],
    [`a in (${Array(1001).fill(1).join(',')})`, /"in" takes at most 1000 values/]
  ]
  for (const [src, message] of rejects) {
    t.test(`rejects ${src.slice(0, 30)}`, async (t) => {
      let error: unknown
      try { parseExpression(src) } catch (e) { error = e }
      t.type(error, ExpressionError)
      t.match((error as Error).message, message)
    })
  }
})

forEachDialect(t, 'operators and functions', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const admin = { authorization: `Bearer ${adminToken}` }
  const seeded = await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', headers: admin, payload: { values: rows } })
  t.equal(seeded.statusCode, 200, seeded.body)

  async function ids (where: string, headers: Record<string, string> = {}): Promise<number[]> {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { where, select: 'id' }, headers })
    if (res.statusCode !== 200) throw new Error(`${where}: ${res.statusCode} ${res.body}`)
    return res.json().map((r: { id: number }) => r.id)
  }

  const cases: Array<[string, number[]]> = [
    ['views == 10', [1]],
    ['views != 10', [2, 3, 4]],
    ['title != null', [1, 2, 3]],
    ['title == null', [4]],
    ['title = null', [4]],
    ['title = \'Alpha\'', [1]],
    ['title == "Alpha"', [1]],
    ['title ~ \'al%\'', [1]],
    ['title ~ \'%A%\'', [1, 2, 3]],
    ['title !~ \'%a\'', []],
    ['title ~ \'_eta\'', [2]],
    ['views < 10', [2, 4]],
    ['views <= 10', [1, 2, 4]],
    ['views > 10', [3]],
    ['views >= 10', [1, 3]],
    ['views > 0 & views < 50', [1, 2]],
    ['views < 1 | views > 50', [3, 4]],
    ['!(views > 5)', [2, 4]],
    ['views in (1, 10)', [1, 2]],
    ['views in [0, 100]', [3, 4]],
    ['title in (\'Alpha\', \'beta\')', [1, 2]],
    ['title || \'!\' == \'Alpha!\'', [1]],
    ['views + 1 == 11', [1]],
    ['views - 1 == 0', [2]],
    ['views * 2 == 200', [3]],
    ['views / 2 == 5', [1]],
    ['-views == -100', [3]],
    ['price > 2.5', [2, 3]],
    ['published == true', [1, 3]],
    ['published == false', [2, 4]],
    ['published = true', [1, 3]],
    ['published == 1', [1, 3]],
    ['!published', [2, 4]],
    ['meta ->> \'$.s\' == \'x\'', [1, 3]],
    ['meta ->> \'$.n\' > 2', [1, 3]],
    ['meta ->> \'n\' == 1', [2]],
    ['meta ->> \'$.tags[0]\' == \'b\'', [2]],
    ['json_contains(meta -> \'$.tags\', \'b\')', [1, 2]],
    ['lower(title) == \'gamma\'', [3]],
    ['upper(title) == \'BETA\'', [2]],
    ['length(title) == 4', [2]],
    ['substring(title, 1, 2) == \'Ga\'', [3]],
    ['replace(title, \'a\', \'o\') == \'Alpho\'', [1]],
    ['concat(title, \'-\', views) == \'Alpha-10\'', [1]],
    ['coalesce(title, \'none\') == \'none\'', [4]],
    ['abs(views - 50) == 50', [3, 4]],
    ['round(price) == 2', [1]],
    ['created > \'2026-01-01\'', [1, 3]],
    ['created < \'2025-01-01T00:00:00Z\'', [4]],
    ['created == \'2026-11-21T15:07:47.123Z\'', [3]],
    ['unixepoch(created) == 1767607200', [1]],
    ['date(created) == \'2024-02-29\'', [4]],
    ['datetime(created) == \'2026-01-05 10:00:00\'', [1]],
    ['unixepoch() > unixepoch(created)', [1, 2, 3, 4]],
    ['auth.uid == null', [1, 2, 3, 4]],
    ['auth.uid != null', []],
    ['true', [1, 2, 3, 4]],
    ['false', []],
    ['1 + 1 == 2 & views == 0', [4]],
    ['null & views > 0', []],
    ['items.views == 1', [2]],
    ['title == "\') OR 1=1 --"', []]
  ]
  for (const [where, expected] of cases) {
    t.same(await ids(where), expected, where)
  }

  t.test('noSelect columns are invisible to callers, not to admins', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { where: 'secret == \'s1\'' } })
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 400, message: /Unknown column "secret"/ })
    t.same(await ids('secret == \'s1\'', admin), [1])
  })

  t.test('select lists: expressions, aliases, aggregates', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { select: 'id, views + 1 as next, lower(title) as low', where: 'id == 1' } })
    t.same(res.json(), [{ id: 1, next: 11, low: 'alpha' }])
    const count = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { select: 'count(*) as n, sum(views) as total' } })
    t.same(count.json(), [{ n: 4, total: 111 }])
    const unaliased = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { select: 'count(*)' } })
    t.same(unaliased.json(), [{ 'count(*)': 4 }])
  })

  const errors: Array<[string, RegExp]> = [
    ['title = \'a\' AND views = 1', /AND.*position 12/],
    ['nope == 1', /Unknown column "nope" at position 0/],
    ['other.title == 1', /Unknown column "other.title"/],
    ['hack(views)', /Unknown function "hack" at position 0/],
    ['lower(title, 1)', /lower\(\) takes 1 argument/],
    ['views ==', /Unexpected end of expression/],
    ['views == 1; DROP TABLE items', /Unexpected character ";"/],
    ['new.views == 1', /"new" is only available in update and create rules/],
    ['published == \'maybe\'', /must be true or false/],
    ['created > \'yesterday\'', /must be a date-time/],
    ['meta -> views', /right side of a JSON operator/]
  ]
  for (const [where, message] of errors) {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/items/select', query: { where } })
    t.equal(res.statusCode, 400, `${where} -> 400`)
    t.match(res.json(), { code: 400, message }, where)
  }
  t.same(await ids('true'), [1, 2, 3, 4], 'the table survived every injection attempt')
})
