// Routes whose plugins load on first use (plugins/lazy-routes.ts, decision D136): nothing is built
// before the first request, answers keep the inner instance's status, headers and bytes (a 304 to a
// conditional request, HEAD's length), unknown paths get fastbase's 404 body, a failed build is tried
// again, the inner instance closes with the app, and a host's prefix applies to both.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { lazyRoutes } from '../../plugins/lazy-routes.js'
import errorsPlugin from '../../plugins/errors.js'

/** An app with lazy routes at /files and /files/*, answering like a static file server. */
async function appWith (t: Test, options: { fail?: () => boolean, prefix?: string } = {}) {
  const state = { builds: 0, closed: 0 }
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  const routes = async (scope: FastifyInstance): Promise<void> => {
    // What errors.ts's handler reads of fastbase.
    scope.decorate('fastbase', { options: { exposeErrors: false } } as unknown as FastifyInstance['fastbase'])
    await scope.register(errorsPlugin)
    lazyRoutes(scope, ['/files', '/files/*'], async (inner) => {
      state.builds++
      if (options.fail?.() === true) throw new Error('the inner plugins failed to load')
      inner.addHook('onClose', async () => { state.closed++ })
      inner.get('/files', async (_request, reply) => await reply.redirect(`${inner.prefix}/files/`, 301))
      inner.get('/files/forbidden', async () => { throw Object.assign(new Error('Not this file'), { statusCode: 403 }) })
      inner.get('/files/broken', async () => { throw new Error('EACCES: /srv/secret/path') })
      inner.get('/files/a.txt', async (request, reply) => {
        if (request.headers['if-none-match'] === '"a1"') return await reply.code(304).header('etag', '"a1"').send()
        return await reply.type('text/plain; charset=utf-8').header('etag', '"a1"').header('x-inner', 'yes').send('hello, file')
      })
    })
  }
  await app.register(routes, { prefix: options.prefix ?? '' })
  await app.ready()
  return { app, state }
}

t.test('nothing is built until the first request, and once only', async (t) => {
  const { app, state } = await appWith(t)
  t.equal(state.builds, 0, 'not built at start')
  const [one, two] = await Promise.all([app.inject('/files/a.txt'), app.inject('/files/a.txt')])
  t.equal(state.builds, 1, 'two requests at once build it once')
  for (const answer of [one, two]) {
    t.equal(answer.statusCode, 200)
    t.equal(answer.body, 'hello, file')
    t.equal(answer.headers['content-type'], 'text/plain; charset=utf-8')
    t.equal(answer.headers['x-inner'], 'yes', 'the inner headers are kept')
    t.equal(answer.headers['content-length'], String('hello, file'.length))
  }
  await app.inject('/files/a.txt')
  t.equal(state.builds, 1, 'later requests reuse it')
})

t.test('conditional requests, HEAD and redirects answer as the inner instance does', async (t) => {
  const { app } = await appWith(t)
  const fresh = await app.inject({ url: '/files/a.txt', headers: { 'if-none-match': '"a1"' } })
  t.equal(fresh.statusCode, 304)
  t.equal(fresh.body, '')
  t.equal(fresh.headers.etag, '"a1"')
  const head = await app.inject({ method: 'HEAD', url: '/files/a.txt' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], String('hello, file'.length), 'HEAD gives the length GET would send')
  const bare = await app.inject('/files')
  t.equal(bare.statusCode, 301)
  t.equal(bare.headers.location, '/files/')
})

t.test('a path the inner instance does not know gets the standard 404 body; other methods are not routed', async (t) => {
  const { app } = await appWith(t)
  const missing = await app.inject('/files/nope.txt?x=1')
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { code: 404, message: 'Route not found - GET /files/nope.txt', data: {} })
  t.equal(missing.headers['fastbase-error-code'], 'FB_ERR_ROUTE_NOT_FOUND')
  const post = await app.inject({ method: 'POST', url: '/files/a.txt' })
  t.equal(post.statusCode, 404, 'only GET and HEAD are lazy routes')
})

t.test('other inner refusals keep their status in the standard body; inner failures show nothing', async (t) => {
  const { app } = await appWith(t)
  const forbidden = await app.inject('/files/forbidden')
  t.equal(forbidden.statusCode, 403)
  t.same(forbidden.json(), { code: 403, message: 'Not this file', data: {} })
  const broken = await app.inject('/files/broken')
  t.equal(broken.statusCode, 500)
  t.notMatch(broken.body, /EACCES|secret/, 'the inner error stays in the log')
  t.match(broken.json(), { code: 500 })
})

t.test('a GET that carries a body is answered, the body not passed on', async (t) => {
  const { app } = await appWith(t)
  const answer = await app.inject({ method: 'GET', url: '/files/a.txt', headers: { 'content-type': 'text/plain' }, payload: 'stray body' })
  t.equal(answer.statusCode, 200)
  t.equal(answer.body, 'hello, file')
})

t.test('a build that fails answers 500 and is tried again on the next request', async (t) => {
  let failing = true
  const { app, state } = await appWith(t, { fail: () => failing })
  const first = await app.inject('/files/a.txt')
  t.equal(first.statusCode, 500)
  t.notMatch(first.body, /failed to load/, 'the cause is not sent to the caller')
  failing = false
  const second = await app.inject('/files/a.txt')
  t.equal(second.statusCode, 200)
  t.equal(state.builds, 2)
})

t.test('the inner instance closes with the app; an app closed unused builds nothing', async (t) => {
  const used = await appWith(t)
  await used.app.inject('/files/a.txt')
  await used.app.close()
  t.equal(used.state.closed, 1)
  const unused = await appWith(t)
  await unused.app.close()
  t.equal(unused.state.builds, 0)
})

t.test("under a host's prefix, the inner routes are at the same paths", async (t) => {
  const { app } = await appWith(t, { prefix: '/base' })
  const answer = await app.inject('/base/files/a.txt')
  t.equal(answer.statusCode, 200)
  t.equal(answer.body, 'hello, file')
  const bare = await app.inject('/base/files')
  t.equal(bare.headers.location, '/base/files/')
})
