// Realtime events of a table whose listRule follows a relation (decision D95): on SQLite the class
// is judged on the database (the evaluation thread's copy holds only the changed rows), on
// PostgreSQL as every class is; either way a subscriber gets the comments of the posts it may see,
// and a caller's where on a path reads only posts the caller may see.
import t from 'tap'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { SseClient, settle } from '../../fixtures/realtime/client.js'
import { relationConfig, seeded, simulateUsers, admin, as } from '../../fixtures/relations.js'

forEachDialect(t, 'realtime: comments follow their post\'s visibility', async (t, dialect) => {
  const app = await seeded(t, dialect, { ...relationConfig, realtime: { heartbeatSeconds: 0.2 } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const anon = await SseClient.open(base, { query: 'subscribe=comments' })
  const alice = await SseClient.open(base, { query: 'subscribe=comments', headers: as('alice') })
  const bob = await SseClient.open(base, { query: 'subscribe=comments', headers: as('bob') })
  // bob filters on the title of the post: alice's private diary must read as null for him.
  const bobByTitle = await SseClient.open(base, { query: `subscribe=bookmarks&where.bookmarks=${encodeURIComponent("post_id.title == 'diary'")}`, headers: as('bob') })
  const aliceByTitle = await SseClient.open(base, { query: `subscribe=bookmarks&where.bookmarks=${encodeURIComponent("post_id.title == 'diary'")}`, headers: as('alice') })
  t.teardown(() => { for (const s of [anon, alice, bob, bobByTitle, aliceByTitle]) s.close() })
  for (const s of [anon, alice, bob, bobByTitle, aliceByTitle]) t.equal(s.status, 200, JSON.stringify(s.body))

  const insert = await app.inject({ method: 'POST', url: '/api/v1/table/comments/insert', headers: admin, payload: { values: [{ id: 20, body: 'a', author_id: 'alice', post_id: 1 }, { id: 21, body: 'b', author_id: 'alice', post_id: 2 }, { id: 22, body: 'c', author_id: 'bob', post_id: 3 }] } })
  t.equal(insert.statusCode, 200, insert.body)
  const marks = await app.inject({ method: 'POST', url: '/api/v1/table/bookmarks/insert', headers: admin, payload: { values: [{ id: 30, post_id: 1 }, { id: 31, post_id: 2 }] } })
  t.equal(marks.statusCode, 200, marks.body)
  await settle(app)
  const ids = (s: SseClient) => s.changes().map((c) => c.record.id)
  t.same(ids(anon), [20], 'anonymous: the comment on the public post')
  t.same(ids(alice), [20, 21], 'alice: and the one on her private post')
  t.same(ids(bob), [20, 22], 'bob: and the one on his own post, never alice\'s private one')
  t.same(ids(aliceByTitle), [31], 'alice\'s where on her post\'s title matches the bookmark of it')
  t.same(ids(bobByTitle), [], 'bob\'s same where matches nothing: the post is hidden from him, its title reads null')
})

forEachDialect(t, 'realtime: a field rule holds in events', async (t, dialect) => {
  const app = await seeded(t, dialect, { ...relationConfig, realtime: { heartbeatSeconds: 0.2 } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const anon = await SseClient.open(base, { query: 'subscribe=users' })
  const alice = await SseClient.open(base, { query: 'subscribe=users', headers: as('alice') })
  const bob = await SseClient.open(base, { query: 'subscribe=users', headers: as('bob') })
  const everyone = await SseClient.open(base, { query: 'subscribe=users', headers: admin })
  // bob's where on the email reads it as he does: alice's never matches.
  const bobByEmail = await SseClient.open(base, { query: `subscribe=users&where.users=${encodeURIComponent("email ~ '%@%'")}`, headers: as('bob') })
  t.teardown(() => { for (const s of [anon, alice, bob, everyone, bobByEmail]) s.close() })
  for (const id of ['alice', 'bob']) {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/users/edit/${id}`, headers: admin, payload: { name: `${id}!` } })
    t.equal(res.statusCode, 200, res.body)
  }
  await settle(app)
  const seen = (s: SseClient) => s.changes().map((c) => [c.record.id, c.record.email])
  t.same(seen(anon), [['alice', null], ['bob', null]], 'anonymous: no email in any event')
  t.same(seen(alice), [['alice', 'alice@mail.test'], ['bob', null]], 'alice: her own')
  t.same(seen(bob), [['alice', null], ['bob', 'bob@mail.test']], 'bob: his own')
  t.same(seen(everyone), [['alice', 'alice@mail.test'], ['bob', 'bob@mail.test']], 'admins: all')
  t.same(seen(bobByEmail), [['bob', 'bob@mail.test']], 'a where on the field matches only where the caller reads it')
})

// The attacker's test for events (decision D105): an update that changes only what a subscriber
// cannot read (a field a field rule hides from it, a noSelect field) must send it nothing, or the
// event itself tells of the change. On PostgreSQL the same holds on a second instance, which gets
// the change (with the rows as they were) over the bus.
forEachDialect(t, 'realtime: an update that changes only what a subscriber cannot read sends it nothing', async (t, dialect) => {
  const config = { ...relationConfig, realtime: { heartbeatSeconds: 0.2 } }
  const databaseUrl = sharedDatabase(t, dialect)
  const app = await seeded(t, dialect, config, databaseUrl)
  const bases = [await app.listen({ host: '127.0.0.1', port: 0 })]
  if (dialect === 'postgres') {
    const other = await buildApp(t, config, { dialect, databaseUrl, setup: simulateUsers })
    bases.push(await other.listen({ host: '127.0.0.1', port: 0 }))
  }
  const callers: Record<string, Record<string, string>> = { anonymous: {}, alice: as('alice'), bob: as('bob'), admin }
  const streams = await Promise.all(bases.flatMap((base, instance) => Object.entries(callers).map(async ([name, headers]) => ({ name: `${name} on instance ${instance + 1}`, stream: await SseClient.open(base, { query: 'subscribe=users', headers }) }))))
  t.teardown(() => { for (const s of streams) s.stream.close() })
  for (const s of streams) t.equal(s.stream.status, 200, s.name)

  const write = async (url: string, payload: object, headers: Record<string, string> = admin) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/users/${url}`, headers, payload })
    t.equal(res.statusCode, 200, `${url}: ${res.body}`)
  }
  await write('edit/alice', { email: 'alice@new.test' })
  await write('edit/alice', { secret: 'hush' })
  await write('update', { where: "id == 'bob'", setValues: { email: 'bob@new.test' } }, as('bob'))
  await write('edit/alice', { email: 'alice@new.test' })
  // A change everyone sees, last: once it is there, everything before it was delivered.
  await write('edit/bob', { name: 'Bobby' })
  const seen = (s: SseClient) => s.changes().map((c) => `${c.record.id} ${c.record.email} ${c.record.name}${'secret' in c.record ? ` ${c.record.secret}` : ''}`)
  for (const s of streams) await s.stream.until(() => seen(s.stream).some((e) => e.includes(' Bobby')) ? true : undefined, 5000, `the last change at ${s.name}`)
  await settle(app)
  const expected: Record<string, string[]> = {
    anonymous: ['bob null Bobby'],
    alice: ['alice alice@new.test Alice', 'bob null Bobby'],
    bob: ['bob bob@new.test Bob', 'bob bob@new.test Bobby'],
    // Not the second write of alice's email: it changed nothing, for anyone.
    admin: ['alice alice@new.test Alice s-a', 'alice alice@new.test Alice hush', 'bob bob@new.test Bob s-b', 'bob bob@new.test Bobby s-b']
  }
  for (const s of streams) t.same(seen(s.stream), expected[s.name.split(' ')[0]], `${s.name}: only the changes of what it reads`)
})
