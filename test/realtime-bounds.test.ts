// Realtime's instance-wide bounds and a dropped slow consumer, over real HTTP: at most maxStreams
// streams and maxClassesPerTable distinct subscriber classes per table (503 with stable codes), and
// a stream dropped for overflow still hands its client what it had not read, its overflow event last.
import t from 'tap'
import http from 'node:http'
import { adminToken, forEachDialect } from './helper.js'
import { SseClient, api, config, listening, settle, signUp } from './fixtures/realtime/client.js'

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

async function until (check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
