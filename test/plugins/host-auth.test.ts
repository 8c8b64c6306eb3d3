// A host's own routes authenticated by fastbase: `app.<instance>.authenticate({ require })` reads the
// same bearer token, cookie (with its origin check) and service token as fastbase's routes, refuses in
// fastbase's error body, and each of two instances in one host knows only its own callers.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastbase from '../../app.js'
import type { Fastbase } from '../../plugins/types.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../helper.js'
import { ada, extendingConfig } from '../fixtures/extending/config.js'
import type { DialectName } from '../../lib/dialects/types.js'

declare module 'fastify' {
  interface FastifyInstance { blog: Fastbase, shop: Fastbase }
}

async function hostApp (t: Test, dialect: DialectName): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  // The host's own error handler: fastbase's refusals must not depend on it.
  app.setErrorHandler((error: Error, _request, reply) => { void reply.code(500).send({ host: true, error: error.message }) })
  for (const name of ['blog', 'shop'] as const) {
    await app.register(fastbase, { config: extendingConfig(name), databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: `${adminToken}-${name}`, prefix: `/${name}/api`, panelPrefix: false, decorator: name })
  }
  app.get('/me', { preHandler: app.blog.authenticate({ require: 'user' }) }, async (request) => {
    return { uid: request.fastbaseAuth?.uid, same: app.blog.callerOf(request) === request.fastbaseAuth, table: app.blog.callerOf(request).cid }
  })
  app.post('/me', { preHandler: app.blog.authenticate({ require: 'user' }) }, async (request) => ({ uid: app.blog.callerOf(request).uid }))
  app.get('/anyone', { preHandler: app.blog.authenticate() }, async (request) => ({ uid: app.blog.callerOf(request).uid, admin: request.fastbaseAuth!.admin }))
  app.get('/admin', { preHandler: app.blog.authenticate({ require: 'admin' }) }, async (request) => ({ role: app.blog.callerOf(request).adminRole }))
  app.get('/users-only', { preHandler: app.blog.authenticate({ require: 'user', table: 'users' }) }, async () => ({ ok: true }))
  app.get('/shop/me', { preHandler: app.shop.authenticate({ require: 'user' }) }, async (request) => ({ uid: app.shop.callerOf(request).uid }))
  // A route authenticated by blog asking shop for its caller: a bug in the host, never blog's user.
  app.get('/confused', { preHandler: app.blog.authenticate({ require: 'user' }) }, async (request) => ({ uid: app.shop.callerOf(request).uid }))
  app.get('/plain', async (request) => ({ auth: request.fastbaseAuth ?? 'absent' }))
  await app.ready()
  return app
}

forEachDialect(t, 'authenticate', async (t, dialect) => {
  const app = await hostApp(t, dialect)
  const signUp = await app.inject({ method: 'POST', url: '/blog/api/table/users/auth/sign-up', payload: ada })
  t.equal(signUp.statusCode, 200, signUp.body)
  const { token, record } = signUp.json() as { token: string, record: { id: string } }
  const bearer = { authorization: `Bearer ${token}` }

  const anonymous = await app.inject({ url: '/me' })
  t.equal(anonymous.statusCode, 401)
  t.same(anonymous.json(), { code: 401, message: 'Authentication required', data: {} }, 'fastbase\'s error body, not the host handler\'s')
  t.equal(anonymous.headers['fastbase-error-code'], 'FB_ERR_UNAUTHORIZED')

  const bad = await app.inject({ url: '/me', headers: { authorization: 'Bearer not.a.token' } })
  t.same([bad.statusCode, bad.headers['fastbase-error-code']], [401, 'FB_ERR_INVALID_TOKEN'], 'a bad token is a 401, never anonymity')
  const badOnAny = await app.inject({ url: '/anyone', headers: { authorization: 'Bearer not.a.token' } })
  t.equal(badOnAny.statusCode, 401, 'even where anonymous callers pass')

  const me = await app.inject({ url: '/me', headers: bearer })
  t.same(me.json(), { uid: record.id, same: true, table: 'users' }, 'the caller on the request and from callerOf')
  t.same((await app.inject({ url: '/me', headers: { 'x-authorization': token } })).json().uid, record.id, 'the legacy header as on fastbase\'s routes')

  t.same((await app.inject({ url: '/anyone' })).json(), { uid: null, admin: false }, 'require any: anonymous passes')
  t.same((await app.inject({ url: '/anyone', headers: { authorization: `Bearer ${adminToken}-blog` } })).json(), { uid: 'superadmin', admin: true }, 'the service token is the superadmin')

  const notAdmin = await app.inject({ url: '/admin', headers: bearer })
  t.same([notAdmin.statusCode, notAdmin.json()], [403, { code: 403, message: 'Admins only', data: {} }])
  t.same((await app.inject({ url: '/admin', headers: { authorization: `Bearer ${adminToken}-blog` } })).json(), { role: 'superadmin' })
  t.equal((await app.inject({ url: '/admin' })).statusCode, 401, 'anonymous on an admin route: 401')
  t.equal((await app.inject({ url: '/users-only', headers: bearer })).statusCode, 200)

  t.test('the auth cookie, with the same origin check', async (t) => {
    const cookie = { cookie: `__Host-blog_auth=${token}` }
    t.equal((await app.inject({ url: '/me', headers: cookie })).json().uid, record.id, 'a GET with the cookie')
    const foreign = await app.inject({ method: 'POST', url: '/me', headers: { ...cookie, origin: 'https://evil.example' } })
    t.same([foreign.statusCode, foreign.headers['fastbase-error-code']], [403, 'FB_ERR_CROSS_ORIGIN'], 'a cross-origin POST with the cookie is refused')
    const own = await app.inject({ method: 'POST', url: '/me', headers: { ...cookie, origin: 'https://blog.example.com' } })
    t.equal(own.json().uid, record.id, 'from the app\'s own origin it passes')
    t.equal((await app.inject({ url: '/me', headers: { cookie: `__Host-shop_auth=${token}` } })).statusCode, 401, 'another instance\'s cookie name is not read')
  })

  t.test('two instances keep their callers apart', async (t) => {
    const other = await app.inject({ url: '/shop/me', headers: bearer })
    t.same([other.statusCode, other.headers['fastbase-error-code']], [401, 'FB_ERR_INVALID_TOKEN'], 'blog\'s token does not sign in to shop')
    t.equal((await app.inject({ url: '/shop/me', headers: { authorization: `Bearer ${adminToken}-blog` } })).statusCode, 401, 'nor does blog\'s service token')
    const confused = await app.inject({ url: '/confused', headers: bearer })
    t.equal(confused.statusCode, 500, 'shop never takes a caller blog authenticated')
    t.match(confused.json(), { host: true, error: /not authenticated by this instance/ })
  })

  t.same((await app.inject({ url: '/plain', headers: bearer })).json(), { auth: 'absent' }, 'a host route without the preHandler has no caller')
  t.throws(() => app.blog.authenticate({ require: 'user', table: 'posts' }), /"posts" is not an auth table/, 'a table that signs nobody in is refused when the route is made')
  t.throws(() => app.blog.authenticate({ require: 'users' as 'user' }), /require must be/)
})
