// The table API on both dialects: every endpoint, the rules matrix (anonymous / user / admin x five
// rules), typed values, validation and constraint errors, paging and ordering.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'

const timestamps = [
  { name: 'created', type: 'date', sqlType: 'timestamp', usage: 'record_created', default: { q: 'CURRENT_TIMESTAMP' }, notNull: true, noInsert: true, noUpdate: true },
  { name: 'updated', type: 'date', sqlType: 'timestamp', usage: 'record_updated', default: { q: 'CURRENT_TIMESTAMP' }, notNull: true, noInsert: true, noUpdate: true }
] as const

export const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  maxLimit: 50,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true, noUpdate: true },
        { name: 'name', type: 'text', sqlType: 'text', notNull: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: 'id == auth.uid', deleteRule: null }]
    },
    {
      name: 'posts',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true, noUpdate: true },
        ...timestamps,
        { name: 'owner', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'slug', type: 'text', sqlType: 'text', unique: true },
        { name: 'status', type: 'select', sqlType: 'text', values: ['draft', 'published'], notNull: true, default: { l: 'draft' } },
        { name: 'views', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 }, check: { q: 'views >= 0' } },
        { name: 'score', type: 'number', sqlType: 'real' },
        { name: 'featured', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
        { name: 'email', type: 'email', sqlType: 'text' },
        { name: 'site', type: 'url', sqlType: 'text' },
        { name: 'data', type: 'json', sqlType: 'json' },
        { name: 'due', type: 'date', sqlType: 'timestamp' },
        { name: 'secret', type: 'text', sqlType: 'text', noSelect: true },
        { name: 'locked_note', type: 'text', sqlType: 'text', noInsert: true, noUpdate: true }
      ],
      extensions: [{
        name: 'rules',
        listRule: 'status == \'published\' | owner == auth.uid',
        viewRule: 'status == \'published\' | owner == auth.uid',
        createRule: 'auth.uid != null & owner == auth.uid & views < 1000',
        updateRule: 'owner == auth.uid & new.owner == owner',
        deleteRule: 'owner == auth.uid'
      }]
    },
    {
      name: 'vault',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'v', type: 'text', sqlType: 'text' }
      ]
    },
    {
      name: 'half',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'v', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true' }]
    }
  ]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }
// User identity is simulated by a test-only hook until user tokens exist (auth issue); rules see the same `auth`.
const as = (uid: string) => ({ 'x-test-uid': uid })

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    const team = request.headers['x-test-team']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid, team: team ?? null } }
  })
}

async function seed (app: FastifyInstance): Promise<void> {
  const users = await app.inject({ method: 'POST', url: '/api/v1/table/users/insert', headers: ADMIN, payload: { values: [{ id: 'alice', name: 'Alice' }, { id: 'bob', name: 'Bob' }] } })
  if (users.statusCode !== 200) throw new Error(users.body)
  const posts = await app.inject({
    method: 'POST',
    url: '/api/v1/table/posts/insert',
    headers: ADMIN,
    payload: {
      values: [
        { id: 'p1', owner: 'alice', title: 'Alice public', slug: 'a-pub', status: 'published', views: 5, secret: 'x1' },
        { id: 'p2', owner: 'alice', title: 'Alice draft', slug: 'a-draft', status: 'draft', views: 1, secret: 'x2' },
        { id: 'p3', owner: 'bob', title: 'Bob public', slug: 'b-pub', status: 'published', views: 50, secret: 'x3' },
        { id: 'p4', owner: 'bob', title: 'Bob draft', slug: 'b-draft', status: 'draft', views: 0, secret: 'x4' }
      ]
    }
  })
  if (posts.statusCode !== 200) throw new Error(posts.body)
}

forEachDialect(t, 'table API', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  await seed(app)
  const get = (url: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, query, headers })
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url, payload: payload as object, headers })
  const ids = (res: { json: () => unknown }) => (res.json() as Array<{ id: string }>).map((r) => r.id)

  t.test('rules matrix: list/select/view', async (t) => {
    t.same(ids(await get('/api/v1/table/posts/select')), ['p1', 'p3'], 'anonymous sees published')
    t.same(ids(await get('/api/v1/table/posts/select', {}, as('alice'))), ['p1', 'p2', 'p3'], 'alice sees her draft')
    t.same(ids(await get('/api/v1/table/posts/select', {}, ADMIN)), ['p1', 'p2', 'p3', 'p4'], 'admin sees all')
    const list = await get('/api/v1/table/posts/list', { limit: '1' }, as('bob'))
    t.same(list.json().total, 3, 'total counts rule-filtered rows, not the page')
    t.same(list.json().items.length, 1)
    t.same(ids(await get('/api/v1/table/posts/select', { where: '(1 == 1) | (2 == 2)' })), ['p1', 'p3'], 'a where cannot widen the rule')
    t.equal((await get('/api/v1/table/posts/view/p2')).statusCode, 404, 'hidden by viewRule: 404')
    t.same((await get('/api/v1/table/posts/view/p2', {}, as('alice'))).json().title, 'Alice draft')
    t.equal((await get('/api/v1/table/posts/view/nope', {}, ADMIN)).statusCode, 404)
    t.same((await get('/api/v1/table/posts/view/p1', { where: 'views > 100' })).statusCode, 404, 'view where narrows')
  })

  t.test('rules matrix: create', async (t) => {
    const anon = await post('/api/v1/table/posts/insert', { values: { owner: 'alice', title: 'x' } })
    t.equal(anon.statusCode, 403)
    t.same(anon.json(), { code: 403, message: 'Forbidden', data: {} })
    const wrongOwner = await post('/api/v1/table/posts/insert', { values: { owner: 'bob', title: 'x' } }, as('alice'))
    t.equal(wrongOwner.statusCode, 403)
    const ok = await post('/api/v1/table/posts/insert', { values: { owner: 'alice', title: 'New', slug: 'new' }, returning: '*' }, as('alice'))
    t.equal(ok.statusCode, 200, ok.body)
    const [row] = ok.json()
    t.equal(row.id.length, 22, 'autoSetUid: 22-char id')
    t.match(row.id, /^[A-Za-z0-9_-]{22}$/)
    t.equal(row.status, 'draft', 'column default applied')
    t.equal(row.views, 0)
    t.equal(row.featured, false)
    t.match(row.created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    t.notOk('secret' in row, 'noSelect field hidden from the user')
    const batch = await post('/api/v1/table/posts/insert', { values: [{ owner: 'alice', title: 'ok', slug: 'b1' }, { owner: 'alice', title: 'too many views', slug: 'b2', views: 5000 }] }, as('alice'))
    t.equal(batch.statusCode, 403, 'one row failing createRule fails the batch')
    const after = await get('/api/v1/table/posts/select', { where: 'slug == \'b1\'' }, ADMIN)
    t.same(after.json(), [], 'and nothing of it was written')
  })

  t.test('rules matrix: update and delete narrow silently', async (t) => {
    const bobOnAlice = await post('/api/v1/table/posts/update', { where: 'id == \'p1\'', setValues: { title: 'hacked' }, returning: 'id' }, as('bob'))
    t.same(bobOnAlice.json(), [], 'updateRule filters: []')
    const anon = await post('/api/v1/table/posts/update', { where: 'true', setValues: { title: 'x' } })
    t.same(anon.json(), [], 'anonymous: no rows')
    const own = await post('/api/v1/table/posts/update', { where: 'true', set: { views: 'views + 1' }, returning: ['id', 'views'] }, as('bob'))
    t.same(own.json(), [{ id: 'p3', views: 51 }, { id: 'p4', views: 1 }], 'where true only reaches own rows')
    const steal = await post('/api/v1/table/posts/update', { where: 'id == \'p3\'', setValues: { owner: 'alice' }, returning: 'id' }, as('bob'))
    t.same(steal.json(), [], 'new.owner in updateRule blocks handing a post away')
    const del = await post('/api/v1/table/posts/delete', { where: 'id == \'p1\'', returning: 'id' }, as('bob'))
    t.same(del.json(), [], 'deleteRule filters')
    t.equal((await post('/api/v1/table/users/delete', { where: 'true' }, as('bob'))).statusCode, 403, 'null deleteRule: 403')
  })

  t.test('rules and wheres read auth.role and auth.<field> of the user record', async (t) => {
    const asTeam = (team: string) => ({ ...as('carol'), 'x-test-team': team })
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'auth.team == \'red\' & auth.role == \'user\'' }, asTeam('red'))), ['p1', 'p3'])
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'auth.team == \'red\'' }, asTeam('blue'))), [])
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'auth.nosuchfield == null' })), ['p1', 'p3'], 'unknown auth fields are null')
  })

  t.test('locked tables (decision D3)', async (t) => {
    for (const [url, method, payload] of [
      ['/api/v1/table/vault/select', 'GET', undefined],
      ['/api/v1/table/vault/list', 'POST', {}],
      ['/api/v1/table/vault/insert', 'POST', { values: { v: 'a' } }],
      ['/api/v1/table/vault/update', 'POST', { where: 'true', setValues: { v: 'b' } }],
      ['/api/v1/table/vault/delete', 'POST', { where: 'true' }],
      ['/api/v1/table/vault/view/1', 'GET', undefined],
      ['/api/v1/table/half/insert', 'POST', { values: { id: 1 } }]
    ] as const) {
      for (const headers of [{}, as('alice')]) {
        const res = await app.inject({ method, url, payload, headers })
        t.equal(res.statusCode, 403, `${method} ${url}`)
      }
    }
    const adminInsert = await post('/api/v1/table/vault/insert', { values: [{ v: 'a' }, { v: 'b' }], returning: '*' }, ADMIN)
    t.same(adminInsert.json(), [{ id: 1, v: 'a' }, { id: 2, v: 'b' }], 'admins pass; autoincrement ids are numbers')
    t.equal((await get('/api/v1/table/half/select')).statusCode, 200, 'a table with only a listRule can be listed')
    await post('/api/v1/table/vault/insert', { values: { id: 100, v: 'explicit' } }, ADMIN)
    const next = await post('/api/v1/table/vault/insert', { values: { v: 'auto' }, returning: 'id' }, ADMIN)
    t.same(next.json(), [{ id: 101 }], 'an explicit id moves the autoincrement counter on both dialects')
    await post('/api/v1/table/vault/delete', { where: 'id >= 100' }, ADMIN)
  })

  t.test('typed values round-trip (decision D1)', async (t) => {
    const res = await post('/api/v1/table/posts/insert', {
      values: { id: 'typed', owner: 'alice', title: 'Typed', score: 2.5, featured: true, data: { a: [1, 2], b: null }, due: '2026-11-21T15:07:47Z', email: 'a@b.co', site: 'https://x.y/z' },
      returning: '*'
    }, ADMIN)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json()[0], { id: 'typed', score: 2.5, featured: true, data: { a: [1, 2], b: null }, due: '2026-11-21T15:07:47.000Z', views: 0, secret: null })
    const text = await post('/api/v1/table/posts/edit/typed', { data: '{"legacy":true}' }, ADMIN)
    t.equal(text.statusCode, 200, text.body)
    t.same((await get('/api/v1/table/posts/view/typed', { select: 'data' }, ADMIN)).json(), { data: { legacy: true } }, 'JSON text is parsed')
    const str = await post('/api/v1/table/posts/edit/typed?returning=data', { data: 'just words' }, ADMIN)
    t.same(str.json(), { data: 'just words' }, 'a string that is not JSON text stays a string')
    const arr = await post('/api/v1/table/posts/edit/typed?returning=data', { data: [1, 'two', { three: 3 }] }, ADMIN)
    t.same(arr.json(), { data: [1, 'two', { three: 3 }] })
    const notMagic = await post('/api/v1/table/posts/edit/typed?returning=title', { title: 'null' }, ADMIN)
    t.same(notMagic.json(), { title: 'null' }, 'the string "null" stays a string')
  })

  t.test('validation errors (decision D2)', async (t) => {
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ values: { owner: 'alice' } }, { title: { _errors: ['title is required'] } }],
      [{ values: { owner: 'alice', title: 'x', views: 'many' } }, { views: { _errors: [/integer/] } }],
      [{ values: { owner: 'alice', title: 'x', views: 1.5 } }, { views: { _errors: [/integer/] } }],
      [{ values: { owner: 'alice', title: 'x', featured: 'true' } }, { featured: { _errors: [/boolean/] } }],
      [{ values: { owner: 'alice', title: 'x', email: 'not-an-email' } }, { email: { _errors: [/email/] } }],
      [{ values: { owner: 'alice', title: 'x', site: 'nope' } }, { site: { _errors: [/URL/] } }],
      [{ values: { owner: 'alice', title: 'x', status: 'archived' } }, { status: { _errors: [/draft.*published/] } }],
      [{ values: { owner: 'alice', title: 'x', due: 'tomorrow' } }, { due: { _errors: [/date-time/] } }],
      [{ values: { owner: 'alice', title: null } }, { title: { _errors: [/string/] } }],
      [{ values: { owner: 'alice', title: 'x', bogus: 1 } }, { bogus: { _errors: ['Unknown field'] } }],
      [{ values: [{ owner: 'alice', title: 'x' }, { owner: 'alice', title: 5 }] }, { title: { _errors: [/string/] } }],
      [{ title: 'x' }, { values: { _errors: ['values is required'] } }]
    ]
    for (const [payload, data] of cases) {
      const res = await post('/api/v1/table/posts/insert', payload, ADMIN)
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.match(res.json(), { code: 400, message: 'Validation Error', data }, JSON.stringify(payload))
    }
    const upd = await post('/api/v1/table/posts/update', { where: 'true', setValues: { views: -1.5 } }, ADMIN)
    t.match(upd.json(), { code: 400, message: 'Validation Error', data: { views: { _errors: [/integer/] } } })
    const noWhere = await post('/api/v1/table/posts/update', { setValues: { views: 1 } }, ADMIN)
    t.match(noWhere.json(), { code: 400, data: { where: { _errors: ['where is required'] } } })
    const emptyWhere = await post('/api/v1/table/posts/delete', { where: '' }, ADMIN)
    t.equal(emptyWhere.statusCode, 400, 'an empty where is not "all rows"')
    const badLimit = await get('/api/v1/table/posts/select', { limit: 'ten' })
    t.match(badLimit.json(), { code: 400, data: { limit: { _errors: [/integer/] } } })
    const noInsert = await post('/api/v1/table/posts/insert', { values: { owner: 'alice', title: 'x', locked_note: 'n' } }, ADMIN)
    t.same(noInsert.json(), { code: 403, message: 'Cannot insert locked_note field', data: {} }, 'noInsert binds admins too')
    const noUpdate = await post('/api/v1/table/posts/update', { where: 'true', setValues: { created: '2020-01-01T00:00:00Z' } }, ADMIN)
    t.same(noUpdate.json(), { code: 403, message: 'Cannot update created field', data: {} })
    const bothSet = await post('/api/v1/table/posts/update', { where: 'true' }, ADMIN)
    t.match(bothSet.json(), { code: 400, message: /Nothing to update/ })
    const badJson = await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: '{"values": ' })
    t.same(badJson.json(), { code: 400, message: 'Invalid JSON body', data: {} })
  })

  t.test('constraint errors (decision D9)', async (t) => {
    const dup = await post('/api/v1/table/posts/insert', { values: { owner: 'alice', title: 'dup', slug: 'a-pub' } }, ADMIN)
    t.equal(dup.statusCode, 400)
    t.match(dup.json(), { code: 400, data: { slug: { code: 'unique', message: String } } })
    const fk = await post('/api/v1/table/posts/insert', { values: { owner: 'nobody', title: 'orphan' } }, ADMIN)
    t.match(fk.json(), { code: 400, data: { owner: { code: 'foreign_key' } } })
    const check = await post('/api/v1/table/posts/update', { where: 'id == \'p1\'', setValues: { views: -1 } }, ADMIN)
    t.match(check.json(), { code: 400, data: { views: { code: 'check' } } })
    const notNull = await post('/api/v1/table/posts/update', { where: 'id == \'p1\'', set: { title: 'null' } }, ADMIN)
    t.match(notNull.json(), { code: 400, data: { title: { code: 'not_null' } } })
    const pk = await post('/api/v1/table/posts/insert', { values: { id: 'p1', owner: 'alice', title: 'same id' } }, ADMIN)
    t.match(pk.json(), { code: 400, data: { id: { code: 'unique' } } })
    t.equal((await get('/api/v1/table/posts/view/p1', {}, ADMIN)).json().title, 'Alice public', 'nothing changed')
  })

  t.test('conflicts: or=IGNORE and or=REPLACE (decision D6)', async (t) => {
    const ignored = await post('/api/v1/table/posts/insert', { values: { owner: 'alice', title: 'dup', slug: 'a-pub' }, or: 'IGNORE', returning: 'id' }, ADMIN)
    t.same(ignored.json(), [])
    const replaced = await post('/api/v1/table/posts/insert', { values: { id: 'p1', owner: 'alice', title: 'Replaced', slug: 'a-pub' }, or: 'REPLACE', returning: ['id', 'title'] }, ADMIN)
    t.same(replaced.json(), [{ id: 'p1', title: 'Replaced' }])
    const bobReplace = await post('/api/v1/table/posts/insert', { values: { id: 'p1', owner: 'bob', title: 'Mine now' }, or: 'REPLACE' }, as('bob'))
    t.equal(bobReplace.statusCode, 403, 'REPLACE cannot take over a row the updateRule protects')
    t.equal((await get('/api/v1/table/posts/view/p1', {}, ADMIN)).json().owner, 'alice')
    const updIgnore = await post('/api/v1/table/posts/update', { where: 'owner == \'alice\'', setValues: { slug: 'b-pub' }, or: 'IGNORE', returning: 'id' }, ADMIN)
    t.same(updIgnore.json(), [], 'every alice row would collide with b-pub: all skipped')
    const updIgnoreOne = await post('/api/v1/table/posts/update', { where: 'id in (\'p2\', \'p3\')', set: { slug: '\'shared\'' }, or: 'IGNORE', returning: 'id' }, ADMIN)
    t.same(updIgnoreOne.json(), [{ id: 'p2' }], 'the first row takes the value, the second is skipped')
    const bobReplaceUpd = await post('/api/v1/table/posts/update', { where: 'id == \'p3\'', setValues: { slug: 'shared' }, or: 'REPLACE', returning: 'id' }, as('bob'))
    t.equal(bobReplaceUpd.statusCode, 403, 'REPLACE may not delete a row the deleteRule protects')
    t.equal((await get('/api/v1/table/posts/view/p2', {}, ADMIN)).json().slug, 'shared', 'and nothing changed')
    const adminReplaceUpd = await post('/api/v1/table/posts/update', { where: 'id == \'p3\'', setValues: { slug: 'shared' }, or: 'REPLACE', returning: ['id', 'slug'] }, ADMIN)
    t.same(adminReplaceUpd.json(), [{ id: 'p3', slug: 'shared' }], 'REPLACE: the row holding the value is deleted, the update goes through')
    t.equal((await get('/api/v1/table/posts/view/p2', {}, ADMIN)).statusCode, 404, 'p2 held the value and is gone')
    await post('/api/v1/table/posts/insert', { values: { id: 'p2', owner: 'alice', title: 'Alice draft', slug: 'a-draft', status: 'draft', views: 1, secret: 'x2' } }, ADMIN)
  })

  t.test('edit', async (t) => {
    const res = await post('/api/v1/table/posts/edit/p2', { title: 'Edited' }, as('alice'))
    t.same(res.json(), { id: 'p2' }, 'default returning is the uid (decision D27)')
    const all = await post('/api/v1/table/posts/edit/p2?returning=*', { views: 7 }, as('alice'))
    t.match(all.json(), { id: 'p2', title: 'Edited', views: 7 })
    t.ok(Date.parse(all.json().updated) >= Date.parse(all.json().created), 'updated is set by the server')
    t.equal((await post('/api/v1/table/posts/edit/p2', { title: 'x' }, as('bob'))).statusCode, 404, 'updateRule hides: 404')
    t.equal((await post('/api/v1/table/posts/edit/missing', { title: 'x' }, ADMIN)).statusCode, 404)
    t.equal((await post('/api/v1/table/posts/edit/p2', {}, ADMIN)).statusCode, 400, 'empty body')
    const upsert = await post('/api/v1/table/posts/edit/fresh?or=INSERT&returning=id,title', { owner: 'alice', title: 'Fresh' }, as('alice'))
    t.same(upsert.json(), { id: 'fresh', title: 'Fresh' }, 'or=INSERT creates')
    const upsert2 = await post('/api/v1/table/posts/edit/fresh?or=INSERT&returning=title', { title: 'Fresher' }, as('alice'))
    t.same(upsert2.json(), { title: 'Fresher' }, 'or=INSERT updates when it exists')
    const upsertBob = await post('/api/v1/table/posts/edit/fresh?or=INSERT', { title: 'Bob was here' }, as('bob'))
    t.equal(upsertBob.statusCode, 404, 'an existing row still needs the updateRule')
    const createBob = await post('/api/v1/table/posts/edit/bobs?or=INSERT', { owner: 'alice', title: 'x' }, as('bob'))
    t.equal(createBob.statusCode, 403, 'a new row still needs the createRule')
    const intId = await post('/api/v1/table/vault/edit/1?returning=*', { v: 'changed' }, ADMIN)
    t.same(intId.json(), { id: 1, v: 'changed' })
    t.equal((await post('/api/v1/table/vault/edit/abc', { v: 'x' }, ADMIN)).statusCode, 404, 'non-numeric id of an integer uid: 404')
  })

  t.test('paging, ordering, grouping (decisions D7, D8)', async (t) => {
    const h = ADMIN
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')' }, h)), ['p1', 'p2', 'p3', 'p4'], 'primary-key order by default')
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')', order: '-views' }, h)), ['p3', 'p2', 'p1', 'p4'])
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')', sort: 'owner DESC, id' }, h)), ['p3', 'p4', 'p1', 'p2'])
    const arr = await post('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')', order: ['+owner', '-id'] }, h)
    t.same(ids(arr), ['p2', 'p1', 'p4', 'p3'])
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')', limit: '2', offset: '1' }, h)), ['p2', 'p3'])
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')', offset: '3' }, h)), ['p4'], 'offset without limit')
    const many = await post('/api/v1/table/vault/insert', { values: Array.from({ length: 60 }, (_, i) => ({ v: `n${i}` })) }, h)
    t.equal(many.statusCode, 200)
    const big = await post('/api/v1/table/half/insert', { values: Array.from({ length: 12_000 }, (_, i) => ({ id: i + 1, v: `row ${i}` })) }, h)
    t.equal(big.statusCode, 200, 'a 12,000-row batch is split under the bound-parameter limits')
    t.equal((await get('/api/v1/table/half/list', { limit: '1' }, h)).json().total, 12_000)
    t.equal((await get('/api/v1/table/vault/select', { limit: '500' }, h)).json().length, 50, 'limit capped by maxLimit')
    t.equal((await get('/api/v1/table/vault/select', {}, h)).json().length, 50, 'no limit: maxLimit')
    t.equal((await get('/api/v1/table/vault/list', {}, h)).json().total, 62)
    const grouped = await get('/api/v1/table/posts/list', { select: 'owner, count(*) as n', group: 'owner', where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')' }, h)
    t.same(grouped.json(), { items: [{ owner: 'alice', n: 2 }, { owner: 'bob', n: 2 }], total: 2 }, 'total counts groups')
    const distinct = await get('/api/v1/table/posts/select', { select: 'owner', distinct: 'true', where: 'id in (\'p1\',\'p2\',\'p3\',\'p4\')' }, h)
    t.same(distinct.json(), [{ owner: 'alice' }, { owner: 'bob' }])
    const badOrder = await get('/api/v1/table/posts/select', { order: 'secret' })
    t.match(badOrder.json(), { code: 400, message: /Unknown column "secret"/ })
    const injectOrder = await get('/api/v1/table/posts/select', { order: 'id; DROP TABLE posts' })
    t.equal(injectOrder.statusCode, 400)
  })

  t.test('insert/update/delete returning', async (t) => {
    const none = await post('/api/v1/table/posts/insert', { values: { owner: 'bob', title: 'quiet' } }, as('bob'))
    t.same(none.json(), [], 'no returning: [] (decision D27)')
    const admin = await post('/api/v1/table/posts/insert', { values: { owner: 'bob', title: 'loud', secret: 's' }, returning: '*' }, ADMIN)
    t.equal(admin.json()[0].secret, 's', 'admins see and write noSelect fields (decision D25)')
    const removed = await post('/api/v1/table/posts/delete', { where: 'title == \'quiet\' | title == \'loud\'', returning: ['title'] }, as('bob'))
    t.same(removed.json(), [{ title: 'quiet' }, { title: 'loud' }])
    const cascade = await post('/api/v1/table/users/delete', { where: 'id == \'bob\'' }, ADMIN)
    t.equal(cascade.statusCode, 200)
    t.same(ids(await get('/api/v1/table/posts/select', { where: 'owner == \'bob\'' }, ADMIN)), [], 'ON DELETE CASCADE honoured (foreign keys on)')
  })

  t.test('routing errors are JSON', async (t) => {
    t.same((await get('/api/v1/table/nope/select')).json(), { code: 404, message: 'Table not found - nope', data: {} })
    t.same((await get('/api/v1/table/posts/bogus')).json(), { code: 404, message: 'Route not found - GET /api/v1/table/posts/bogus', data: {} })
    t.same((await get('/api/v1/nothing')).json(), { code: 404, message: 'Route not found - GET /api/v1/nothing', data: {} })
    t.equal((await get('/api/v1/table/posts/insert')).statusCode, 404, 'wrong method')
    const bogusToken = await get('/api/v1/table/posts/select', {}, { authorization: 'Bearer not-a-token' })
    t.same(bogusToken.json(), { code: 401, message: 'Invalid or expired token', data: {} }, 'a bad token is an error, not anonymity (decision D12)')
    const legacy = await get('/api/v1/table/vault/select', { limit: '1' }, { authorization: adminToken })
    t.equal(legacy.statusCode, 200, 'legacy raw admin header')
    const xService = await get('/api/v1/table/vault/select', {}, { 'x-service-token': adminToken })
    t.equal(xService.statusCode, 403, 'X-Service-Token is not accepted')
  })
})
