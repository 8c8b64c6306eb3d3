// Realtime on one instance, both dialects, over real HTTP: events after commit only, listRule and
// where per subscriber (anonymous, user, admin), noSelect stripping, updates that leave a rule,
// deletes, actions in both modes, sign-up, and the subscribe protocol's errors.
import t from 'tap'
import { adminToken, forEachDialect } from '../../helper.js'
import { SseClient, api, config, listening, settle, signUp } from '../../fixtures/realtime/client.js'

forEachDialect(t, 'rules, where and noSelect per subscriber', async (t, dialect) => {
  const { app, base } = await listening(t, config(), { dialect })
  const ann = await signUp(base, 'ann')
  const bob = await signUp(base, 'bob')
  const anon = await SseClient.open(base, { query: 'subscribe=posts' })
  const annStream = await SseClient.open(base, { token: ann.token, query: 'subscribe=posts' })
  const bobStream = await SseClient.open(base, { token: bob.token, query: 'subscribe=posts' })
  const admin = await SseClient.open(base, { token: adminToken, query: 'subscribe=posts' })
  const highRated = await SseClient.open(base, { query: `subscribe=posts&where.posts=${encodeURIComponent('rating >= 3')}` })
  t.teardown(() => { for (const s of [anon, annStream, bobStream, admin, highRated]) s.close() })
  t.match(anon.events[0], { event: 'connect', data: { clientId: String, subscriptions: [{ table: 'posts' }], heartbeatSeconds: 0.2 } }, 'connect event with a client id')

  t.equal((await api(base, '/table/posts/insert', { values: { id: 'draft1', author_id: ann.id, title: 'draft', secret: 's1', rating: 5 } }, ann.token)).status, 200)
  t.equal((await api(base, '/table/posts/insert', { values: { id: 'pub1', author_id: ann.id, title: 'public', published: true, secret: 's2', rating: 1 } }, ann.token)).status, 200)
  t.equal((await api(base, '/table/posts/insert', { values: { id: 'pub2', author_id: bob.id, title: 'bob public', published: true, rating: 4 } }, bob.token)).status, 200)
  await settle(app)

  const ids = (s: SseClient) => s.changes().map((c) => `${c.action}:${c.record.id}`)
  t.same(ids(anon), ['insert:pub1', 'insert:pub2'], 'anonymous: published rows only')
  t.same(ids(annStream), ['insert:draft1', 'insert:pub1', 'insert:pub2'], 'ann: her draft too')
  t.same(ids(bobStream), ['insert:pub1', 'insert:pub2'], 'bob: not ann\'s draft')
  t.same(ids(admin), ['insert:draft1', 'insert:pub1', 'insert:pub2'], 'admin: everything')
  t.same(ids(highRated), ['insert:pub2'], 'where narrows the rule (published and rating >= 3)')
  const annFirst = annStream.changes()[0]
  t.match(annFirst, { action: 'insert', table: 'posts', record: { id: 'draft1', title: 'draft', published: false, rating: 5, author_id: ann.id } }, 'typed record')
  t.notOk('secret' in annFirst.record, 'noSelect field stripped for users')
  t.notOk(anon.changes().some((c) => 'secret' in c.record), 'and for anonymous')
  t.equal(admin.changes()[0].record.secret, 's1', 'admins see noSelect fields')
  t.match(annFirst.record.created, /^\d{4}-\d\d-\d\dT.*Z$/, 'dates as ISO strings')

  // An update that takes a row out of a subscriber's rule is not sent to that subscriber.
  t.equal((await api(base, '/table/posts/edit/pub1', { published: false }, ann.token)).status, 200)
  // ... and one that brings a row into it is.
  t.equal((await api(base, '/table/posts/edit/draft1', { published: true }, ann.token)).status, 200)
  await settle(app)
  t.same(ids(anon).slice(2), ['update:draft1'], 'anonymous: not the unpublished pub1, the newly published draft1')
  t.same(ids(bobStream).slice(2), ['update:draft1'], 'bob: the same')
  t.same(ids(annStream).slice(3), ['update:pub1', 'update:draft1'], 'ann: both (her own)')

  // update through the table API with where, and delete: the record as it was.
  t.equal((await api(base, '/table/posts/update', { where: "id == 'pub2'", setValues: { title: 'renamed' } }, bob.token)).status, 200)
  t.equal((await api(base, '/table/posts/delete', { where: "id == 'pub1'" }, ann.token)).status, 200)
  t.equal((await api(base, '/table/posts/delete', { where: "id == 'draft1'" }, ann.token)).status, 200)
  await settle(app)
  t.same(ids(anon).slice(3), ['update:pub2', 'delete:draft1'], 'anonymous: the delete of a published row, not of the unpublished one')
  t.match(anon.changes().at(-1), { action: 'delete', table: 'posts', record: { id: 'draft1', title: 'draft', published: true, rating: 5 } }, 'delete carries the record as it was')
  t.notOk('secret' in anon.changes().at(-1).record, 'without noSelect fields')
  t.same(ids(annStream).slice(5), ['update:pub2', 'delete:pub1', 'delete:draft1'], 'ann: her unpublished row\'s delete too')
  t.equal(admin.changes().at(-2).record.secret, 's2', 'admins get the deleted row\'s noSelect fields')
  t.same(ids(highRated).slice(1), ['update:draft1', 'update:pub2', 'delete:draft1'], 'where applies to updates and deletes (draft1, rated 5, now published)')
})

forEachDialect(t, 'actions, sign-up, rollback, upsert', async (t, dialect) => {
  const { app, base } = await listening(t, config(), { dialect })
  const admin = await SseClient.open(base, { token: adminToken, query: 'subscribe=posts,users' })
  const anon = await SseClient.open(base, { query: 'subscribe=posts' })
  t.teardown(() => { admin.close(); anon.close() })

  t.equal((await api(base, '/action/add_sql', { id: 'sql1', title: 'from sql' })).status, 200, 'SQL-mode action')
  t.equal((await api(base, '/action/add_steps', { title: 'from steps' })).status, 200, 'steps-mode action')
  const failed = await api(base, '/action/add_then_fail', { id: 'doomed1' })
  t.equal(failed.status, 400, 'the second insert of the action fails (duplicate key)')
  const carl = await signUp(base, 'carl')
  t.equal((await api(base, '/action/publish_all', {})).status, 200, 'an update of every row in SQL mode')
  // or=REPLACE: one row updated, one inserted.
  t.equal((await api(base, '/table/posts/insert', { values: [{ id: 'sql1', title: 'replaced', published: true }, { id: 'new1', title: 'upserted', published: true }], or: 'REPLACE' }, adminToken)).status, 200)
  await settle(app)

  const seen = admin.changes().map((c) => `${c.table}:${c.action}:${c.record.title ?? c.record.username}`)
  t.same(seen.slice(0, 3), ['posts:insert:from sql', 'posts:insert:from steps', 'users:insert:carl'], 'both action modes and sign-up emit; the rolled-back action emits nothing')
  t.notOk(admin.changes().some((c) => c.record.id === 'doomed1'), 'nothing from the rolled-back action')
  t.same(seen.slice(3, 5).sort(), ['posts:update:from sql', 'posts:update:from steps'], 'the SQL-mode update emits one update per row')
  t.same(seen.slice(5), ['posts:update:replaced', 'posts:insert:upserted'], 'REPLACE: an update for the existing row, an insert for the new one')
  t.equal(admin.changes().find((c) => c.table === 'users').record.id, carl.id, 'the signed-up user')
  t.same(anon.changes().filter((c) => c.table === 'users'), [], 'anonymous did not subscribe to users')
  t.equal(anon.changes().length, 6, 'anonymous gets the published posts\' events')

  // Each change is evaluated and sent with the values its statement wrote, not the row as it is at
  // delivery: a row inserted, updated twice and deleted in one transaction (gone before any
  // delivery) gives four events; the update that unpublished it is not anonymous's to see.
  t.equal((await api(base, '/action/churn', { id: 'brief' })).status, 200)
  await settle(app)
  const brief = (s: SseClient) => s.changes().filter((c) => c.record.id === 'brief').map((c) => `${c.action}:${c.record.title}:${c.record.published}`)
  t.same(brief(admin), ['insert:first:true', 'update:second:true', 'update:third:false', 'delete:third:false'], 'admin: every change, with the values it wrote')
  t.same(brief(anon), ['insert:first:true', 'update:second:true'], 'anonymous: the changes while it was published')
})

forEachDialect(t, 'subscribe protocol', async (t, dialect) => {
  const { app, base } = await listening(t, config({ maxSubscriptions: 2 }), { dialect })
  const ann = await signUp(base, 'ann')
  const bob = await signUp(base, 'bob')
  const stream = await SseClient.open(base, { token: ann.token })
  t.teardown(() => stream.close())
  const id = stream.clientId
  t.equal((await api(base, '/table/posts/insert', { values: { author_id: ann.id, title: 'before' } }, ann.token)).status, 200)
  await settle(app)
  t.same(stream.changes(), [], 'no subscriptions, no events')

  const ok = await api(base, '/realtime', { clientId: id, subscriptions: [{ table: 'posts', where: "title ~ 'a%'" }] }, ann.token)
  t.equal(ok.status, 200)
  t.same(ok.body, { clientId: id, subscriptions: [{ table: 'posts', where: "title ~ 'a%'" }] })
  await stream.next('subscriptions')
  await api(base, '/table/posts/insert', { values: [{ author_id: ann.id, title: 'apple' }, { author_id: ann.id, title: 'banana' }] }, ann.token)
  await settle(app)
  t.same(stream.changes().map((c) => c.record.title), ['apple'], 'the subscription and its where apply')

  const cases: Array<[string, unknown, string | undefined, number, RegExp]> = [
    ['another user', { clientId: id, subscriptions: [] }, bob.token, 403, /Forbidden/],
    ['anonymous', { clientId: id, subscriptions: [] }, undefined, 403, /Forbidden/],
    ['unknown client', { clientId: 'nope', subscriptions: [] }, ann.token, 404, /Realtime client not found/],
    ['unknown table', { clientId: id, subscriptions: [{ table: 'nope' }] }, ann.token, 404, /Table not found - nope/],
    ['admin-only table', { clientId: id, subscriptions: [{ table: 'hidden' }] }, ann.token, 403, /Forbidden/],
    ['bad where', { clientId: id, subscriptions: [{ table: 'posts', where: 'nope == 1' }] }, ann.token, 400, /Invalid where/],
    ['a noSelect field in where (probing a hidden column)', { clientId: id, subscriptions: [{ table: 'posts', where: "secret == 's1'" }] }, ann.token, 400, /Invalid where/],
    ['raw SQL in where', { clientId: id, subscriptions: [{ table: 'posts', where: "1 == 1) OR (1 = 1" }] }, ann.token, 400, /Invalid where/],
    ['too many', { clientId: id, subscriptions: [{ table: 'posts' }, { table: 'users' }, { table: 'posts', where: 'true' }] }, ann.token, 400, /At most 2 subscriptions/],
    ['bad body', { clientId: id, subscriptions: 'posts' }, ann.token, 400, /Validation Error|subscriptions/]
  ]
  for (const [what, body, token, status, message] of cases) {
    const res = await api(base, '/realtime', body, token)
    t.equal(res.status, status, `${what}: ${status}`)
    t.match(res.body, { code: status, message }, `${what}: standard error body`)
  }
  await api(base, '/table/posts/insert', { values: { author_id: ann.id, title: 'avocado' } }, ann.token)
  await settle(app)
  t.same(stream.changes().map((c) => c.record.title), ['apple', 'avocado'], 'a refused change left the subscriptions as they were')

  // GET errors come as JSON before any stream starts.
  const refused = [
    ['subscribe=nope', 404],
    ['subscribe=hidden', 403],
    [`subscribe=posts&where.posts=${encodeURIComponent('drop table posts')}`, 400],
    [`subscribe=posts&where.users=${encodeURIComponent('true')}`, 400]
  ] as const
  for (const [query, status] of refused) {
    const res = await SseClient.open(base, { query })
    t.equal(res.status, status, `GET ?${query}: ${status}`)
    t.equal(res.body.code, status, 'standard error body')
  }
  const badToken = await SseClient.open(base, { token: 'not.a.token', query: 'subscribe=posts' })
  t.equal(badToken.status, 401, 'a bad token is a 401, not anonymity')
  t.ok(stream.comments > 0 || await stream.until(() => stream.comments > 0 ? true : undefined, 2000), 'heartbeat comments')

  const doc = (await app.inject({ method: 'GET', url: '/api/v1/doc' })).json()
  t.ok(doc.paths['/api/v1/realtime']?.get !== undefined && doc.paths['/api/v1/realtime']?.post !== undefined, 'both operations in the OpenAPI document')
})

forEachDialect(t, '@@ (full-text search) in a subscription is refused at subscribe', async (t, dialect) => {
  const cfg = config()
  cfg.tables.find((table) => table.name === 'posts')!.fullTextSearch = { fields: ['title'] }
  const { app, base } = await listening(t, cfg, { dialect })
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/table/posts/list?where=${encodeURIComponent("title @@ 'hello'")}` })).statusCode, 200, 'the table can be searched')
  const search = encodeURIComponent("published == true & title @@ 'hello'")
  const refused = await SseClient.open(base, { query: `subscribe=posts&where.posts=${search}` })
  t.equal(refused.status, 400, 'GET with @@ in the where: 400')
  t.match(refused.body, { code: 400, message: /Invalid where: @@ \(full-text search\) cannot be used in a realtime subscription/ }, 'a message that says why')
  const stream = await SseClient.open(base)
  t.teardown(() => stream.close())
  for (const where of ["posts @@ 'hello'", "!(title @@ 'hello') | rating > 1"]) {
    const res = await api(base, '/realtime', { clientId: stream.clientId, subscriptions: [{ table: 'posts', where }] })
    t.equal(res.status, 400, `POST ${where}: 400`)
    t.match(res.body, { code: 400, message: /@@/ }, 'names @@')
  }
  t.equal((await api(base, '/realtime', { clientId: stream.clientId, subscriptions: [{ table: 'posts', where: "title ~ '%hello%'" }] })).status, 200, 'a where without @@ is accepted')
})

t.test('the API document names a where.<table> parameter of the stream for every table', async (t) => {
  const { app } = await listening(t, config(), { dialect: 'sqlite' })
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/doc' })).json()
  const names = (doc.paths['/api/v1/realtime'].get.parameters as Array<{ name: string, in: string }>).filter((p) => p.in === 'query').map((p) => p.name)
  t.same(names.filter((n) => n.startsWith('where.')).sort(), [...app.fastbase.descriptors.keys()].map((n) => `where.${n}`).sort())
  t.ok(names.includes('subscribe'))
})

forEachDialect(t, 'a where that fails at run time on some rows: no match for those rows, never a 500 nor an oracle', async (t, dialect) => {
  const { app, base } = await listening(t, config(), { dialect })
  const ann = await signUp(base, 'ann')
  // 10 / (rating - 3) divides by zero on a row rated 3: the rows where it runs are judged as usual.
  const divides = await SseClient.open(base, { query: `subscribe=posts&where.posts=${encodeURIComponent('10 / (rating - 3) > 0')}` })
  t.teardown(() => divides.close())
  t.equal(divides.status, 200, JSON.stringify(divides.body))
  t.match(divides.events[0], { event: 'connect' }, 'the subscription is accepted')
  for (const [id, rating] of [['r5', 5], ['r3', 3], ['r1', 1], ['r4', 4]] as const) {
    t.equal((await api(base, '/table/posts/insert', { values: { id, author_id: ann.id, title: id, published: true, rating } }, ann.token)).status, 200)
  }
  await settle(app)
  t.same(divides.changes().map((c) => c.record.id), ['r5', 'r4'], 'rated 3 (division by zero) and 1 (negative) are not sent; 5 and 4 are')
})
