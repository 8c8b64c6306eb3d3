// fastbase inside someone else's Fastify app, as its author would test it: the host's own routes,
// JSON schemas, hooks, error and 404 handlers and plugins behave exactly as without fastbase, and two
// fastbase instances live side by side under their own prefixes, each with its own config and database.
import t from 'tap'
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyMultipart from '@fastify/multipart'
import fastifyRateLimit from '@fastify/rate-limit'
import fastifyJwt from '@fastify/jwt'
import fastifyStatic from '@fastify/static'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fastbase, { options as serverOptions } from '../../app.js'
import { CONFIG_FILE_NAMES } from '../../lib/config/locations.js'
import { adminToken, freshDir, sharedDatabase } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }

function notesConfig (name: string): DatabaseSettings {
  return {
    jwtSecret: `embedding-secret-${name}`,
    appUrl: 'http://127.0.0.1',
    appName: name,
    tables: [{
      name,
      autoSetUid: true,
      fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }]
  }
}

/** A host app with its own schema route, hook, error handler and 404 handler, set up before fastbase. */
function host (): FastifyInstance {
  const app = Fastify()
  app.addHook('onSend', async (_request, reply, payload) => { reply.header('x-host', 'yes'); return payload })
  app.setErrorHandler((error: FastifyError, _request, reply) => { void reply.code(error.statusCode ?? 500).send({ host: true, error: error.message }) })
  app.setNotFoundHandler((request, reply) => { void reply.code(404).send({ host: true, missing: request.url }) })
  app.post('/host/echo', {
    schema: {
      body: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 2 }, age: { type: 'integer' } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { hello: { type: 'string' }, age: { type: 'integer' } } } }
    }
  }, async (request) => {
    const body = request.body as { name: string, age?: number }
    return { hello: body.name, age: body.age, secret: 'not serialized' }
  })
  app.get('/host/fail', async () => { throw new Error('host failure') })
  return app
}

t.test('the host behaves exactly as without fastbase', async (t) => {
  const results: Record<string, unknown[]> = {}
  for (const withFastbase of [false, true]) {
    const app = host()
    t.teardown(() => app.close())
    if (withFastbase) await app.register(fastbase, { config: notesConfig('notes'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
    await app.ready()
    const answers = []
    for (const request of [
      { method: 'POST' as const, url: '/host/echo', payload: { name: 'Ann', age: 3 } },
      { method: 'POST' as const, url: '/host/echo', payload: { name: 'A' } },
      { method: 'POST' as const, url: '/host/echo', payload: { age: 'x' } },
      { method: 'POST' as const, url: '/host/echo', payload: '{"name":', headers: { 'content-type': 'application/json' } },
      { method: 'POST' as const, url: '/host/echo', payload: '', headers: { 'content-type': 'application/json' } },
      { method: 'GET' as const, url: '/host/fail' },
      { method: 'GET' as const, url: '/nope?x=1' }
    ]) {
      const res = await app.inject(request)
      answers.push({ status: res.statusCode, body: res.json(), host: res.headers['x-host'] })
    }
    results[String(withFastbase)] = answers
  }
  t.same(results.true, results.false, 'every answer identical: validation, serialization, parsing, errors, 404s')
  t.match(results.true, [{ status: 200, body: { hello: 'Ann', age: 3 } }, { status: 400, body: { host: true } }, { status: 400, body: { host: true } }, { status: 400 }, { status: 400 }, { status: 500, body: { host: true, error: 'host failure' } }, { status: 404, body: { host: true, missing: '/nope?x=1' } }])
})

t.test('fastbase keeps its own handlers under its prefix; the host sets its 404 handler after it', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastbase, { config: notesConfig('notes'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
  // After fastbase: a host 404 handler and error handler must still be allowed.
  app.setNotFoundHandler((_request, reply) => { void reply.code(404).send({ host: true }) })
  app.setErrorHandler((_error, _request, reply) => { void reply.code(500).send({ host: true }) })
  app.get('/host/fail', async () => { throw new Error('x') })
  await app.ready()
  t.same((await app.inject('/api/v1/nope')).json(), { code: 404, message: 'Route not found - GET /api/v1/nope', data: {} }, 'fastbase 404 under its prefix')
  t.same((await app.inject('/elsewhere')).json(), { host: true }, 'the host 404 elsewhere')
  t.same((await app.inject('/host/fail')).json(), { host: true }, 'the host error handler for host routes')
  const invalid = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 5 } } })
  t.equal(invalid.statusCode, 400)
  t.match(invalid.json(), { code: 400, message: 'Validation Error' }, 'fastbase errors keep their body')
  t.equal(app.fastbase.config.appName, 'notes', 'the host gets the instance as app.fastbase')
})

t.test('plugins fastbase also uses, registered by the host first', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifyMultipart)
  await app.register(fastifyRateLimit, { global: false })
  await app.register(fastifyJwt, { secret: 'host-jwt-secret-0123456789abcdef' })
  await app.register(fastifyStatic, { root: import.meta.dirname, prefix: '/host-static/' })
  app.get('/host/cookie', async (_request, reply) => { reply.setCookie('h', '1'); return { token: app.jwt.sign({ sub: 'host' }) } })
  const config = notesConfig('notes')
  config.tables[0].fields.push({ name: 'photo', type: 'file', sqlType: 'text' })
  await app.register(fastbase, { config, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
  await app.ready()
  const hostAnswer = await app.inject('/host/cookie')
  t.match(hostAnswer.headers['set-cookie'], /^h=1/, 'the host cookie plugin works')
  t.equal(app.jwt.verify<{ sub: string }>(hostAnswer.json().token).sub, 'host', 'the host jwt plugin works')
  t.equal((await app.inject('/host-static/embedding.test.ts')).statusCode, 200, 'the host static plugin works')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'hi' } } })).statusCode, 200)
  // An upload through the host's multipart plugin, with fastbase's limits.
  const form = new FormData()
  form.append('@jsonPayload', JSON.stringify({ values: { body: 'with photo', photo: '@filePayload' }, returning: ['photo'] }))
  form.append('@filePayload', new Blob(['png bytes'], { type: 'image/png' }), 'p.png')
  const request = new Request('http://x', { method: 'POST', body: form })
  const upload = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { 'content-type': request.headers.get('content-type')! }, payload: Buffer.from(await request.arrayBuffer()) })
  t.equal(upload.statusCode, 200, upload.body)
  t.match(upload.json(), [{ photo: /\.png$/ }])
})

t.test('two instances, own prefixes, configs and databases', async (t) => {
  const app = host()
  t.teardown(() => app.close())
  await app.register(fastbase, { config: notesConfig('blog'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/blog/api/v1', panelPrefix: '/blog/panel', decorator: 'blog' })
  await app.register(fastbase, { config: notesConfig('shop'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/shop/api/v1', panelPrefix: false, decorator: 'shop' })
  await app.ready()
  const blog = await app.inject({ method: 'POST', url: '/blog/api/v1/table/blog/insert', headers: ADMIN, payload: { values: { body: 'post' }, returning: '*' } })
  t.equal(blog.statusCode, 200)
  t.equal((await app.inject('/shop/api/v1/table/blog/list')).statusCode, 404, 'the shop instance has no blog table')
  t.same((await app.inject('/shop/api/v1/table/shop/list')).json(), { items: [], total: 0 }, 'its own database')
  t.equal((await app.inject('/blog/api/v1/table/blog/list')).json().total, 1)
  const blogDoc = (await app.inject('/blog/api/v1/doc')).json()
  t.equal(blogDoc.info.title, 'blog')
  t.ok(Object.keys(blogDoc.paths).every((p) => p.startsWith('/blog/api/v1/')), 'the document holds its own routes only')
  t.equal((await app.inject('/blog/panel/')).statusCode, 200, 'the blog panel')
  t.equal((await app.inject('/shop/panel/')).statusCode, 404, 'no shop panel')
  t.equal((await app.inject('/panel/')).statusCode, 404)
  const decorated = app as unknown as Record<string, { config: DatabaseSettings }>
  t.equal(decorated.blog.config.appName, 'blog')
  t.equal(decorated.shop.config.appName, 'shop')
  t.same((await app.inject({ method: 'POST', url: '/host/echo', payload: { name: 'Bo' } })).json(), { hello: 'Bo' }, 'host routes unaffected')

  const clash = Fastify()
  t.teardown(() => clash.close())
  await clash.register(fastbase, { config: notesConfig('a'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
  clash.register(fastbase, { config: notesConfig('b'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/b' })
  await t.rejects(async () => { await clash.ready() }, /already has a "fastbase" decorator[\s\S]*`decorator` option/, 'a second instance under the same name is a clear error')
})

t.test('a host with its own @fastify/swagger: its document holds its routes, each fastbase document its own', async (t) => {
  const blogOptions = (databaseUrl: string) => ({ config: notesConfig('blog'), databaseUrl, dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/blog/api/v1', panelPrefix: '/blog/panel', decorator: 'blog' })
  const alone = Fastify()
  t.teardown(() => alone.close())
  await alone.register(fastbase, blogOptions(sharedDatabase(t, 'sqlite')))
  const aloneDoc = (await alone.inject('/blog/api/v1/doc')).json()

  const app = host()
  t.teardown(() => app.close())
  await app.register(fastifySwagger, { openapi: { openapi: '3.1.0', info: { title: 'host', version: '1.0.0' } } })
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' })
  // Swagger sees the routes declared after it (host() declared its own before).
  app.get('/host/documented', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }))
  await app.register(fastbase, blogOptions(sharedDatabase(t, 'sqlite')))
  await app.register(fastbase, { config: notesConfig('shop'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken, prefix: '/shop/api/v1', panelPrefix: false, decorator: 'shop' })
  await app.ready()
  const hostDoc = await app.inject('/docs/json')
  t.equal(hostDoc.statusCode, 200, 'the host document builds (fastbase routes refer to components only fastbase\'s document has)')
  t.same(Object.keys(hostDoc.json().paths), ['/host/documented'], 'the host document lists the host\'s routes only')
  t.same((await app.inject('/blog/api/v1/doc')).json(), aloneDoc, 'the blog document is what it is without the host\'s swagger')
  const shopDoc = (await app.inject('/shop/api/v1/doc')).json()
  t.ok(Object.keys(shopDoc.paths).length > 5 && Object.keys(shopDoc.paths).every((p) => p.startsWith('/shop/api/v1/')), 'the shop document holds its own routes')
  t.equal((await app.inject('/docs/')).statusCode, 200, 'the host Swagger UI is served')
  t.equal((await app.inject('/blog/api/v1/doc/ui/')).statusCode, 200, 'and fastbase\'s')
})

t.test('a host without a config gets a ConfigError, never the bundled example; fastbase\'s own server options serve it', async (t) => {
  t.notOk(CONFIG_FILE_NAMES.some((name) => existsSync(name)), 'precondition: no config file in the working directory')
  const app = Fastify()
  t.teardown(() => app.close())
  app.get('/host', async () => ({ host: true }))
  // env: {} stands for an environment without FASTBASE_CONFIG.
  app.register(fastbase, { env: {}, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t) })
  await t.rejects(async () => { await app.ready() }, { name: 'ConfigError', code: 'FB_ERR_CONFIG', message: /config: none given: pass the `config` option \(an object or a file path\), set FASTBASE_CONFIG, or put fastbase\.config\.ts/ })

  // What `fastify start --options dist/app.js` passes the plugin: app.ts's server options.
  const own = Fastify({ ...serverOptions, logger: false })
  t.teardown(() => own.close())
  await own.register(fastbase, { ...serverOptions, env: {}, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t) })
  await own.ready()
  t.equal((await own.inject('/api/v1/table/posts/list')).statusCode, 200, 'the bundled example (a blog) is served')
})

t.test('a host with its own request.auth: fastbase registers, and each sees its own caller', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.decorateRequest('auth', null)
  app.addHook('onRequest', async (request) => { (request as unknown as { auth: string }).auth = `host:${request.headers['x-host-user'] ?? 'nobody'}` })
  app.get('/host/me', async (request) => ({ auth: (request as unknown as { auth: string }).auth, fastbase: request.fastbaseAuth ?? null }))
  await app.register(fastbase, { config: notesConfig('notes'), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
  await app.ready()
  t.same((await app.inject({ url: '/host/me', headers: { 'x-host-user': 'ann' } })).json(), { auth: 'host:ann', fastbase: null }, 'the host\'s decorator is its own; fastbase\'s caller is not set on host routes')
  const anonymous = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'hi' }, returning: '*' } })
  t.equal(anonymous.statusCode, 200, anonymous.body)
  const admin = await app.inject({ url: '/api/v1/table/notes/list', headers: { ...ADMIN, 'x-host-user': 'ann' } })
  t.equal(admin.json().total, 1, 'fastbase reads its own caller (the service token), whatever the host put in request.auth')
  t.equal((await app.inject({ url: '/api/v1/table/notes/list', headers: { authorization: 'Bearer nope' } })).statusCode, 401)
})

t.test('app.fastbase is typed for TypeScript consumers of the built package', async (t) => {
  const dir = freshDir(t)
  const root = join(import.meta.dirname, '..', '..')
  writeFileSync(join(dir, 'consumer.ts'), `
import Fastify from 'fastify'
import fastbase, { type Fastbase, FastbaseError, ERROR_CODE_HEADER } from ${JSON.stringify(join(root, 'dist', 'index.js'))}
const app = Fastify()
await app.register(fastbase, { config: './fastbase.config.json' })
const tables: number = app.fastbase.descriptors.size
const db = app.fastbase.db
const pending: Promise<number> = app.fastbase.schema.status().then((s) => s.pending.length)
const other: Fastbase = app.fastbase
const failed: Promise<string | undefined> = app.fastbase.runAction('nope', {}).then(() => undefined, (err: unknown) => err instanceof FastbaseError ? err.code : undefined)
const header: string = ERROR_CODE_HEADER
// Under strict TypeScript fastbase's caller is possibly undefined on the host's routes (it is set on fastbase's only),
// and a host may have its own request.auth.
declare module 'fastify' { interface FastifyRequest { auth: { user: string } } }
app.decorateRequest('auth', null as unknown as { user: string })
app.get('/host', async (request) => {
  // @ts-expect-error fastbaseAuth may be undefined here
  const unchecked: string | null = request.fastbaseAuth.role
  return { user: request.auth.user, uid: request.fastbaseAuth?.uid ?? null, unchecked }
})
export { tables, db, pending, other, failed, header }
`)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, typeRoots: [join(root, 'node_modules', '@types')], baseUrl: root, paths: { '*': [join(root, 'node_modules', '*')] } }, files: ['consumer.ts'] }))
  const tsc = spawn(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir })
  let output = ''
  tsc.stdout.on('data', (d) => { output += d })
  tsc.stderr.on('data', (d) => { output += d })
  const [code] = await once(tsc, 'close')
  t.equal(code, 0, output || 'compiles')
})
