// Read plans are compiled once per shape and caller class and reused: callers who differ only in
// bound values share a plan, callers whose values decided the SQL never do. Alternating callers over
// the same shapes must each get exactly their own rows, on both dialects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { planCacheSize } from '../../../lib/crud/read-plans.js'

const config: DatabaseSettings = {
  jwtSecret: 'plans-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'posts',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'title', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'published == true | owner == auth.uid', viewRule: 'published == true | owner == auth.uid', createRule: null, updateRule: null, deleteRule: null }]
    },
    {
      name: 'memos',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'body', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: "auth.role == 'staff'", viewRule: "auth.role == 'staff' & request.headers.desk == 'front'", createRule: null, updateRule: null, deleteRule: null }]
    }
  ]
}

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    const role = request.headers['x-test-role']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: typeof role === 'string' ? role : 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

forEachDialect(t, 'plans shared only within a caller class', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const admin = { authorization: `Bearer ${adminToken}` }
  await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: admin, payload: { values: [
    { owner: 'alice', published: true, title: 'a1' }, { owner: 'alice', published: false, title: 'a2' },
    { owner: 'bob', published: true, title: 'b1' }, { owner: 'bob', published: false, title: 'b2' }] } })
  await app.inject({ method: 'POST', url: '/api/v1/table/memos/insert', headers: admin, payload: { values: [{ body: 'm1' }] } })

  const as = (uid?: string, role?: string): Record<string, string> => ({ ...(uid === undefined ? {} : { 'x-test-uid': uid }), ...(role === undefined ? {} : { 'x-test-role': role }) })
  const titles = async (headers: Record<string, string>) =>
    ((await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { select: 'title', where: "title != 'zz'" }, headers })).json().items as Array<{ title: string }>).map((r) => r.title)
  const expected: Array<[string, Record<string, string>, string[]]> = [
    ['anonymous', as(), ['a1', 'b1']],
    ['alice', as('alice'), ['a1', 'a2', 'b1']],
    ['bob', as('bob'), ['a1', 'b1', 'b2']],
    ['admin', admin, ['a1', 'a2', 'b1', 'b2']],
    ['carol', as('carol'), ['a1', 'b1']]
  ]
  // Twice round, interleaved: the second round runs on cached plans.
  for (const round of [1, 2]) {
    for (const [who, headers, want] of expected) t.same(await titles(headers), want, `${who}, round ${round}`)
  }
  const skipped = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { select: 'title', skipTotal: 'true', limit: '1' }, headers: as('alice') })
  t.same(skipped.json(), { items: [{ title: 'a1' }], total: -1 }, 'skipTotal: the page without counting (total -1)')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { select: 'title', limit: '1' }, headers: as('alice') })).json().total, 3, 'the same shape counts without it')
  const view = async (headers: Record<string, string>) => (await app.inject({ method: 'GET', url: '/api/v1/table/posts/view/2', headers })).statusCode
  t.equal(await view(as('alice')), 200, 'alice sees her draft')
  t.equal(await view(as('bob')), 404, 'bob, on the plan alice built, does not')
  t.equal(await view(as()), 404, 'nor does an anonymous caller')
  t.equal(await view(as('alice')), 200, 'alice again')

  const memos = async (headers: Record<string, string>) => (await app.inject({ method: 'GET', url: '/api/v1/table/memos/select', headers })).json().length as number
  for (const round of [1, 2]) {
    t.equal(await memos(as('s1', 'staff')), 1, `staff sees memos (round ${round})`)
    t.equal(await memos(as('u1', 'user')), 0, `a user does not: a folded role is part of the class (round ${round})`)
    t.equal(await memos(as('s2', 'staff')), 1, `another staff member shares the staff plan (round ${round})`)
  }
  const memo = async (headers: Record<string, string>) => (await app.inject({ method: 'GET', url: '/api/v1/table/memos/view/1', headers })).statusCode
  t.equal(await memo({ ...as('s1', 'staff'), desk: 'front' }), 200, 'request values in a rule: front desk')
  t.equal(await memo({ ...as('s1', 'staff'), desk: 'back' }), 404, 'another value of the same header is another class')
  t.equal(await memo(as('s1', 'staff')), 404, 'and so is its absence')
})

t.test('postgres: prepared statements per connection stay bounded', { skip: process.env.FASTBASE_TEST_PG_URL ? false : 'PostgreSQL not configured' }, async (t) => {
  // One pool connection, so every statement is prepared on it.
  process.env.FASTBASE_PG_POOL_MAX = '1'
  t.teardown(() => { delete process.env.FASTBASE_PG_POOL_MAX })
  const app = await buildApp(t, config, { dialect: 'postgres', setup: simulateUsers })
  for (let i = 0; i < 300; i++) {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/posts/select', query: { where: `id in (${Array(i + 1).fill(0).join(',')})` } })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  const [{ n }] = (await app.fastbase.db.raw('SELECT count(*) AS n FROM pg_prepared_statements')).rows as Array<{ n: number }>
  t.ok(n > 0 && n <= 256, `named statements on the connection: ${n} (at most 256)`)
  const again = await app.inject({ method: 'GET', url: '/api/v1/table/posts/select', query: { where: 'id != 5', select: 'id' } })
  t.equal(again.statusCode, 200, 'statements dropped with DEALLOCATE are prepared again when they recur')
})

t.test('the plan cache stays bounded by count and bytes', async (t) => {
  const app = await buildApp(t, config, { setup: simulateUsers })
  for (let i = 0; i < 2100; i++) {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/posts/select', query: { where: `id != ${i}` } })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  const { shapes, bytes } = planCacheSize()
  t.ok(shapes <= 2000, `shapes kept: ${shapes} (at most 2000)`)
  t.ok(bytes > 0 && bytes <= 16 * 1024 * 1024, `SQL text kept: ${bytes} bytes`)
  const long = Array.from({ length: 100 }, (_, i) => `coalesce(${Array(60).fill('title').join(', ')}) as c${i}`)
  const before = planCacheSize().bytes
  const wide = await app.inject({ method: 'POST', url: '/api/v1/table/posts/select', payload: { select: long, limit: 1 } })
  t.equal(wide.statusCode, 200, 'a very long select still works')
  t.equal(planCacheSize().bytes, before, 'but its plan is not kept')
})

forEachDialect(t, 'list?estimateTotal: the planner estimate for large results, exact counts otherwise', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const db = app.fastbase.db
  const rows = dialect === 'postgres'
    ? "SELECT 'x', true, 't' || n FROM generate_series(1, 12000) AS n"
    : "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 12000) SELECT 'x', 1, 't' || n FROM s"
  await db.raw(`INSERT INTO posts (owner, published, title) ${rows}`)
  if (dialect === 'postgres') await db.raw('ANALYZE posts')
  // Deleted rows keep their pages until a vacuum: PostgreSQL's estimate still sees about 12,000.
  await db.raw('DELETE FROM posts WHERE id > 7000')
  const admin = { authorization: `Bearer ${adminToken}` }
  const total = async (query: Record<string, string>) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { limit: '1', select: 'id', ...query }, headers: admin })
    t.equal(res.statusCode, 200, res.body)
    return res.json().total as number
  }
  t.equal(await total({}), 7000, 'exact by default')
  const estimated = await total({ estimateTotal: 'true' })
  if (dialect === 'postgres') {
    t.ok(estimated >= 10_000 && estimated <= 15_000, `the planner's estimate (${estimated}), not the exact 7,000`)
  } else {
    t.equal(estimated, 7000, 'SQLite has no planner estimate: exact')
  }
  t.equal(await total({ estimateTotal: 'true', where: 'id <= 10' }), 10, 'a small estimate is replaced by the exact count')
  t.equal(await total({ estimateTotal: 'true', where: "title == 't5'", select: 'title', group: 'title' }), 1, 'grouped: counted groups')
  t.equal(await total({ estimateTotal: 'true', where: 'id < 0' }), 0, 'nothing matches')
  const anonymous = await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', query: { limit: '1', estimateTotal: 'true', where: 'id <= 3' } })
  t.same(anonymous.json().total, 3, 'rules apply to the estimate query as to the count')
})

// A read's shape key is kept while one shape repeats (lib/crud/plan-cache.ts#repeatedKey): shapes that
// alternate (another order, limit, offset, select list, the same list in another order) must each
// still get their own plan, on every round.
forEachDialect(t, 'alternating read shapes each answer as their own', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const admin = { authorization: `Bearer ${adminToken}` }
  await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: admin, payload: { values: [
    { owner: 'a', published: true, title: 't1' }, { owner: 'b', published: true, title: 't2' }, { owner: 'c', published: true, title: 't3' }] } })
  const shapes: Array<[string, unknown]> = [
    ['order=id&limit=2&select=title', [{ title: 't1' }, { title: 't2' }]],
    ['order=-id&limit=2&select=title', [{ title: 't3' }, { title: 't2' }]],
    ['order=-id&limit=1&select=title', [{ title: 't3' }]],
    ['order=-id&limit=1&offset=1&select=title', [{ title: 't2' }]],
    ['order=-id&limit=1&select=owner,title', [{ owner: 'c', title: 't3' }]],
    ['order=-id&limit=1&select=title,owner', [{ title: 't3', owner: 'c' }]]
  ]
  for (let round = 0; round < 2; round++) {
    for (const [query, rows] of shapes) {
      const res = await app.inject({ method: 'GET', url: `/api/v1/table/posts/select?${query}` })
      t.equal(res.statusCode, 200, res.body)
      t.equal(res.body, JSON.stringify(rows), `round ${round + 1}, ${query}: its own rows and columns, in order`)
    }
  }
})
