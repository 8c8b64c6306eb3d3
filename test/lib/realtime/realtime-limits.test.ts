// Realtime streams' lifecycle over real HTTP: cookie auth, token expiry and logout end the stream,
// a slow consumer is dropped (memory stays bounded), connection and subscription limits, and
// app.close() ends every stream promptly.
import t from 'tap'
import http from 'node:http'
import { adminToken, buildApp, forEachDialect } from '../../helper.js'
import { SseClient, api, config, listening, settle, signUp } from '../../fixtures/realtime/client.js'

forEachDialect(t, 'cookie auth, logout and token expiry end the stream', async (t, dialect) => {
  const { app, base } = await listening(t, config(), { dialect })
  const ann = await signUp(base, 'ann')
  // A browser's EventSource sends the auth cookie on the same origin.
  const byCookie = await SseClient.open(base, { cookie: `rt_auth=${ann.token}`, query: 'subscribe=posts' })
  const byHeader = await SseClient.open(base, { token: ann.token, query: 'subscribe=posts' })
  t.teardown(() => { byCookie.close(); byHeader.close() })
  await api(base, '/table/posts/insert', { values: { id: 'mine', author_id: ann.id, title: 'draft' } }, ann.token)
  await settle(app)
  t.same(byCookie.changes().map((c) => c.record.id), ['mine'], 'the cookie authenticates the stream (ann sees her draft)')

  t.equal((await api(base, '/table/users/auth/logout', {}, ann.token)).status, 200, 'logout')
  const closed = await byHeader.next('error', 3000)
  t.match(closed.data, { code: 401, reason: 'revoked', message: 'Invalid or expired token' }, 'the stream ends with error/revoked')
  await byHeader.until(() => byHeader.ended ? true : undefined, 3000, 'end of stream')
  await byCookie.until(() => byCookie.ended ? true : undefined, 3000, 'end of the cookie stream')
  t.equal(app.fastbase.realtime!.clients.size, 0, 'both streams of the revoked session are gone')
  const again = await SseClient.open(base, { token: ann.token, query: 'subscribe=posts' })
  t.equal(again.status, 401, 'the revoked token cannot reconnect')

  // A short-lived token: the stream ends when it expires. A token's `exp` is in whole seconds, so
  // it lives between duration - 1 and duration seconds: 3 leaves a loaded machine 2 s to sign up
  // and open the stream before it expires.
  const shortLived = config()
  ;(shortLived.tables[0].extensions![0] as { jwtTokenDuration: number }).jwtTokenDuration = 3
  const other = await listening(t, shortLived, { dialect })
  const bob = await signUp(other.base, 'bob')
  const stream = await SseClient.open(other.base, { token: bob.token, query: 'subscribe=posts' })
  t.teardown(() => stream.close())
  t.equal(stream.status, 200, 'the stream opens while the token lives')
  const started = Date.now()
  const expired = await stream.next('error', 6000)
  t.match(expired.data, { code: 401, reason: 'expired' }, 'error/expired when the token expires')
  t.ok(Date.now() - started < 6000, 'within the token\'s lifetime (3 s) and a little (a loaded machine)')
  await stream.until(() => stream.ended ? true : undefined, 2000, 'end of stream')
})

forEachDialect(t, 'a revoked session\'s streams end at once, not at the next session check', async (t, dialect) => {
  // An hour between session checks: only the revocation itself can end these streams in time.
  const { app, base } = await listening(t, config({ sessionCheckSeconds: 3600 }), { dialect })
  const ann = await signUp(base, 'ann')
  const second = await api(base, '/table/users/auth/login-password', { identity: 'ann', password: 'a long password 1' })
  t.equal(second.status, 200, 'a second session of ann')
  const first = await SseClient.open(base, { token: ann.token, query: 'subscribe=posts' })
  const other = await SseClient.open(base, { token: second.body.token, query: 'subscribe=posts' })
  t.teardown(() => { first.close(); other.close() })

  // change-password keeps the caller's session and revokes the others.
  const changed = await api(base, '/table/users/auth/change-password', { passwordCurrent: 'a long password 1', password: 'another long password', passwordConfirm: 'another long password' }, ann.token)
  t.equal(changed.status, 200, 'change-password')
  t.match((await other.next('error', 3000)).data, { code: 401, reason: 'revoked' }, 'the other session\'s stream ends with error/revoked')
  await settle(app)
  t.notOk(first.ended, 'the caller\'s own stream stays')
  t.equal(app.fastbase.realtime!.clients.size, 1)

  t.equal((await api(base, '/table/users/auth/logout', {}, ann.token)).status, 200, 'logout')
  t.match((await first.next('error', 3000)).data, { code: 401, reason: 'revoked' }, 'logout ends the stream')
  await first.until(() => first.ended ? true : undefined, 3000, 'end of stream')
  t.equal(app.fastbase.realtime!.clients.size, 0, 'no stream left')
})

forEachDialect(t, 'connection and subscription limits', async (t, dialect) => {
  const { app, base } = await listening(t, config({ maxConnectionsPerUser: 2, maxSubscriptions: 3 }), { dialect })
  const ann = await signUp(base, 'ann')
  const bob = await signUp(base, 'bob')
  const a1 = await SseClient.open(base, { token: ann.token })
  const a2 = await SseClient.open(base, { token: ann.token })
  const a3 = await SseClient.open(base, { token: ann.token })
  t.equal(a3.status, 429, 'a third connection of one user: 429')
  t.match(a3.body, { code: 429, message: /at most 2 per user/ }, 'standard error body')
  const b1 = await SseClient.open(base, { token: bob.token })
  t.equal(b1.status, 200, 'another user is not affected')
  const n1 = await SseClient.open(base)
  const n2 = await SseClient.open(base)
  const n3 = await SseClient.open(base)
  t.same([n1.status, n2.status, n3.status], [200, 200, 429], 'anonymous: counted per address')
  a1.close()
  await a1.until(() => app.fastbase.realtime!.connectionCount(`user:users:${ann.id}`) === 1 ? true : undefined, 2000, 'the closed stream to be released')
  const a4 = await SseClient.open(base, { token: ann.token })
  t.equal(a4.status, 200, 'a closed connection frees its place')
  const many = await SseClient.open(base, { token: bob.token, query: 'subscribe=posts,users,hidden,other' })
  t.equal(many.status, 400, 'more subscriptions than allowed in the query: 400')
  for (const s of [a2, a4, b1, n1, n2]) s.close()
})

t.test('a slow consumer is dropped; others get every event', async (t) => {
  const { app, base } = await listening(t, config({ queueBytes: 256 * 1024 }))
  const fast = await SseClient.open(base, { token: adminToken, query: 'subscribe=posts' })
  t.teardown(() => fast.close())
  // A client that never reads: node:http with the response paused (TCP back-pressure).
  await new Promise<void>((resolve, reject) => {
    const req = http.get(`${base}/api/v1/realtime?subscribe=posts`, { headers: { authorization: `Bearer ${adminToken}` } }, (res) => {
      res.pause()
      resolve()
    })
    req.on('error', reject)
    t.teardown(() => req.destroy())
  })
  await fast.until(() => app.fastbase.realtime!.clients.size === 2 ? true : undefined, 2000, 'two clients')
  const title = 'x'.repeat(4000)
  const rows = 100
  const batches = 60
  for (let i = 0; i < batches; i++) {
    const res = await api(base, '/table/posts/insert', { values: Array.from({ length: rows }, (_, j) => ({ id: `p${i}-${j}`, title, published: true })) }, adminToken)
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  }
  await settle(app)
  await fast.until(() => fast.changes().length === rows * batches ? true : undefined, 20000, 'every event at the fast client')
  t.equal(fast.changes().length, rows * batches, `the reading client got all ${rows * batches} events (${Math.round(rows * batches * title.length / 1e6)} MB)`)
  const hub = app.fastbase.realtime!
  await fast.until(() => hub.stats.overflows === 1 ? true : undefined, 5000, 'the slow client to be dropped')
  t.equal(hub.stats.overflows, 1, 'the slow client was closed (overflow), the reading one was not')
  t.equal([...hub.clients.values()].filter((c) => c.classes.length > 0).length, 1, 'it gets no more events')
  t.ok(fast.events.every((e) => e.event !== 'error'), 'the reading client got no error')
})

forEachDialect(t, 'app.close() ends every stream promptly', async (t, dialect) => {
  const { app, base } = await listening(t, config(), { dialect })
  const streams = await Promise.all([SseClient.open(base, { query: 'subscribe=posts' }), SseClient.open(base, { token: adminToken, query: 'subscribe=posts' })])
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`)
  for (const s of streams) {
    await s.until(() => s.ended ? true : undefined, 2000, 'end of stream')
    t.match(s.events.at(-1), { event: 'error', data: { code: 503, reason: 'shutdown' } }, 'the last event says the server is shutting down')
  }
})

t.test('realtime can be turned off', async (t) => {
  const app = await buildApp(t, config({ enabled: false }))
  t.equal(app.fastbase.realtime, undefined, 'no hub')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/realtime' })).statusCode, 404, 'no route')
})
