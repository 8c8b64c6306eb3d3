// Realtime's instance-wide bounds and a dropped slow consumer, over real HTTP: at most maxStreams
// streams and maxClassesPerTable distinct subscriber classes per table (503 with stable codes), each
// address's and user's share of them (429), and a stream dropped for overflow still hands its client
// what it had not read, its overflow event last.
import t from 'tap'
import http from 'node:http'
import Fastify from 'fastify'
import fastbase from '../../../app.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { SseClient, api, config, listening, settle, signUp } from '../../fixtures/realtime/client.js'

forEachDialect(t, 'instance-wide bounds: streams, and distinct subscriber classes per table', async (t, dialect) => {
  const { app, base } = await listening(t, config({ maxStreams: 3, maxClassesPerTable: 3 }), { dialect })
  const hub = app.fastbase.realtime!
  const ann = await signUp(base, 'ann')
  const bob = await signUp(base, 'bob')
  const anon = await SseClient.open(base, { query: 'subscribe=posts' })
  const annStream = await SseClient.open(base, { token: ann.token, query: 'subscribe=posts' })
  const bobStream = await SseClient.open(base, { token: bob.token })
  t.teardown(() => { for (const s of [anon, annStream, bobStream]) s.close() })
  t.same([anon.status, annStream.status, bobStream.status], [200, 200, 200], 'three streams (the bound) from three callers')
  const fourth = await SseClient.open(base, { token: adminToken })
  t.equal(fourth.status, 503, 'a fourth stream on this instance, whoever asks: 503')
  t.match(fourth.body, { code: 503, message: /as many realtime streams as it may \(3\)/ }, 'standard error body naming the bound')
  const full = await fetch(`${base}/api/v1/realtime`, { headers: { authorization: `Bearer ${adminToken}` } })
  t.equal(full.headers.get('fastbase-error-code'), 'FB_ERR_REALTIME_STREAMS_FULL', 'its stable code')
  await full.body?.cancel()

  // posts has two classes now: anonymous (published rows) and ann (the rule reads auth.uid).
  const post = async (token: string, clientId: string, wheres: Array<string | undefined>) =>
    await api(base, '/realtime', { clientId, subscriptions: wheres.map((where) => ({ table: 'posts', where })) }, token)
  t.equal((await post(bob.token, bobStream.clientId, ['rating > 1'])).status, 200, 'a third class: within the bound')
  const over = await post(bob.token, bobStream.clientId, ['rating > 1', 'rating > 2'])
  t.equal(over.status, 503, 'a fourth distinct class on posts: 503')
  t.match(over.body, { code: 503, message: /Table posts has as many distinct realtime subscriptions on this server as it may \(3\)/ }, 'the message names the table and the bound')
  t.equal((await post(bob.token, bobStream.clientId, ['rating > 2'])).status, 200, 'replacing a class the caller alone holds takes no more room')
  t.equal((await post(bob.token, bobStream.clientId, ['rating > 2', 'rating  >  2'])).status, 200, 'the same condition written differently is the same class')

  // One stream fewer: room for a stream, none for a new class.
  anon.close()
  await until(() => hub.clients.size === 2, 'the closed stream to leave')
  t.equal((await post(bob.token, bobStream.clientId, ['rating > 2', 'rating > 3'])).status, 200, 'bob takes the freed class\'s place')
  const newClass = await SseClient.open(base, { query: `subscribe=posts&where.posts=${encodeURIComponent('rating > 4')}` })
  t.equal(newClass.status, 503, 'a GET whose class would not fit: 503 before any stream starts')
  t.match(newClass.body, { code: 503, message: /Table posts has as many/ }, 'standard error body')
  const shared = await SseClient.open(base, { token: bob.token, query: `subscribe=posts&where.posts=${encodeURIComponent('rating > 3')}` })
  t.teardown(() => shared.close())
  t.equal(shared.status, 200, 'a class someone already holds takes no room')
  await api(base, '/table/posts/insert', { values: { id: 'r5', author_id: ann.id, title: 'rated', published: true, rating: 5 } }, ann.token)
  await settle(app)
  t.same(shared.changes().map((c) => c.record.id), ['r5'], 'and it gets the events')
})

forEachDialect(t, 'a dropped slow consumer reads its overflow event last', async (t, dialect) => {
  const { app, base } = await listening(t, config({ queueBytes: 64 * 1024 }), { dialect })
  const hub = app.fastbase.realtime!
  // A client that stops reading (its response paused: TCP back-pressure) and resumes later.
  const slow = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(`${base}/api/v1/realtime?subscribe=posts`, { headers: { authorization: `Bearer ${adminToken}` } }, (res) => {
      res.pause()
      resolve(res)
    })
    req.on('error', reject)
    t.teardown(() => req.destroy())
  })
  await until(() => hub.clients.size === 1, 'the stream')
  const title = 'x'.repeat(4000)
  for (let i = 0; i < 200 && hub.stats.overflows === 0; i++) {
    const res = await api(base, '/table/posts/insert', { values: Array.from({ length: 100 }, (_, j) => ({ id: `p${i}-${j}`, title, published: true })) }, adminToken)
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    await settle(app)
  }
  t.equal(hub.stats.overflows, 1, 'the stream overflowed and was dropped')
  // Longer than a client might take to come back (a busy tab, a GC pause); the events it never read wait for it.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const chunks: Buffer[] = []
  slow.on('data', (chunk: Buffer) => chunks.push(chunk))
  await new Promise<void>((resolve, reject) => { slow.on('end', resolve); slow.on('error', reject); slow.on('aborted', () => reject(new Error('the stream was cut'))); slow.resume() })
  const frames = Buffer.concat(chunks).toString('utf8').split('\n\n').filter((f) => f.startsWith('event: '))
  t.ok(frames.length > 10, `the client read what was buffered (${frames.length} events)`)
  const last = frames.at(-1)!
  t.match(last, /^event: error\n/, 'the last event is an error')
  t.match(JSON.parse(last.slice(last.indexOf('data: ') + 6)), { code: 429, reason: 'overflow' }, 'reason overflow')
  t.ok(frames.slice(0, -1).every((f) => f.startsWith('event: connect') || f.startsWith('event: change')), 'before it: only change events')
  await until(() => hub.clients.size === 0, 'the stream to leave the hub once its socket is gone')
})

// One address (or a few accounts) used to be able to take the instance-wide bounds: five accounts
// from one address filled a table's classes and every stream, and everyone else got 503. Each
// address and each user now holds at most a share (decision D89). Streams are opened from two real
// source addresses, 127.0.0.1 and 127.0.0.2.
forEachDialect(t, 'one address cannot take every stream, nor a table\'s subscriber classes', async (t, dialect) => {
  const { app, base } = await listening(t, config({ maxStreams: 5, maxStreamsPerAddress: 4, maxClassesPerTable: 6, maxClassesPerAddress: 4, maxClassesPerUser: 3 }), { dialect })
  const hub = app.fastbase.realtime!
  const users = await Promise.all(['ann', 'bob', 'cat', 'dan', 'eve'].map(async (name) => await signUp(base, name)))
  const [ann, bob, cat, dan, eve] = users
  const opened: Array<{ close: () => void }> = []
  t.teardown(() => { for (const s of opened) s.close() })
  const open = async (from: string, options: { token?: string, headers?: Record<string, string> } = {}) => {
    const stream = await openFrom(base, from, options)
    opened.push(stream)
    return stream
  }

  const mine = await Promise.all([ann, bob, cat, dan].map(async (u) => await open('127.0.0.1', { token: u.token })))
  t.same(mine.map((s) => s.status), [200, 200, 200, 200], 'four accounts, one stream each, from one address')
  const fifth = await open('127.0.0.1', { token: eve.token })
  t.equal(fifth.status, 429, 'a fifth stream from that address, by an account with none yet: 429')
  t.match(fifth.body, { code: 429, message: /from this address \(at most 4\)/ })
  const forwarded = await open('127.0.0.1', { token: eve.token, headers: { 'x-forwarded-for': '203.0.113.9' } })
  t.equal(forwarded.status, 429, 'an X-Forwarded-For the server does not trust changes nothing')
  const newcomer = await open('127.0.0.2')
  t.equal(newcomer.status, 200, 'someone from another address still gets a stream')

  const subscribe = async (who: { token?: string }, stream: { clientId?: string }, wheres: string[]) =>
    await api(base, '/realtime', { clientId: stream.clientId, subscriptions: wheres.map((where) => ({ table: 'posts', where })) }, who.token)
  const [annStream, bobStream, catStream] = mine
  t.equal((await subscribe(ann, annStream, ['rating > 1', 'rating > 2', 'rating > 3'])).status, 200, 'three classes: a user\'s share')
  const overUser = await subscribe(ann, annStream, ['rating > 1', 'rating > 2', 'rating > 3', 'rating > 4'])
  t.same([overUser.status, overUser.body.message], [429, 'Too many distinct realtime subscriptions to posts (at most 3 per user, or per address when signed out); subscribe with a where you already use'], 'a fourth: over the user\'s share')
  t.equal((await subscribe(ann, annStream, ['rating > 11', 'rating > 12', 'rating > 13'])).status, 200, 'replacing her own classes takes no more room')
  t.equal((await subscribe(ann, annStream, ['rating > 1', 'rating > 2', 'rating > 3'])).status, 200)
  const overAddress = await subscribe(bob, bobStream, ['rating > 4', 'rating > 5'])
  t.same([overAddress.status, overAddress.body.code], [429, 429], 'another account from the same address: the address\'s share (4) is the bound')
  t.match(overAddress.body.message, /at most 4 from this address/)
  t.equal((await subscribe(bob, bobStream, ['rating > 4'])).status, 200, 'within it')
  t.equal((await subscribe(cat, catStream, ['rating > 5'])).status, 429, 'full')
  t.equal((await subscribe({}, newcomer, ['rating > 8', 'rating > 9'])).status, 200, 'the newcomer\'s classes still fit the table (6)')

  // The instance-wide bounds still hold behind the shares.
  const full = await open('127.0.0.2', { token: eve.token })
  t.equal(full.status, 503, 'the instance holds maxStreams (5): 503')
  annStream.close()
  await until(() => hub.clients.size === 4, 'the closed stream to leave')
  t.equal((await subscribe(bob, bobStream, ['rating > 4', 'rating > 2', 'rating > 3'])).status, 200, 'ann\'s classes are no longer the address\'s')
  const again = await open('127.0.0.1', { token: eve.token })
  t.equal(again.status, 200, 'nor her stream')
})

// Behind a proxy the server trusts (the host's `trustProxy`), the address is the client's the proxy names.
forEachDialect(t, 'behind a trusted proxy, the share is the forwarded client\'s', async (t, dialect) => {
  const app = Fastify({ trustProxy: '127.0.0.1' })
  t.teardown(() => app.close())
  await app.register(fastbase, { config: config({ maxStreamsPerAddress: 1 }), databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken, panelPrefix: false })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const opened: Array<{ close: () => void }> = []
  t.teardown(() => { for (const s of opened) s.close() })
  const open = async (client: string, from = '127.0.0.1') => {
    const stream = await openFrom(base, from, { token: adminToken, headers: { 'x-forwarded-for': client } })
    opened.push(stream)
    return stream.status
  }
  t.equal(await open('198.51.100.1'), 200)
  t.equal(await open('198.51.100.1'), 429, 'the same forwarded client: its share (1) is taken')
  t.equal(await open('198.51.100.2'), 200, 'another forwarded client through the same proxy has its own')
  t.equal(await open('198.51.100.3', '127.0.0.2'), 200, 'a peer the server does not trust is its own address...')
  t.equal(await open('198.51.100.4', '127.0.0.2'), 429, '...whatever it forwards')

  // One client's other spellings take the same share: the IPv4-mapped form of an IPv4 address, and
  // every address of one IPv6 /64 (a host picks any of them).
  t.equal(await open('::ffff:198.51.100.1'), 429, 'an IPv4 client as an IPv4-mapped IPv6 address is that client')
  t.equal(await open('2001:db8:0:1::1'), 200, 'an IPv6 client')
  t.equal(await open('2001:db8:0:1:ffff::2'), 429, 'another address of its /64 is the same share')
  t.equal(await open('2001:DB8:0000:0001:0:0:0:3'), 429, 'however it is spelled')
  t.equal(await open('2001:db8:0:2::1'), 200, 'the next /64 is another client')
})

/** A stream opened from source address `from` (a real socket, so the server sees that address). */
async function openFrom (base: string, from: string, options: { token?: string, headers?: Record<string, string> }): Promise<{ status: number, body?: any, clientId?: string, close: () => void }> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  return await new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/v1/realtime`, { localAddress: from, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        const connect = res.statusCode === 200 ? /event: connect\ndata: (.*)\n\n/.exec(text) : null
        if (connect !== null) resolve({ status: 200, clientId: JSON.parse(connect[1]).clientId, close: () => req.destroy() })
      })
      res.on('end', () => { if (res.statusCode !== 200) resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), close: () => {} }) })
    })
    req.on('error', reject)
  })
}

async function until (check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
