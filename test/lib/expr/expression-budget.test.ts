// One expression budget per request (decision D85): every `@@` of the caller's text counts against
// limits.searches wherever it appears (where, select lists and their aggregates, returning, set),
// order and group take names only, and a statement that searches or expands anywhere (a select list,
// a rule) is costly: SQLite runs it on a reader thread under the statement timeout, PostgreSQL
// behind the long-read gate. Both are decided by Statement#offThread, observed here on the runner.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import type { Statement } from '../../../lib/dialects/connection.js'
import { ExpressionBudget } from '../../../lib/expr/budget.js'
import { ExpressionError } from '../../../lib/expr/errors.js'
import { DEFAULT_LIMITS } from '../../../lib/limits.js'

const id = { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' } as const
const open = { listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }

const config = (statementTimeout = 5000, searches?: number): DatabaseSettings => ({
  jwtSecret: 'budget-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'notes',
      fields: [id, { name: 'title', type: 'text', sqlType: 'text' }, { name: 'body', type: 'text', sqlType: 'text' }],
      fullTextSearch: { fields: ['title', 'body'] },
      extensions: [{ name: 'rules', ...open }]
    },
    // A rule made of a search: nothing the caller sends searches, the statement still does.
    {
      name: 'public',
      fields: [id, { name: 'body', type: 'text', sqlType: 'text' }],
      fullTextSearch: { fields: ['body'] },
      extensions: [{ name: 'rules', ...open, listRule: 'public @@ \'public\'', viewRule: 'public @@ \'public\'' }]
    }
  ],
  limits: { statementTimeout, ...(searches === undefined ? {} : { searches }) }
})

const admin = { authorization: `Bearer ${adminToken}` }

async function seed (app: FastifyInstance): Promise<void> {
  for (const [table, values] of [
    ['notes', [{ id: 1, title: 'kale', body: 'lorem ipsum' }, { id: 2, title: 'kite', body: 'dolor' }]],
    ['public', [{ id: 1, body: 'public text' }, { id: 2, body: 'private text' }]]
  ] as const) {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: admin, payload: { values, returning: [] } })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
}

/** Statement#offThread of every statement the direct runner is given from now on. */
function watchOffThread (t: Test, app: FastifyInstance): boolean[] {
  const direct = app.fastbase.executor.direct
  if (direct === undefined) throw new Error('no direct runner')
  const read = direct.read
  const seen: boolean[] = []
  direct.read = (statement: Statement, bindings: readonly unknown[]) => {
    seen.push(statement.offThread === true)
    return read(statement, bindings)
  }
  t.teardown(() => { direct.read = read })
  return seen
}

type Query = Record<string, string | string[]>

/** A GET with the query's lists as repeated parameters (`select=a&select=b`). */
const get = async (app: FastifyInstance, path: string, query: Query) =>
  await app.inject({ method: 'GET', url: `/api/v1/table/${path}?${new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, x])))}` })

// The attack of the finding: one search inside an aggregate, 100 times in one select list.
const hundred = Array.from({ length: 100 }, (_, i) => `count(notes @@ 'ka* OR lo*') as c${i}`)

t.test('unit: the budget counts searches across calls; a rule only marks it costly', async (t) => {
  const budget = new ExpressionBudget({ searches: 2 })
  t.equal(budget.costly, false)
  budget.search(0, true)
  t.equal(budget.costly, true, 'a trusted search (a rule) marks the request costly')
  budget.search(0)
  budget.search(0)
  t.throws(() => budget.search(7), new ExpressionError('more than 2 @@ searches in one request (limits.searches: its where, select list and every other expression together)', 7), 'the rule took none of the caller\'s')
  t.equal(DEFAULT_LIMITS.searches, 1, 'one search per request by default')
})

forEachDialect(t, 'searches outside the where count against the same budget', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect })
  await seed(app)
  const refused = async (name: string, path: string, query: Query, what: string, message: RegExp) => {
    const res = await get(app, path, query)
    t.equal(res.statusCode, 400, `${name}: ${res.body.slice(0, 200)}`)
    t.equal(res.headers['fastbase-error-code'], 'FB_ERR_EXPRESSION', name)
    t.match(res.json(), { code: 400, message: new RegExp(`^Invalid ${what}: `) }, name)
    t.match(res.json().message, message, name)
  }
  const searches = /more than 1 @@ search in one request \(limits\.searches/
  await refused('100 searches in aggregates of a select list', 'notes/list', { select: hundred }, 'select', searches)
  await refused('100 searches in aggregates of a select', 'notes/select', { select: hundred }, 'select', searches)
  await refused('the same in one text', 'notes/list', { select: hundred.slice(0, 20).join(', ') }, 'select', searches)
  await refused('two searches as select columns', 'notes/list', { select: "(notes @@ 'ka*') as a, (notes @@ 'lo*') as b" }, 'select', searches)
  await refused('in a view\'s select', 'notes/view/1', { select: hundred }, 'select', searches)
  await refused('one in the where, one in the select list', 'notes/list', { where: "notes @@ 'ka*'", select: "id, (notes @@ 'lo*') as hit" }, 'select', searches)
  await refused('one in the where, one in an aggregate', 'notes/select', { where: "notes @@ 'ka*'", select: "count(notes @@ 'lo*') as n" }, 'select', searches)
  await refused('two in one where', 'notes/list', { where: "notes @@ 'ka*' | title @@ 'lo*'" }, 'where', searches)
  // order and group take column names only: a search there is refused as any expression is.
  const repeated = Array.from({ length: 60 }, () => "notes @@ 'ka*'").join(',')
  await refused('searches in order', 'notes/list', { order: repeated }, 'order', /more than 16 terms/)
  await refused('one search in order', 'notes/list', { order: "notes @@ 'ka*'" }, 'order', /is not a column name/)
  await refused('searches in group', 'notes/list', { group: repeated, select: 'count(*) as n' }, 'group', /more than 16 terms/)
  await refused('one search in group', 'notes/list', { group: "notes @@ 'ka*'", select: 'count(*) as n' }, 'group', /Unknown column/)
  // Within the budget a search runs wherever it is, and answers what it asks.
  const one = await get(app, 'notes/list', { select: "id, count(notes @@ 'lorem') as n", group: 'id', order: 'id' })
  t.equal(one.statusCode, 200, one.body)
  t.same(one.json().items.map((r: Record<string, unknown>) => [r.id, Number(r.n)]), [[1, 1], [2, 1]], 'count() counts the rows it was given, matching or not')
})

forEachDialect(t, 'limits.searches raises the budget, still counted across the request', async (t, dialect) => {
  const app = await buildApp(t, config(5000, 3), { dialect })
  await seed(app)
  const ok = await get(app, 'notes/list', { where: "notes @@ 'kale OR kite'", select: "id, (notes @@ 'lorem') as lorem, count(notes @@ 'dolor') as n", group: 'id', order: 'id' })
  t.equal(ok.statusCode, 200, ok.body)
  t.same(ok.json().items.map((r: Record<string, unknown>) => [r.id, Boolean(r.lorem), Number(r.n)]), [[1, true, 1], [2, false, 1]])
  const over = await get(app, 'notes/list', { where: "notes @@ 'kale' | notes @@ 'kite'", select: "id, (notes @@ 'lorem') as lorem, (notes @@ 'dolor') as dolor" })
  t.equal(over.statusCode, 400, over.body)
  t.match(over.json().message, /^Invalid select: more than 3 @@ searches in one request/)
})

forEachDialect(t, 'every path that writes holds the same budget: nothing is written past it', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect })
  await seed(app)
  const searches = /more than 1 @@ search in one request/
  const post = async (op: string, payload: object) => await app.inject({ method: 'POST', url: `/api/v1/table/notes/${op}`, payload })
  const cases: Array<[string, string, object]> = [
    ['two searches in an insert\'s returning', 'insert', { values: { id: 3, title: 'new' }, returning: "(notes @@ 'ka*') as a, (notes @@ 'lo*') as b" }],
    ['an update\'s where and returning', 'update', { where: "notes @@ 'ka*'", setValues: { title: 'changed' }, returning: "id, (notes @@ 'lo*') as hit" }],
    ['an update\'s where and set', 'update', { where: "notes @@ 'ka*'", set: { title: "concat(title, notes @@ 'lo*')" } }],
    ['two fields of set', 'update', { where: 'id > 0', set: { title: "concat(title, notes @@ 'ka*')", body: "concat(body, notes @@ 'lo*')" } }],
    ['a delete\'s where and returning', 'delete', { where: "notes @@ 'ka*'", returning: "id, (notes @@ 'lo*') as hit" }]
  ]
  for (const [name, op, payload] of cases) {
    const res = await post(op, payload)
    t.equal(res.statusCode, 400, `${name}: ${res.body}`)
    t.equal(res.headers['fastbase-error-code'], 'FB_ERR_EXPRESSION', name)
    t.match(res.json().message, searches, name)
  }
  const rows = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list?order=id', headers: admin })
  t.same(rows.json().items.map((r: Record<string, unknown>) => [r.id, r.title, r.body]), [[1, 'kale', 'lorem ipsum'], [2, 'kite', 'dolor']], 'nothing inserted, changed or deleted')

  // A delete that a before-hook moves into a transaction compiles its where once: one search is one.
  const seen: unknown[] = []
  const off = app.fastbase.hooks.on('notes', 'beforeDelete', (event) => { seen.push(event.where) })
  t.teardown(off)
  const del = await post('delete', { where: "notes @@ 'kite'", returning: 'id' })
  t.equal(del.statusCode, 200, del.body)
  t.same(del.json(), [{ id: 2 }])
  t.same(seen, ["notes @@ 'kite'"], 'the hook ran')
})

forEachDialect(t, 'a search or an expansion anywhere makes the statement costly', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect })
  await seed(app)
  const offThread = watchOffThread(t, app)
  const costly = async (name: string, path: string, query: Query, expected: boolean) => {
    offThread.length = 0
    const res = await get(app, path, query)
    t.equal(res.statusCode, 200, `${name}: ${res.body.slice(0, 200)}`)
    t.ok(offThread.length > 0, `${name}: ran on the direct runner`)
    t.same(offThread, offThread.map(() => expected), `${name}: every statement ${expected ? 'costly' : 'plain'}`)
  }
  await costly('a plain list', 'notes/list', { where: 'id > 0' }, false)
  await costly('a search in the where', 'notes/list', { where: "notes @@ 'ka*'" }, true)
  await costly('a search only in the select list', 'notes/list', { select: "id, (notes @@ 'ka*') as hit" }, true)
  await costly('a search only in an aggregate', 'notes/select', { select: "count(notes @@ 'ka*') as n" }, true)
  await costly('a search only in a view\'s select', 'notes/view/1', { select: "id, (notes @@ 'ka*') as hit" }, true)
  await costly('a search only in the rule', 'public/list', {}, true)
  await costly('a plain view', 'notes/view/1', {}, false)
})

t.test('sqlite: a search only in the select list runs under the statement timeout, off the event loop', async (t) => {
  const app = await buildApp(t, config(1))
  // Enough matching rows that counting them takes well over the 1 ms the limit allows.
  const values = Array.from({ length: 20_000 }, (_, i) => ({ id: i + 1, title: `kale number ${i}`, body: `lorem ipsum dolor ${i} sit amet` }))
  for (let i = 0; i < values.length; i += 2000) {
    const insert = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: admin, payload: { values: values.slice(i, i + 2000), returning: [] } })
    t.equal(insert.statusCode, 200, `rows ${i + 1} to ${i + 2000} inserted`)
  }
  const res = await get(app, 'notes/select', { select: "count(notes @@ 'ka* OR lo* OR do* OR si*') as n" })
  t.equal(res.statusCode, 503, res.body)
  t.equal(res.headers['fastbase-error-code'], 'FB_ERR_STATEMENT_TIMEOUT')
  const plain = await get(app, 'notes/select', { select: 'count(*) as n' })
  t.same(plain.json(), [{ n: 20_000 }], 'a plain count runs in place, with no timeout on SQLite')
})
