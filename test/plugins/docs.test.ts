// Docs, health and panel plugins on a minimal instance: a fake fastbase decoration with a real
// in-memory SQLite knex, so the readiness check runs real SQL.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import knex from 'knex'
import { Type } from '@sinclair/typebox'
import { validate } from '@readme/openapi-parser'
import docsPlugin from '../../plugins/docs.js'
import healthRoutes from '../../routes/health.js'
import panelRoutes from '../../routes/panel.js'
import type { Fastbase } from '../../plugins/types.js'
import { sendError } from '../../plugins/errors.js'
import { FastbaseError } from '../../lib/errors.js'
import { ANONYMOUS } from '../../lib/auth-context.js'

const prefix = '/api/v1'

// A shared schema with an `$id`, the way table record schemas are added.
const NoteSchema = Type.Object({
  id: Type.String(),
  text: Type.String({ minLength: 1 })
}, { $id: 'fastbase/record/notes', additionalProperties: false })

// A schema with its own `$id` used whole as a response, never added with addSchema.
const NoteListSchema = Type.Object({
  items: Type.Array(Type.Ref(NoteSchema)),
  total: Type.Integer()
}, { $id: 'fastbase/list/notes' })

async function build (t: Test) {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  const app = Fastify()
  const fastbase = {
    config: { appName: 'x', tables: [], jwtSecret: 's', appUrl: 'http://l' },
    dialect: { name: 'sqlite' },
    db,
    // Who calls: anonymous always (the document's own route asks, plugins/auth-context.ts#identifyCaller).
    callerFrom: () => ANONYMOUS
  } as unknown as Fastbase
  app.decorate('fastbase', fastbase)
  // fastbase's rendering of its errors (the errors plugin needs the whole app).
  app.setErrorHandler((error, _request, reply) => { if (error instanceof FastbaseError) sendError(reply, error); else throw error })
  app.addSchema(NoteSchema)
  await app.register(docsPlugin, { prefix })
  await app.register(healthRoutes, { prefix })
  app.post(`${prefix}/notes`, {
    schema: {
      tags: ['sample'],
      body: Type.Object({ text: Type.String({ minLength: 1 }) }),
      response: { 200: Type.Ref(NoteSchema) }
    }
  }, async (request) => ({ id: '1', text: (request.body as { text: string }).text }))
  app.get(`${prefix}/notes`, {
    schema: { tags: ['sample'], response: { 200: NoteListSchema } }
  }, async () => ({ items: [{ id: '1', text: 'a', extra: true }], total: 1 }))
  app.get(`${prefix}/secret`, { schema: { hide: true } }, async () => ({}))
  await app.register(panelRoutes)
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await db.destroy()
  })
  return { app, db }
}

t.test('/doc is a valid OpenAPI 3.1.0 document of the routes', async t => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: `${prefix}/doc` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /application\/json/)
  const doc = res.json()
  t.equal(doc.openapi, '3.1.0')
  t.same(doc.info, { title: 'x', version: (await import('../../package.json', { with: { type: 'json' } })).default.version })
  t.same(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.ok(doc.paths[`${prefix}/doc`]?.get, 'the document lists itself, as teenybase\'s does')
  t.notOk(doc.paths[`${prefix}/secret`], 'a hidden route stays hidden')

  // The validator dereferences in place: hand it a copy.
  const result = await validate(structuredClone(doc))
  t.ok(result.valid, 'passes @readme/openapi-parser: ' + JSON.stringify(result.valid ? [] : result.errors))

  const note = doc.paths[`${prefix}/notes`]?.post
  t.ok(note, 'the sample route is documented')
  t.same(note.tags, ['sample'])
  t.match(note.requestBody.content['application/json'].schema, {
    type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 } }
  })
  t.equal(note.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/fastbase.record.notes',
    'a shared schema is a component named after its $id')
  t.match(doc.components.schemas['fastbase.record.notes'], {
    type: 'object', properties: { id: { type: 'string' }, text: { type: 'string' } }
  })

  t.equal(doc.paths[`${prefix}/notes`].get.responses['200'].content['application/json'].schema.$ref,
    '#/components/schemas/fastbase.list.notes', 'so is an $id schema used whole by a route')
  t.match(doc.components.schemas['fastbase.list.notes'], {
    properties: { items: { items: { $ref: '#/components/schemas/fastbase.record.notes' } } }
  })
  const list = await app.inject({ method: 'GET', url: `${prefix}/notes` })
  t.same(list.json(), { items: [{ id: '1', text: 'a' }], total: 1 }, 'the route still serializes with its own schema')

  const health = doc.paths[`${prefix}/health`]?.get
  t.ok(health, 'health is documented')
  t.same(health.tags, ['meta'])
  t.ok(health.responses['200'] && health.responses['503'])

  const paths = Object.keys(doc.paths)
  t.notOk(paths.some(p => p.startsWith(`${prefix}/doc/`)), 'nor the UI routes')
  t.notOk(paths.includes(`${prefix}/secret`), 'schema.hide hides a route')
  t.notOk(paths.some(p => p.startsWith('/panel')), 'panel files are not API routes')
})

t.test('/doc/ui serves Swagger UI and its assets', async t => {
  const { app } = await build(t)
  for (const url of [`${prefix}/doc/ui`, `${prefix}/doc/ui/`]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /text\/html/, url)
    t.match(res.body, /swagger-ui-bundle\.js/, url)
    // Every script the page names must load, whichever form of the URL was used.
    const scripts = [...res.body.matchAll(/<script src="([^"]+)"/g)].map(m => m[1]!)
    t.equal(scripts.length, 3, url)
    for (const src of scripts) {
      const asset = await app.inject({ method: 'GET', url: new URL(src, 'http://h' + url).pathname })
      t.equal(asset.statusCode, 200, `${url} -> ${src}`)
      t.match(asset.headers['content-type'], /javascript/, src)
    }
  }
  const json = await app.inject({ method: 'GET', url: `${prefix}/doc/ui/json` })
  t.equal(json.statusCode, 200, 'the UI fetches the document from ./json')
  t.equal(json.json().openapi, '3.1.0')
})

t.test('/doc/ui over real HTTP, following redirects', async t => {
  const { app } = await build(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const res = await fetch(`${base}${prefix}/doc/ui/`, { redirect: 'follow' })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /text\/html/)
  const html = await res.text()
  const css = html.match(/href="([^"]+swagger-ui\.css)"/)?.[1]
  t.ok(css, 'the page links its stylesheet')
  const asset = await fetch(new URL(css!, res.url), { redirect: 'follow' })
  t.equal(asset.status, 200)
  t.match(asset.headers.get('content-type'), /text\/css/)
  await asset.arrayBuffer()
  const old = await fetch(`${base}${prefix}/doc/ui/static/index.html`, { redirect: 'follow' })
  t.equal(old.status, 200, 'the legacy static/index.html URL lands on the UI')
  t.match(await old.text(), /swagger-ui-bundle\.js/)
})

t.test('/health answers 200 with the app facts, 503 without a database', async t => {
  const { app, db } = await build(t)
  const ok = await app.inject({ method: 'GET', url: `${prefix}/health` })
  t.equal(ok.statusCode, 200)
  const body = ok.json()
  const pkg = (await import('../../package.json', { with: { type: 'json' } })).default
  t.match(body, { status: 'ok', name: 'x', appName: 'x', fastbase: pkg.version, dialect: 'sqlite' })
  t.type(body.uptime, 'number')
  t.ok(body.uptime >= 0)
  t.same(Object.keys(body).sort(), ['appName', 'dialect', 'fastbase', 'name', 'status', 'timestamp', 'uptime'], 'no version: the config has none (teenybase leaves it out then)')
  t.ok(Number.isInteger(body.timestamp), 'timestamp is a number of milliseconds, as teenybase answers it')
  t.ok(Math.abs(body.timestamp - Date.now()) < 60_000, 'timestamp is the server clock')

  app.fastbase.config.version = 7
  t.equal((await app.inject({ method: 'GET', url: `${prefix}/health` })).json().version, 7, 'version: the config\'s version number (teenybase\'s settings version)')

  await db.destroy()
  const down = await app.inject({ method: 'GET', url: `${prefix}/health` })
  t.equal(down.statusCode, 503)
  t.same(down.json(), { code: 503, message: 'Database unavailable', data: {} })
})

t.test('/panel/ serves the placeholder page; /panel redirects there', async t => {
  const { app } = await build(t)
  const page = await app.inject({ method: 'GET', url: '/panel/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /<title>fastbase admin<\/title>/)
  t.match(page.body, /href="\/api\/v1\/doc\/ui"/)
  t.match(page.body, /href="\/api\/v1\/health"/)
  t.notMatch(page.body, /(src|href)="(https?:)?\/\//, 'no external assets')

  const bare = await app.inject({ method: 'GET', url: '/panel' })
  t.equal(bare.statusCode, 301)
  t.equal(bare.headers.location, '/panel/')
})
