// The attacker's test of decisions D95 and D96, as a differential: two databases hold the
// same rows a caller may see and differ only in what that caller may not see (another user's email,
// a noSelect secret, the fields of a private post, comments on it, private rows only in one). Every
// request of a battery, as that caller, must answer byte for byte the same on both: any difference
// (an answer, a count, a total, an order, a rank, an error) tells the caller something hidden.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { forEachDialect } from '../../helper.js'
import { SseClient, settle } from '../../fixtures/realtime/client.js'
import { seeded, admin, as, asAdmin, relationConfig } from '../../fixtures/relations.js'
import { ANONYMOUS, adminContext, type AuthContext } from '../../../lib/auth-context.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'

// The relations fixture, with search on posts and comments too.
const searchOn: Record<string, string[]> = { posts: ['title'], comments: ['body'] }
const config: DatabaseSettings = {
  ...relationConfig,
  realtime: { heartbeatSeconds: 0.2 },
  tables: relationConfig.tables.map((table): TableData => searchOn[table.name] === undefined ? table : { ...table, fullTextSearch: { fields: searchOn[table.name] } })
}

interface Observer { name: string, headers: Record<string, string>, auth: AuthContext }
const user = (uid: string): AuthContext => ({ ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } })
const observers: Observer[] = [
  { name: 'anonymous', headers: {}, auth: ANONYMOUS },
  { name: 'bob', headers: as('bob'), auth: user('bob') },
  { name: 'alice', headers: as('alice'), auth: user('alice') },
  // The panel's editors and viewers see every row, and fields only under their rules (decision D96).
  { name: 'editor', headers: asAdmin('editor'), auth: adminContext('editor') },
  { name: 'viewer', headers: asAdmin('viewer'), auth: adminContext('viewer') }
]

type Edit = [method: string, url: string, payload: unknown]
// What alice's private things may change into without bob or an anonymous caller learning of it, and
// bob's without alice learning of it. Words shared with visible rows ('open', 'on') so a search or its
// rank would notice them.
const hiddenFromOthersOf: Record<string, Edit[]> = {
  // In both databases: public posts and comments with words of their own, so that a search has rows
  // to rank against each other (a rank weighing words by the whole index would order them by the
  // hidden rows too).
  visible: [
    ['POST', 'posts/insert', { values: [{ id: 4, title: 'on on zebra', public: true, owner_id: 'bob' }, { id: 5, title: 'open zebra on', public: true, owner_id: 'alice' }] }],
    ['POST', 'comments/insert', { values: [{ id: 14, body: 'on zebra', author_id: 'alice', post_id: 4 }, { id: 15, body: 'open on open', author_id: 'bob', post_id: 5 }] }]
  ],
  alice: [
    ['POST', 'users/edit/alice', { email: 'zz-open@other.test', secret: 'changed' }],
    ['POST', 'posts/edit/2', { title: 'open open open on zebra' }],
    ['POST', 'posts/insert', { values: [{ id: 20, title: 'open on open', public: false, owner_id: 'alice' }, { id: 21, title: 'open', public: false, owner_id: 'alice' }] }],
    ['POST', 'comments/edit/11', { body: 'on on open open zebra' }],
    ['POST', 'comments/insert', { values: [{ id: 30, body: 'on open', author_id: 'alice', post_id: 2 }, { id: 31, body: 'on', author_id: 'alice', post_id: 20 }, { id: 32, body: 'open', author_id: 'alice', post_id: 21 }] }]
  ],
  bob: [
    ['POST', 'users/edit/bob', { email: 'aa-open@other.test', secret: 'changed' }],
    ['POST', 'posts/edit/3', { title: 'open on on zebra' }],
    ['POST', 'posts/insert', { values: [{ id: 22, title: 'on open on', public: false, owner_id: 'bob' }] }],
    ['POST', 'comments/edit/12', { body: 'open open on' }],
    ['POST', 'comments/insert', { values: [{ id: 33, body: 'on on', author_id: 'alice', post_id: 3 }, { id: 34, body: 'open zebra', author_id: 'bob', post_id: 22 }] }]
  ],
  emails: [
    ['POST', 'users/edit/alice', { email: 'zz-open@other.test' }],
    ['POST', 'users/edit/bob', { email: 'aa-open@other.test' }]
  ]
}
const othersOf: Record<string, string[]> = { anonymous: ['alice', 'bob'], bob: ['alice'], alice: ['bob'], editor: ['emails'], viewer: ['emails'] }

type Query = Record<string, string>
const reads: Array<[string, Query]> = [
  // rows, counts and totals
  ['posts/list', { order: 'id' }],
  ['posts/select', { select: 'count(*) as n, max(title) as m, min(id) as lo' }],
  ['comments/list', { order: 'id' }],
  ['comments/select', { select: 'count(*) as n, count(post_id.title) as t, max(post_id.title) as m' }],
  ['bookmarks/list', { order: 'id' }],
  // relation paths in select, where, order
  ['bookmarks/select', { select: 'id, post_id.title as title, post_id.owner_id.email as email, post_id.owner_id.secret as secret', order: 'id' }],
  ['bookmarks/select', { select: 'id', where: "post_id.title ~ '%zebra%'" }],
  ['bookmarks/select', { select: 'id', where: 'post_id.public == false' }],
  ['bookmarks/select', { select: 'id', where: 'post_id.title == null' }],
  ['bookmarks/list', { order: 'post_id.title, id' }],
  ['bookmarks/list', { order: '-post_id.title, -id' }],
  ['bookmarks/list', { order: 'post_id.owner_id.email, id' }],
  ['bookmarks/select', { select: 'count(post_id.title) as n, group_concat(post_id.title) as g' }],
  ['comments/select', { select: 'id, post_id.title as t, author_id.email as e', order: 'post_id.title, author_id.email, id' }],
  ['bookmarks/select', { select: 'post_id.public as p, count(*) as n', group: 'post_id.public', order: 'p' }],
  ['bookmarks/select', { select: 'post_id.title as p, count(*) as n', group: 'post_id.title', order: 'p' }],
  // expand
  ['bookmarks/select', { select: 'id, post_id(title, public, owner_id) as post', order: 'id' }],
  ['comments/select', { select: 'id, author_id(name, email) as author', order: 'id' }],
  // field rules
  ['users/list', { order: 'email, id' }],
  ['users/list', { order: 'id', where: "email ~ '%open%'" }],
  ['users/select', { select: 'count(email) as n, max(email) as m, min(length(email)) as l' }],
  ['users/select', { select: 'id', where: 'secret == null' }],
  ['users/select', { select: 'email as e, count(*) as n', group: 'email' }],
  ['users/select', { select: 'id', where: "users @@ 'open'" }],
  ['users/select', { select: 'id', where: "email @@ 'open'" }],
  ['users/view/alice', {}],
  ['users/view/bob', {}],
  // search and its rank (no order: best match first)
  ['posts/select', { select: 'id', where: "posts @@ 'open OR on'" }],
  ['posts/select', { select: 'id', where: "posts @@ 'zebra OR open'" }],
  ['posts/list', { where: "posts @@ 'open OR on'" }],
  ['comments/select', { select: 'id', where: "comments @@ 'open OR on'" }],
  ['comments/select', { select: 'id', where: "comments @@ 'zebra OR on'" }],
  ['comments/list', { where: "comments @@ 'on OR open'", limit: '1' }],
  // views and errors on rows one may not see
  ['posts/view/2', {}],
  ['posts/view/3', {}],
  ['posts/view/20', {}],
  ['comments/view/11', {}],
  ['comments/view/30', {}]
]

interface Answer { status: number, body: unknown }
// Ids and timestamps that differ by construction do not occur here (every id is given); the request
// id is left out.
const normal = (res: { statusCode: number, body: string }): Answer => {
  let body: unknown = res.body
  try { body = JSON.parse(res.body) } catch {}
  if (body !== null && typeof body === 'object' && 'requestId' in body) delete (body as Record<string, unknown>).requestId
  return { status: res.statusCode, body }
}

async function battery (app: FastifyInstance, who: Observer): Promise<Record<string, Answer>> {
  const out: Record<string, Answer> = {}
  for (const [url, query] of reads) {
    const res = await app.inject({ method: 'GET', url: `/api/v1/table/${url}`, query, headers: who.headers })
    out[`GET ${url} ${JSON.stringify(query)}`] = normal(res)
  }
  // The in-process API.
  const api = app.fastbase.tables
  const inProcess: Array<[string, () => Promise<unknown>]> = [
    ['users.list', async () => await api.users.list({ order: 'email, id' }, { as: who.auth })],
    ['bookmarks.select', async () => await api.bookmarks.select({ select: 'id, post_id.title as t', where: "post_id.title != 'x'", order: 'post_id.title, id' }, { as: who.auth })],
    ['comments.select', async () => await api.comments.select({ select: 'id', where: 'post_id.owner_id.email == {:e}', params: { e: 'zz-open@other.test' } }, { as: who.auth })]
  ]
  for (const [name, call] of inProcess) {
    try { out[name] = { status: 200, body: await call() } } catch (err) { out[name] = { status: -1, body: String(err) } }
  }
  // Writes: each database gets the same ones, in the same order.
  const writes: Edit[] = [
    ['POST', 'comments/update', { where: "post_id.title ~ '%zebra%'", setValues: { body: 'x' }, returning: 'id' }],
    ['POST', 'comments/update', { where: 'post_id.public == false', setValues: { body: 'y' }, returning: 'id, post_id.title as t' }],
    ['POST', 'users/update', { where: "email ~ '%open%'", setValues: { name: 'n' }, returning: 'id' }],
    ['POST', 'bookmarks/update', { where: 'post_id.title == null', setValues: { post_id: 1 }, returning: 'id' }],
    ['POST', 'comments/insert', { values: { id: 90, body: 'hi', author_id: who.auth.uid, post_id: 2 }, returning: 'id' }],
    ['POST', 'comments/insert', { values: { id: 91, body: 'hi', author_id: who.auth.uid, post_id: 3 }, returning: 'id' }],
    ['POST', 'comments/insert', { values: { id: 94, body: 'hi', author_id: who.auth.uid, post_id: 99 }, returning: 'id' }],
    ['POST', 'comments/edit/10', { post_id: 2 }],
    ['POST', 'comments/edit/11', { body: 'mine?' }],
    ['POST', 'comments/delete', { where: "post_id.title ~ '%zebra%' | id == 30", returning: 'id' }],
    ['DELETE', 'comments/delete/11', undefined],
    ['DELETE', 'posts/delete/20', undefined],
    // A reference to a hidden row that exists in both databases.
    ['POST', 'bookmarks/insert', { values: { id: 95, post_id: 2 }, returning: 'id, post_id.title as t' }],
    ['POST', 'bookmarks/insert', { values: { id: 96, post_id: 3 }, returning: 'id, post_id.owner_id.email as e' }],
    // One to a hidden row that exists in only one of them answers as one to a missing row (decision D104).
    ['POST', 'bookmarks/insert', { values: { id: 85, post_id: 20 }, returning: 'id' }],
    ['POST', 'bookmarks/insert', { values: [{ id: 86, post_id: 1 }, { id: 87, post_id: 22 }] }],
    ['POST', 'bookmarks/insert', { values: { id: 88, post_id: 21 }, or: 'REPLACE' }],
    ['POST', 'comments/insert', { values: { id: 89, body: 'hi', author_id: who.auth.uid, post_id: 21 }, returning: 'id' }],
    ['POST', 'comments/edit/10', { post_id: 22 }],
    ['POST', 'comments/update', { where: 'id == 10', setValues: { post_id: 20 } }]
  ]
  for (const [method, url, payload] of writes) {
    const res = await app.inject({ method: method as 'POST', url: `/api/v1/table/${url}`, payload: payload as Record<string, unknown>, headers: who.headers })
    out[`${method} ${url} ${JSON.stringify(payload)}`] = normal(res)
  }
  return out
}

async function world (t: Parameters<typeof seeded>[0], dialect: Parameters<typeof seeded>[1], hiddenOf: string[]): Promise<FastifyInstance> {
  const app = await seeded(t, dialect, config)
  for (const owner of ['visible', ...hiddenOf]) {
    for (const [method, url, payload] of hiddenFromOthersOf[owner]) {
      const res = await app.inject({ method: method as 'POST', url: `/api/v1/table/${url}`, payload: payload as Record<string, unknown>, headers: admin })
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.body}`)
    }
  }
  return app
}

// Realtime subscriptions the observer holds while the battery's writes and an admin's edits of
// visible rows happen: the events (records included) must be the same on both databases.
const subscriptions = [
  'subscribe=users',
  `subscribe=users&where.users=${encodeURIComponent("email ~ '%open%'")}`,
  'subscribe=comments',
  `subscribe=comments&where.comments=${encodeURIComponent("post_id.title ~ '%zebra%' | author_id.email ~ '%open%'")}`,
  `subscribe=bookmarks&where.bookmarks=${encodeURIComponent('post_id.title == null')}`
]
const visibleEdits: Edit[] = [
  ['POST', 'users/edit/alice', { name: 'Alice!' }],
  ['POST', 'users/edit/bob', { name: 'Bob!' }],
  ['POST', 'comments/edit/10', { body: 'edited' }],
  ['POST', 'bookmarks/insert', { values: [{ id: 97, post_id: 1 }, { id: 98, post_id: 2 }, { id: 99, post_id: null }] }]
]

async function withEvents (app: FastifyInstance, who: Observer): Promise<{ answers: Record<string, Answer>, events: unknown[] }> {
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const streams = await Promise.all(subscriptions.map(async (query) => await SseClient.open(base, { query, headers: who.headers })))
  try {
    const answers = await battery(app, who)
    for (const [method, url, payload] of visibleEdits) {
      const res = await app.inject({ method: method as 'POST', url: `/api/v1/table/${url}`, payload: payload as Record<string, unknown>, headers: admin })
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.body}`)
    }
    await settle(app)
    return { answers, events: streams.map((s) => ({ status: s.status, changes: s.changes() })) }
  } finally {
    for (const s of streams) s.close()
  }
}

for (const who of observers) {
  forEachDialect(t, `${who.name}: nothing answers differently when only what ${who.name} may not see differs`, async (t, dialect) => {
    const plain = await withEvents(await world(t, dialect, []), who)
    const changed = await withEvents(await world(t, dialect, othersOf[who.name]), who)
    for (const key of Object.keys(plain.answers)) t.same(changed.answers[key], plain.answers[key], key)
    t.same(changed.events, plain.events, 'realtime events')
    t.ok(plain.events.some((s) => (s as { changes: unknown[] }).changes.length > 0), 'events arrived')
  })
}

// The request's hop budget (decision D95: 24, rules included) holds across its select list, where
// and order together, so a costly request cannot be spread over them; expand counts too.
forEachDialect(t, 'relation hops: one budget for the whole request', async (t, dialect) => {
  const app = await seeded(t, dialect, config)
  const get = async (query: Query) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/select', query, headers: as('bob') })
    return { status: res.statusCode, body: res.json() }
  }
  const two = (n: number) => Array.from({ length: n }, (_, i) => `post_id.owner_id.name as a${i}`).join(', ')
  const paths = (n: number, sep: string) => Array.from({ length: n }, () => "post_id.owner_id.name != 'x'").join(sep)
  t.equal((await get({ select: two(6), where: paths(4, ' & ') })).status, 200, '20 hops: answered')
  const spread = await get({ select: two(6), where: paths(4, ' & '), order: 'post_id.owner_id.name, post_id.owner_id.role, post_id.title' })
  t.same([spread.status, spread.body.code], [400, 400], 'the same and 5 hops of order: refused')
  t.match(spread.body.message, /relation|hop/i)
  t.equal((await get({ select: two(13) })).status, 400, '26 hops of select alone: refused')
  const expands = Array.from({ length: 30 }, (_, i) => `post_id(title, owner_id(name)) as e${i}`).join(', ')
  const expanded = await get({ select: expands })
  t.equal(expanded.status, 400, '30 nested expands: refused')
})

// `{:name}` parameters (decision D88) are the in-process API's; over HTTP a caller cannot fill them,
// and a name never reaches past `params`.
forEachDialect(t, '{:name} parameters: caller text cannot fill them, names stay under params', async (t, dialect) => {
  const app = await seeded(t, dialect, config)
  const http = await app.inject({ method: 'GET', url: '/api/v1/table/posts/select', query: { select: 'id', where: 'id == {:id}', 'params[id]': '2', params: '{"id":2}' }, headers: as('bob') })
  t.same([http.statusCode, http.json().code], [400, 400], 'over HTTP a {:name} is not given, whatever the query says')
  const body = await app.inject({ method: 'POST', url: '/api/v1/table/comments/update', headers: as('bob'), payload: { where: 'id == {:id}', setValues: { body: 'x' }, params: { id: 12 } } })
  t.equal(body.statusCode, 400, 'nor in a write\'s body')
  const bob = user('bob')
  const api = app.fastbase.tables
  t.same(await api.posts.select({ select: 'id', where: 'owner_id == {:auth}', params: { auth: 'alice' } }, { as: bob }), [{ id: 1 }], '{:auth} is the param named auth, not the caller: alice\'s posts bob may see')
  t.same(await api.posts.select({ select: 'id', where: 'owner_id == auth.uid', params: { auth: 'alice' } }, { as: bob }), [{ id: 3 }], 'and a param named auth does not change auth.uid')
  const proto = JSON.parse('{"__proto__": "alice"}') as Record<string, string>
  t.same(await api.posts.select({ select: 'id', where: 'owner_id == {:__proto__}', params: proto }, { as: bob }), [{ id: 1 }], '__proto__ is a name like any other')
  await t.rejects(api.posts.select({ select: 'id', where: 'owner_id == {:constructor}', params: {} }, { as: bob }), /constructor/, 'an inherited name is not given')
  for (const value of [{ a: 1 }, ['alice'], 1n]) {
    await t.rejects(api.posts.select({ select: 'id', where: 'owner_id == {:v}', params: { v: value as unknown as string } }, { as: bob }), `${typeof value === 'bigint' ? 'a bigint' : JSON.stringify(value)} is refused`)
  }
})
