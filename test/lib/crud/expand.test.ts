// Relation expand (decision D37): `owner(name, id)` in a select or returning list reads the row a
// foreign key references as a nested object, under the target table's listRule and noSelect, in the
// same statement, with the same answers on both dialects and through the real response serializer.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { DEFAULT_LIMITS } from '../../../lib/limits.js'
import { ExpressionBudget } from '../../../lib/expr/budget.js'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { postgres } from '../../../lib/dialects/postgres.js'
import { outputColumns } from '../../../lib/crud/columns.js'
import type { CrudContext } from '../../../lib/crud/context.js'
import type { DialectName } from '../../../lib/dialects/types.js'
import { FastbaseError } from '../../../lib/errors.js'

const open = { createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const tables: TableData[] = [
  {
    name: 'orgs',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
      { name: 'name', type: 'text', sqlType: 'text' }
    ],
    // Decided by the caller's role: staff and everyone else get different plans.
    extensions: [{ name: 'rules', listRule: "auth.role == 'staff'", viewRule: 'true', ...open }]
  },
  {
    name: 'users',
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
      { name: 'name', type: 'text', sqlType: 'text' },
      { name: 'email', type: 'text', sqlType: 'text', noSelect: true },
      { name: 'active', type: 'bool', sqlType: 'boolean', notNull: true },
      { name: 'meta', type: 'json', sqlType: 'json' },
      { name: 'joined', type: 'date', sqlType: 'timestamp' },
      { name: 'score', type: 'number', sqlType: 'real' },
      { name: 'org', type: 'relation', sqlType: 'integer', foreignKey: { table: 'orgs', column: 'id' } }
    ],
    // Bound to the caller's uid: users of one class share a plan and must still see only their rows.
    extensions: [{ name: 'rules', listRule: 'active == true | id == auth.uid', viewRule: 'true', ...open }]
  },
  { name: 'notes', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'body', type: 'text', sqlType: 'text' }] },
  {
    name: 'tags',
    fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'name', type: 'text', sqlType: 'text' }],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', ...open }]
  },
  {
    name: 'posts',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
      { name: 'title', type: 'text', sqlType: 'text' },
      { name: 'owner', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } },
      { name: 'editor', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } },
      { name: 'parent', type: 'relation', sqlType: 'integer', foreignKey: { table: 'posts', column: 'id' } },
      { name: 'note', type: 'relation', sqlType: 'integer', foreignKey: { table: 'notes', column: 'id' } },
      // Hidden from non-admins: expanding it would tell them whose it is.
      { name: 'reviewer', type: 'relation', sqlType: 'text', noSelect: true, foreignKey: { table: 'users', column: 'id' } }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', ...open }]
  }
]

const config: DatabaseSettings = { jwtSecret: 'expand-secret', appUrl: 'http://localhost:3000', tables, limits: { columns: 12, cells: 50, relations: 4 } }

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    const role = request.headers['x-test-role']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: typeof role === 'string' ? role : 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

const admin = { authorization: `Bearer ${adminToken}` }
const as = (uid: string, role = 'user'): Record<string, string> => ({ 'x-test-uid': uid, 'x-test-role': role })

async function seeded (t: Test, dialect: DialectName): Promise<FastifyInstance> {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const insert = async (table: string, values: unknown) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: admin, payload: { values } })
    if (res.statusCode !== 200) throw new Error(`seeding ${table}: ${res.body}`)
  }
  await insert('orgs', [{ id: 1, name: 'Acme' }])
  await insert('notes', [{ id: 1, body: 'n1' }])
  await insert('users', [
    { id: 'u1', name: 'Alice', email: 'a@x.io', active: true, meta: { tier: 'gold', n: [1, 2] }, joined: '2026-01-05T10:00:00.250Z', score: 1.5, org: 1 },
    { id: 'u2', name: 'Bob', email: 'b@x.io', active: false, meta: null, joined: null, score: 2, org: null },
    { id: 'u3', name: 'Carol', email: 'c@x.io', active: true, meta: [], joined: '2025-06-01T00:00:00Z', score: null, org: 1 }
  ])
  await insert('posts', [
    { title: 'p1', owner: 'u1', editor: 'u3', parent: null, note: 1, reviewer: 'u1' },
    { title: 'p2', owner: 'u2', editor: 'u1', parent: 1, note: null },
    { title: 'p3', owner: null, editor: null, parent: 2, note: null },
    { title: 'p4', owner: 'u3', editor: 'u2', parent: 3, note: null },
    { title: 'p5', owner: 'u1', editor: null, parent: 4, note: null },
    { title: 'p6', owner: 'u1', editor: null, parent: 5, note: null }
  ])
  return app
}

const get = async (app: FastifyInstance, op: string, query: Record<string, string>, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'GET', url: `/api/v1/table/posts/${op}`, query, headers })

forEachDialect(t, 'expanded relations: values decoded as at the top level, in one answer', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const res = await get(app, 'select', { select: 'title, owner(*), editor(name) as by', where: "title in ('p1', 'p2', 'p3')" }, admin)
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json(), [
    {
      title: 'p1',
      owner: { id: 'u1', name: 'Alice', email: 'a@x.io', active: true, meta: { tier: 'gold', n: [1, 2] }, joined: '2026-01-05T10:00:00.250Z', score: 1.5, org: 1 },
      by: { name: 'Carol' }
    },
    { title: 'p2', owner: { id: 'u2', name: 'Bob', email: 'b@x.io', active: false, meta: null, joined: null, score: 2, org: null }, by: { name: 'Alice' } },
    { title: 'p3', owner: null, by: null }
  ], 'admins see every row and column; a null key gives null; bool, json, date and number decoded')
  t.same(Object.keys(res.json()[0].owner), ['id', 'name', 'email', 'active', 'meta', 'joined', 'score', 'org'], 'keys in the order asked for (config order for *)')

  const nested = await get(app, 'select', { select: 'title, owner(name, org(name)), parent(title, owner(name)) as up', where: "title == 'p2'" }, admin)
  t.same(nested.json(), [{ title: 'p2', owner: { name: 'Bob', org: null }, up: { title: 'p1', owner: { name: 'Alice' } } }], 'nested levels, and a table expanding itself')
  const byTable = await app.inject({ method: 'GET', url: '/api/v1/table/users/select', query: { select: 'name, orgs(name)', where: "id == 'u1'" }, headers: admin })
  t.same(byTable.json(), [{ name: 'Alice', orgs: { name: 'Acme' } }], 'the table form: key = the table name')
  const star = await app.inject({ method: 'GET', url: '/api/v1/table/users/select', query: { select: 'name, org()', where: "id == 'u3'" }, headers: admin })
  t.same(star.json(), [{ name: 'Carol', org: { id: 1, name: 'Acme' } }], 'an empty list means every visible column')

  const list = await get(app, 'list', { select: 'title, owner(name)', where: "title == 'p1'" }, admin)
  t.same(list.json(), { items: [{ title: 'p1', owner: { name: 'Alice' } }], total: 1 }, 'list')
  const view = await get(app, 'view/2', { select: 'title, editor(name, active)' }, admin)
  t.same(view.json(), { title: 'p2', editor: { name: 'Alice', active: true } }, 'view')
})

forEachDialect(t, 'write returning expands too', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const post = async (url: string, payload: Record<string, unknown>, headers: Record<string, string> = admin) => await app.inject({ method: 'POST', url: `/api/v1/table/posts/${url}`, payload, headers })
  const inserted = await post('insert', { values: { title: 'n1', owner: 'u3', parent: 1 }, returning: 'title, owner(name, active), parent(title)' })
  t.same(inserted.json(), [{ title: 'n1', owner: { name: 'Carol', active: true }, parent: { title: 'p1' } }], 'insert')
  const updated = await post('update', { where: "title == 'n1'", setValues: { owner: 'u1' }, returning: ['title', 'owner(name) as who'] })
  t.same(updated.json(), [{ title: 'n1', who: { name: 'Alice' } }], 'update: the row as written')
  const edited = await post('edit/7?returning=title,editor(name)', { editor: 'u3' })
  t.same(edited.json(), { title: 'n1', editor: { name: 'Carol' } }, 'edit')
  const deleted = await post('delete', { where: "title == 'n1'", returning: 'title, owner(org(name))' })
  t.same(deleted.json(), [{ title: 'n1', owner: { org: { name: 'Acme' } } }], 'delete, nested')
  const replaced = await post('insert', { values: { id: 1, title: 'p1b', owner: 'u3' }, or: 'REPLACE', returning: 'title, owner(name)' })
  t.same(replaced.json(), [{ title: 'p1b', owner: { name: 'Carol' } }], 'insert or=REPLACE (the upsert statement)')
  const anon = await post('insert', { values: { title: 'n2', owner: 'u2' }, returning: 'title, owner(name)' }, {})
  t.same(anon.json(), [{ title: 'n2', owner: null }], 'a row the caller may not list is null in returning as well')
})

forEachDialect(t, 'the target table\'s rules and hidden columns hold for every caller, plans included', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const owners = async (headers: Record<string, string>) =>
    ((await get(app, 'select', { select: 'title, owner(name, org(name))', where: "title in ('p1', 'p2')" }, headers)).json() as Array<{ owner: unknown }>).map((r) => r.owner)
  // Twice round, interleaved: the second round runs on cached plans.
  for (const round of [1, 2]) {
    t.same(await owners({}), [{ name: 'Alice', org: null }, null], `anonymous: inactive Bob is null, orgs hidden (round ${round})`)
    t.same(await owners(as('u2')), [{ name: 'Alice', org: null }, { name: 'Bob', org: null }], `Bob sees himself (round ${round})`)
    t.same(await owners(as('u3')), [{ name: 'Alice', org: null }, null], `Carol, on Bob's plan, does not see Bob (round ${round})`)
    t.same(await owners(as('u3', 'staff')), [{ name: 'Alice', org: { name: 'Acme' } }, null], `staff see orgs: the folded role is part of the class (round ${round})`)
    t.same(await owners(admin), [{ name: 'Alice', org: { name: 'Acme' } }, { name: 'Bob', org: null }], `admins see everything (round ${round})`)
  }
  const hidden = await get(app, 'select', { select: 'title, owner(name, email)' })
  t.equal(hidden.statusCode, 400)
  t.match(hidden.json(), { code: 400, message: /Invalid select: Unknown column "email"/ }, 'a noSelect column of the target is unknown to non-admins')
  const star = await get(app, 'select', { select: 'owner(*)', where: "title == 'p1'" })
  t.same(Object.keys(star.json()[0].owner), ['id', 'name', 'active', 'meta', 'joined', 'score', 'org'], '* leaves it out')

  // The caller's where cannot name the expanded row; a relation path reads it as the caller sees it
  // (decision D95), so it cannot probe hidden ones either: Bob is inactive, hidden from anonymous callers.
  for (const where of ["owner(name) == 'Bob'", "users.name == 'Bob'"]) {
    const probe = await get(app, 'select', { select: 'title, owner(name)', where })
    t.equal(probe.statusCode, 400, `where ${where}: 400`)
  }
  const hiddenOwner = await get(app, 'select', { select: 'title', where: "owner.name == 'Bob'" })
  t.same({ status: hiddenOwner.statusCode, body: hiddenOwner.json() }, { status: 200, body: [] }, 'a path to a hidden owner reads null: nothing matches')
  const shownOwner = await get(app, 'select', { select: 'title', where: "owner.name == 'Alice'", order: 'title' })
  t.same(shownOwner.json(), [{ title: 'p1' }, { title: 'p5' }, { title: 'p6' }], 'a path to a visible owner reads its name')
  const inactive = await get(app, 'select', { select: 'title, owner(name)', where: "owner == 'u2'" })
  t.same(inactive.json(), [{ title: 'p2', owner: null }], 'filtering by the key itself (the caller\'s own column) still shows nothing of the hidden row')

  t.equal((await get(app, 'select', { select: 'title, note(body)' }, as('u1'))).statusCode, 403, 'a target without a listRule is admin-only: 403')
  const hiddenKey = await get(app, 'select', { select: 'title, reviewer(name)' }, as('u1'))
  t.match(hiddenKey.json(), { code: 400, message: /Unknown function or relation "reviewer"/ }, 'a noSelect foreign key is no relation for non-admins')
  t.match((await get(app, 'select', { select: 'users(name) as u' })).json(), { code: 400, message: /foreign keys owner, editor of posts/ }, 'nor is it named to them')
  t.same((await get(app, 'select', { select: 'reviewer(name)', where: "title == 'p1'" }, admin)).json(), [{ reviewer: { name: 'Alice' } }], 'admins may expand it')
  t.same((await get(app, 'select', { select: 'note(body)', where: "title == 'p1'" }, admin)).json(), [{ note: { body: 'n1' } }], 'admins may expand it')
})

forEachDialect(t, 'what cannot be expanded is a 400 naming the problem', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const cases: Array<[string, RegExp]> = [
    ['title, nosuch(name) as x', /Unknown function or relation "nosuch"/],
    ['title, tags(name) as t', /Unknown function or relation "tags": posts has no foreign key/],
    ['title, users(name) as u', /could be any of the foreign keys owner, editor, reviewer of posts: name the field/],
    ['title, owner(name, nosuch)', /Unknown column "nosuch"/],
    ['title, owner(lower(name))', /"lower" is not a relation of users: owner\(\.\.\.\) takes column names, \* or relations/],
    ['title, owner(name, 1)', /owner\(\.\.\.\) takes column names, \* or relations/],
    ['title, owner(name as n)', /Unexpected identifier "as"/],
    ['title, owner(name, name)', /duplicate column "name" in owner/],
    ['title, owner(name, tags(name))', /"tags" is not a relation of users/],
    ['owner(name) as title', /"title" is a field of posts/],
    ['owner(name), owner(id)', /duplicate column "owner"/],
    ['parent(parent(parent(parent(title))))', /relations nest at most 3 levels deep/],
    ['title, owner(*), editor(*)', /more than 12 columns/]
  ]
  for (const [select, message] of cases) {
    const res = await get(app, 'select', { select }, admin)
    t.equal(res.statusCode, 400, `${select}: 400`)
    t.match(res.json(), { code: 400, message }, select)
  }
  const deepest = await get(app, 'select', { select: 'parent(parent(parent(title)))', where: 'id == 4' }, admin)
  t.same(deepest.json(), [{ parent: { parent: { parent: { title: 'p1' } } } }], 'three levels work')
  const returning = await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: admin, payload: { values: { title: 'x' }, returning: 'nosuch(id) as n' } })
  t.match(returning.json(), { code: 400, message: /Invalid returning: Unknown function or relation/ }, 'returning the same way, before anything is written')
  t.equal((await get(app, 'select', { select: 'title' }, admin)).json().length, 6, 'nothing was inserted')
})

forEachDialect(t, 'an expansion counts its columns toward the answer size', async (t, dialect) => {
  const app = await seeded(t, dialect)
  // cells: 50. Eight users columns per row as admin: 6 rows fit, all the posts there are.
  t.equal((await get(app, 'select', { select: 'owner(*)' }, admin)).json().length, 6)
  const wide = await get(app, 'select', { select: 'owner(*), editor(name, active) as e' }, admin)
  t.equal(wide.statusCode, 200, wide.body)
  t.equal(wide.json().length, 5, '10 values per row: 5 rows of 50 cells')
  const update = async (returning: string) => await app.inject({ method: 'POST', url: '/api/v1/table/posts/update', headers: admin, payload: { where: 'id > 0', setValues: { title: 't' }, returning } })
  const tooWide = await update('owner(*), editor(name, active) as e')
  t.match(tooWide.json(), { code: 400, message: /returning 6 rows of 10 columns is more than the 50 values/ }, 'returning: 6 rows of 10 values do not fit')
  t.equal((await update('owner(*)')).json().length, 6, '6 rows of 8 do')
})

t.test('the SQL of an expansion, per dialect', async (t) => {
  const expected = {
    sqlite: {
      sql: '(SELECT json_object(\'name\', "fb-expand-1"."name", \'org\', (SELECT json_object(\'name\', "fb-expand-2"."name") FROM "orgs" AS "fb-expand-2" WHERE FALSE LIMIT 1)) ' +
        'FROM "users" AS "fb-expand-1" WHERE ("fb-expand-1"."id" = "posts"."owner") AND ((("fb-expand-1"."active" = ?) OR ("fb-expand-1"."id" IS ?))) LIMIT 1)',
      bindings: [1, 'u1']
    },
    postgres: {
      sql: '(SELECT (jsonb_build_object(\'name\', "fb-expand-1"."name", \'org\', (SELECT (jsonb_build_object(\'name\', "fb-expand-2"."name")) FROM "orgs" AS "fb-expand-2" WHERE FALSE LIMIT 1))) ' +
        'FROM "users" AS "fb-expand-1" WHERE ("fb-expand-1"."id" = "posts"."owner") AND ((("fb-expand-1"."active" = CAST(? AS boolean)) OR ("fb-expand-1"."id" IS NOT DISTINCT FROM CAST(? AS text)))) LIMIT 1)',
      bindings: [true, 'u1']
    }
  }
  for (const dialect of [sqlite, postgres]) {
    const descriptors = describeTables(tables, dialect)
    const ctx = { dialect, table: descriptors.get('posts')!, auth: { ...ANONYMOUS, uid: 'u1' }, limits: DEFAULT_LIMITS, applyRules: true, budget: new ExpressionBudget(DEFAULT_LIMITS) } as unknown as CrudContext
    const [title, owner] = outputColumns(ctx, 'select', 'title, owner(name, org(name))')
    t.equal(title.nested, undefined)
    // Each level reads its table under an alias; the users rule is inside its subquery, the orgs rule folded to FALSE for a non-staff caller.
    t.same(owner.fragment, expected[dialect.name], `${dialect.name}: one correlated subquery per level`)
    t.same(owner.nested?.map((c) => c.key), ['name', 'org'])

    const pairs = Array.from({ length: 120 }, (_, i) => ({ key: `k${i}`, sql: String(i) }))
    const wide = dialect.jsonObject(pairs)
    const calls = dialect.name === 'sqlite' ? wide.match(/json_object\(/g) : wide.match(/jsonb_build_object\(/g)
    t.equal(calls?.length, 3, `${dialect.name}: at most 50 pairs per call (PostgreSQL takes 100 arguments)`)
    t.match(wide, dialect.name === 'sqlite' ? /^json_patch\(json_patch\(json_object\('k0', 0/ : /^\(jsonb_build_object\('k0', 0.*\) \|\| jsonb_build_object\('k50', 50/)
  }
})

t.test('an expansion needs the caller to be allowed to list the target', async (t) => {
  const descriptors = describeTables(tables, sqlite)
  const ctx = { dialect: sqlite, table: descriptors.get('posts')!, auth: ANONYMOUS, limits: DEFAULT_LIMITS, applyRules: true, budget: new ExpressionBudget(DEFAULT_LIMITS) } as unknown as CrudContext
  t.throws(() => outputColumns(ctx, 'select', 'note(body)'), FastbaseError, 'notes has no listRule: 403 before any SQL')
})

// What a select with relations costs grows with the rows it builds objects for, times the relations:
// their number is bounded, and what would build them for rows the answer does not hold is refused.
forEachDialect(t, 'relations: bounded per list, never built for rows outside the page', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const four = 'title, parent(parent(parent(title))) as up, owner(name)'
  const ok = await get(app, 'select', { select: four, where: "title == 'p5'" }, admin)
  t.same(ok.json(), [{ title: 'p5', up: { parent: { parent: { title: 'p2' } } }, owner: { name: 'Alice' } }], 'four relations: at the limit (every level counts)')
  const five = await get(app, 'select', { select: `${four}, editor(name)` }, admin)
  t.equal(five.statusCode, 400, 'a fifth relation: 400')
  t.match(five.json().message, /more than 4 relations \(limits\.relations/, 'the message names the limit')
  const returning = await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: admin, payload: { values: { title: 'p7' }, returning: `${four}, editor(name)` } })
  t.equal(returning.statusCode, 400, 'returning lists count the same way')
  t.equal((await get(app, 'select', { where: "title == 'p7'" }, admin)).json().length, 0, 'nothing was written')

  const distinct = await get(app, 'select', { select: 'owner(name) as o', distinct: 'true' }, admin)
  t.equal(distinct.statusCode, 400, 'distinct over an expanded relation: 400 (it would build every matching row\'s object)')
  t.match(distinct.json().message, /"o" is an expanded relation/)
  t.equal((await get(app, 'select', { select: 'owner', distinct: 'true' }, admin)).statusCode, 200, 'distinct over the foreign key field itself is fine')
  const sorted = await get(app, 'select', { select: 'title, owner(name) as o', order: '-o' }, admin)
  t.equal(sorted.statusCode, 400, 'ordering by an expanded relation: 400')
  t.match(sorted.json().message, /"o" is an expanded relation/)
  const byKey = await get(app, 'select', { select: 'title, owner(name) as o', order: 'owner, -title' }, admin)
  t.same(byKey.json().map((r: { title: string }) => r.title), ['p3', 'p6', 'p5', 'p1', 'p2', 'p4'], 'ordering by the foreign key field beside its expansion')

  // The page is chosen before its rows are expanded: same rows, same order, same objects as
  // reading the whole list and slicing it.
  const select = 'title, parent(title, owner(name)) as up, lower(title) as t'
  for (const order of [undefined, '-title', 't', '-owner, title']) {
    const query: Record<string, string> = order === undefined ? { select } : { select, order }
    const whole = (await get(app, 'list', query, admin)).json()
    const page = await get(app, 'list', { ...query, offset: '2', limit: '3' }, admin)
    t.equal(page.statusCode, 200, page.body)
    t.same(page.json(), { items: whole.items.slice(2, 5), total: whole.total }, `offset 2, limit 3, order ${order ?? '(key)'}`)
  }
  const doc = await app.inject({ method: 'GET', url: '/api/v1/doc' })
  t.match(doc.body, /at most 4 relations, every level counting one/, 'the API document states the limit')
  const anonymous = await get(app, 'list', { select: 'title, owner(name)', offset: '1', limit: '2', where: "title in ('p1', 'p2', 'p3')" })
  t.same(anonymous.json(), { items: [{ title: 'p2', owner: null }, { title: 'p3', owner: null }], total: 3 }, 'the rules hold on the page as chosen: a hidden owner is null')
})
