// Table writes alone take multipart bodies (decision D133): @fastify/multipart's parser, decorators and
// its per-request onResponse hook live in the writes' own scope, so reads never run them. A multipart
// body where none is taken is a clear 415; an upload to an unknown table still hears that the table
// is unknown. On SQLite and PostgreSQL.
import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { buildApp, forEachDialect } from '../../helper.js'
import { baseFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'multipart-scope-secret',
  appUrl: 'http://127.0.0.1',
  tables: [{
    name: 'notes',
    autoSetUid: true,
    fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }]
}

const BOUNDARY = 'fastbase-boundary'
const multipart = (json: unknown) => ({
  headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  payload: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n${JSON.stringify(json)}\r\n--${BOUNDARY}--\r\n`
})

forEachDialect(t, 'the multipart scope', async (t, dialect) => {
  // Whether each answered route had @fastify/multipart's decorators, i.e. sat in its scope.
  const inScope = new Map<string, boolean>()
  const app = await buildApp(t, config, {
    dialect,
    setup: (app) => {
      app.addHook('onResponse', (request: FastifyRequest, _reply, done) => {
        inScope.set(`${request.method} ${request.routeOptions.url}`, typeof (request as { isMultipart?: unknown }).isMultipart === 'function')
        done()
      })
    }
  })
  const created = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', ...multipart({ values: { body: 'from a form' }, returning: 'id' }) })
  t.equal(created.statusCode, 200, 'a multipart insert is taken')
  const [{ id }] = created.json()
  t.equal((await app.inject({ method: 'POST', url: `/api/v1/table/notes/edit/${id}`, ...multipart({ body: 'edited' }) })).statusCode, 200, 'a multipart edit too')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', payload: { where: `id == '${id}'` } })).statusCode, 200, 'a JSON delete, in the same scope')

  for (const url of ['/api/v1/table/notes/select', '/api/v1/table/notes/list']) {
    const res = await app.inject({ method: 'POST', url, ...multipart({ limit: 1 }) })
    t.equal(res.statusCode, 415, `${url} takes no multipart body`)
    t.same(res.json(), { code: 415, message: 'Unsupported Content-Type: multipart/form-data', data: {} }, 'the standard error body')
  }
  const unknown = await app.inject({ method: 'POST', url: '/api/v1/table/nope/insert', ...multipart({ values: {} }) })
  t.equal(unknown.statusCode, 404, 'an upload to an unknown table: the table is unknown')
  t.match(unknown.json(), { message: 'Table not found - nope' })

  for (const url of ['/api/v1/table/notes/select', '/api/v1/table/notes/list', `/api/v1/table/notes/view/${id}`]) {
    t.equal((await app.inject(url)).statusCode, url.includes('/view/') ? 404 : 200, url)
  }
  t.same(Object.fromEntries(inScope), {
    'POST /api/v1/table/notes/insert': true,
    'POST /api/v1/table/notes/edit/:id': true,
    'POST /api/v1/table/notes/delete': true,
    'POST /api/v1/table/notes/select': false,
    'POST /api/v1/table/notes/list': false,
    'POST /api/v1/table/:table/*': true,
    'GET /api/v1/table/notes/select': false,
    'GET /api/v1/table/notes/list': false,
    'GET /api/v1/table/notes/view/:id': false
  }, 'reads never carry the multipart decorators nor run its hook')
})
