// Realtime across instances sharing one PostgreSQL database (LISTEN/NOTIFY): a write on A reaches
// B's subscribers under B's evaluation of their rules, deletes carry the old record (in pieces when
// it is over NOTIFY's 8000 bytes), a lost LISTEN connection is re-established (clients get `gap`),
// and instances of other schemas in the same database never see each other's changes.
import t from 'tap'
import { adminToken, dialects, sharedDatabase } from '../../helper.js'
import { SseClient, api, config, listening, settle, signUp } from '../../fixtures/realtime/client.js'

if (!dialects.includes('postgres')) {
  t.pass('PostgreSQL not configured (FASTBASE_TEST_PG_URL): nothing to test across instances')
} else {
  t.test('postgres: two instances on one database', async (t) => {
    const databaseUrl = sharedDatabase(t, 'postgres')
    const a = await listening(t, config(), { dialect: 'postgres', databaseUrl })
    const b = await listening(t, config(), { dialect: 'postgres', databaseUrl })
    const elsewhere = await listening(t, config(), { dialect: 'postgres' })
    const ann = await signUp(a.base, 'ann')
    const bob = await signUp(a.base, 'bob')
    const anonB = await SseClient.open(b.base, { query: 'subscribe=posts' })
    const annB = await SseClient.open(b.base, { token: ann.token, query: 'subscribe=posts' })
    const bobB = await SseClient.open(b.base, { token: bob.token, query: 'subscribe=posts' })
    const adminB = await SseClient.open(b.base, { token: adminToken, query: 'subscribe=posts,users' })
    const annA = await SseClient.open(a.base, { token: ann.token, query: 'subscribe=posts' })
    const other = await SseClient.open(elsewhere.base, { token: adminToken, query: 'subscribe=posts,users' })
    t.teardown(() => { for (const s of [anonB, annB, bobB, adminB, annA, other]) s.close() })

    await signUp(a.base, 'carl')
    await api(a.base, '/table/posts/insert', { values: [{ id: 'd1', author_id: ann.id, title: 'draft', secret: 'x' }, { id: 'p1', author_id: ann.id, title: 'public', published: true, secret: 'y' }] }, ann.token)
    await adminB.until(() => adminB.changes().filter((c) => c.table === 'posts').length === 2 ? true : undefined, 5000, 'two inserts on B')
    await settle(b.app)
    const ids = (s: SseClient) => s.changes().filter((c) => c.table === 'posts').map((c) => `${c.action}:${c.record.id}`)
    t.same(ids(anonB), ['insert:p1'], 'B, anonymous: the published row only')
    t.same(ids(annB), ['insert:d1', 'insert:p1'], 'B, ann: her draft too')
    t.same(ids(bobB), ['insert:p1'], 'B, bob: not ann\'s draft')
    t.same(ids(annA), ['insert:d1', 'insert:p1'], 'A\'s own subscribers too (delivered in process)')
    t.notOk(anonB.changes().some((c) => 'secret' in c.record), 'noSelect stripped on B')
    t.equal(adminB.changes().find((c) => c.record.id === 'd1').record.secret, 'x', 'B\'s admin sees it')
    t.same(adminB.changes().filter((c) => c.table === 'users').map((c) => c.record.username), ['carl'], 'a sign-up on A reaches B')

    // An update that leaves anonymous's rule, on A: B's anonymous subscriber does not get it.
    await api(a.base, '/table/posts/edit/p1', { published: false }, ann.token)
    // A delete on A whose record is far over NOTIFY's 8000 bytes (sent in pieces).
    const big = 'é'.repeat(30_000)
    await api(a.base, '/table/posts/insert', { values: { id: 'big', author_id: bob.id, title: big, published: true } }, bob.token)
    await api(a.base, '/table/posts/delete', { where: "id == 'big'" }, bob.token)
    await anonB.until(() => ids(anonB).includes('delete:big') ? true : undefined, 5000, 'the big delete on B')
    t.same(ids(anonB), ['insert:p1', 'insert:big', 'delete:big'], 'B, anonymous: not the update that hid p1; the big row\'s insert and delete')
    t.equal(anonB.changes().at(-1).record.title, big, 'the deleted record as it was, whole (non-ASCII text, 90 kB)')
    await annB.until(() => ids(annB).includes('delete:big') ? true : undefined, 5000, 'the big delete at ann on B')
    t.same(ids(annB).slice(2), ['update:p1', 'insert:big', 'delete:big'], 'B, ann: her own update too')

    // A rolled-back action on A: nothing anywhere.
    t.equal((await api(a.base, '/action/add_then_fail', { id: 'doomed' })).status, 400)
    await api(a.base, '/action/add_sql', { id: 'after', title: 'after the rollback' })
    await anonB.until(() => ids(anonB).includes('insert:after') ? true : undefined, 5000, 'the next insert')
    t.notOk(adminB.changes().some((c) => c.record.id === 'doomed'), 'the rolled-back action emitted nothing on B')

    // Writes on B reach A.
    await api(b.base, '/action/add_sql', { id: 'fromB', title: 'written on B' })
    await annA.until(() => ids(annA).includes('insert:fromB') ? true : undefined, 5000, 'B\'s write on A')
    t.pass('a write on B reaches A')
    await settle(elsewhere.app)
    t.same(other.changes(), [], 'an instance of another schema in the same database saw nothing')

    // B loses its LISTEN connection: its clients get gap, and it reconnects.
    b.app.fastbase.realtimeBus!.breakConnection()
    await anonB.next('gap', 5000)
    t.pass('gap after the connection was lost')
    let delivered = false
    for (let i = 0; i < 50 && !delivered; i++) {
      await api(a.base, '/action/add_sql', { id: `retry${i}`, title: 'after the reconnect' })
      await new Promise((resolve) => setTimeout(resolve, 100))
      delivered = ids(anonB).some((id) => id.startsWith('insert:retry'))
    }
    t.ok(delivered, 'B receives A\'s changes again after reconnecting')
  })

  t.test('postgres: changes are sent to the other instances only while one has subscribers for their table', async (t) => {
    const databaseUrl = sharedDatabase(t, 'postgres')
    const a = await listening(t, config(), { dialect: 'postgres', databaseUrl })
    const b = await listening(t, config(), { dialect: 'postgres', databaseUrl })
    const ann = await signUp(a.base, 'ann')
    // A listener of its own on the instances' channel counts what A sends.
    const pg = (await import('pg')).default
    const url = new URL(databaseUrl)
    url.searchParams.delete('schema')
    const spy = new pg.Client({ connectionString: url.toString() })
    await spy.connect()
    t.teardown(() => spy.end())
    const seen: string[] = []
    spy.on('notification', (message) => { if (message.payload !== undefined) seen.push(message.payload) })
    await spy.query(`LISTEN "${a.app.fastbase.realtimeBus!.channel}"`)
    const insert = async (id: string) => {
      t.equal((await api(a.base, '/table/posts/insert', { values: { id, author_id: ann.id, title: id, published: true } }, ann.token)).status, 200)
      await settle(a.app)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }

    await insert('unseen')
    t.same(seen.filter((p) => p.includes('"posts"')), [], 'no subscriber anywhere: A sends nothing for posts')
    // A stream opened on B: the first write on A right after its connect event reaches it (the
    // subscription is recorded before the connect event, and A checks after its commit).
    const anonB = await SseClient.open(b.base, { query: 'subscribe=posts' })
    t.teardown(() => anonB.close())
    await insert('first')
    await anonB.until(() => anonB.changes().some((c) => c.record.id === 'first') ? true : undefined, 5000, 'the first write after connect')
    t.ok(seen.some((p) => p.includes('"first"')), 'A sent it')
    t.notOk(seen.some((p) => p.includes('"caller"') || p.includes('"jwt"') || p.includes('"requestId"')), 'without the writer\'s caller or request id (any database session can LISTEN)')
    t.notOk(anonB.changes().some((c) => c.record.id === 'unseen'), 'the write before the subscription is not replayed')
    // Users: nobody subscribes, nothing is sent for them.
    await signUp(a.base, 'bob')
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.notOk(seen.some((p) => p.includes('"users"')), 'no NOTIFY for a table nobody subscribes to')

    // B's stream goes: its next renewal withdraws the table.
    anonB.close()
    await anonB.until(() => b.app.fastbase.realtime!.clients.size === 0 ? true : undefined, 3000, 'the stream is gone on B')
    const renew = async () => { await b.app.fastbase.realtimeBus!.interest!.renewAll(b.app.fastbase.realtime!.subscribedTables()) }
    const recorded = async () => (await b.app.fastbase.db.raw('SELECT "table_name" FROM "_fastbase_realtime_interest"')).rows
    await renew()
    t.same(await recorded(), [{ table_name: 'posts' }], 'one renewal without a subscriber keeps the record (a stream may be on its way in)')
    await renew()
    t.same(await recorded(), [], 'the second withdraws it: no instance records an interest any more')
  })

  t.test('postgres: a logout on one instance ends the session\'s streams on the other at once', async (t) => {
    const databaseUrl = sharedDatabase(t, 'postgres')
    // An hour between session checks: only the revocation message can end B's stream in time.
    const a = await listening(t, config({ sessionCheckSeconds: 3600 }), { dialect: 'postgres', databaseUrl })
    const b = await listening(t, config({ sessionCheckSeconds: 3600 }), { dialect: 'postgres', databaseUrl })
    const ann = await signUp(a.base, 'ann')
    const bob = await signUp(a.base, 'bob')
    const annB = await SseClient.open(b.base, { token: ann.token, query: 'subscribe=posts' })
    const bobB = await SseClient.open(b.base, { token: bob.token, query: 'subscribe=posts' })
    t.teardown(() => { annB.close(); bobB.close() })
    t.equal((await api(a.base, '/table/users/auth/logout', {}, ann.token)).status, 200, 'ann logs out on A')
    t.match((await annB.next('error', 5000)).data, { code: 401, reason: 'revoked' }, 'her stream on B ends with error/revoked')
    await settle(b.app)
    t.notOk(bobB.ended, 'bob\'s stream on B stays')
    t.equal(b.app.fastbase.realtime!.clients.size, 1)
  })
}
