// What wraps a plain read or write (decisions D134, D139): one onRequest hook names the request id and
// one finds the caller and answers a refusal itself (no preParsing hook); nothing runs after the
// handler (no onSend, no onResponse: not multipart's disk clean-up on writes); @fastify/cookie's onSend
// hook and decorators live with the auth routes alone, the only ones that set cookies. Routes outside
// the API prefix read no credentials.
import t from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { buildApp } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'hook-scope-secret',
  appUrl: 'http://127.0.0.1',
  // Public reads, writes by no one: a read's wrapping is what is looked at.
  tables: [{ name: 'notes', autoSetUid: true, fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }], extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true' }] }]
}

/** The hooks printRoutes lists under the route `path` (`method`), by kind. */
function hooksOf (routes: string, path: string, method = 'GET'): Record<string, string[]> {
  const lines = routes.split('\n')
  const at = lines.findIndex((l) => l.includes(`${path} (${method}`))
  const hooks: Record<string, string[]> = {}
  for (const line of lines.slice(at + 1)) {
    const hook = /• \((\w+)\) (\[.*\])/.exec(line)
    if (hook === null) break
    hooks[hook[1]] = JSON.parse(hook[2]) as string[]
  }
  return hooks
}

t.test('a table read runs two onRequest hooks and nothing after its handler, and no cookie machinery', async (t) => {
  const cookies = new Map<string, boolean>()
  const app = await buildApp(t, config, {
    setup: (app) => {
      app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
        cookies.set(`${request.method} ${request.routeOptions.url}`, typeof (reply as { setCookie?: unknown }).setCookie === 'function')
        done()
      })
    }
  })
  const routes = app.printRoutes({ includeHooks: true, commonPrefix: false })
  for (const path of ['/api/v1/table/notes/view/:id', '/api/v1/table/notes/select', '/api/v1/table/notes/list']) {
    const hooks = hooksOf(routes, path)
    t.equal(hooks.onRequest?.length, 2, `${path}: two onRequest hooks (the request id, the caller)`)
    t.equal(hooks.preParsing, undefined, `${path}: no preParsing hook`)
    t.equal(hooks.onSend, undefined, `${path}: no onSend hook`)
    t.equal(hooks.onResponse?.length, 1, `${path}: no onResponse hook but this test's`)
  }
  for (const path of ['/api/v1/table/notes/insert', '/api/v1/table/notes/edit/:id']) {
    const hooks = hooksOf(routes, path, 'POST')
    t.equal(hooks.onRequest?.length, 2, `${path}: two onRequest hooks`)
    t.same(hooks.preValidation, ['preValidation()'], `${path}: the write's own preValidation (its context, its gate, its files)`)
    t.equal(hooks.onSend, undefined, `${path}: no onSend hook`)
    t.equal(hooks.onResponse?.length, 1, `${path}: no onResponse hook but this test's (not multipart's disk clean-up)`)
  }
  const read = await app.inject({ method: 'GET', url: '/api/v1/table/notes/select' })
  t.equal(read.statusCode, 200)
  t.match(read.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'the answer still names its request id')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode, 200)
  t.equal(cookies.get('GET /api/v1/table/notes/select'), false, 'a read has no cookie decorators')
  t.equal(cookies.get('POST /api/v1/auth/logout'), true, 'the auth routes have them')
})

t.test('a refusal is answered by the one hook, before validation and before the route', async (t) => {
  const app = await buildApp(t, config)
  const refused = await app.inject({ method: 'GET', url: '/api/v1/table/notes/select?limit=ten', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(refused.statusCode, 401, 'a bad token wins over a bad query')
  t.equal(refused.json().code, 401)
  t.match(refused.headers['x-request-id'], /\S/, 'with its request id')
  const upload = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' }, payload: '{not json' })
  t.equal(upload.statusCode, 401, 'before the body is parsed')
  const doc = await app.inject({ method: 'GET', url: '/api/v1/doc', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(doc.statusCode, 401, 'the API document, outside the API routes\' scope, checks credentials with its own hook')
  const ui = await app.inject({ method: 'GET', url: '/api/v1/doc/ui/', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(ui.statusCode, 200, 'the explorer\'s files read none')
})
