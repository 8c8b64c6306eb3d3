// The ceiling of the items scenario set (bench/items.mjs): the five routes written by hand on bare
// Fastify 5 with prepared statements (better-sqlite3) or named ones (pg), for a table whose rules are
// all 'true' and whose callers are anonymous. It answers with the same bytes as fastbase (items.mjs
// checks that first). Every write is stepped to its end (decision D83). It reads and writes the
// database fastbase created and seeded; it never creates anything.
import Fastify from 'fastify'
import Database from 'better-sqlite3'
import { ceilingPool } from './ceiling-pg.mjs'
import { serveOverIpc, serverOptions } from './child.mjs'

const { databaseUrl } = serverOptions()

const COLUMNS = 'id, title, body, n, created'
const SELECT_20 = `SELECT ${COLUMNS} FROM items ORDER BY id DESC LIMIT 20`
const COUNT = 'SELECT count(*) AS n FROM items'
const VIEW = `SELECT ${COLUMNS} FROM items WHERE id = ?`
const INSERT = `INSERT INTO items (title, body, n, created) VALUES (?, ?, ?, ?) RETURNING ${COLUMNS}`
const EDIT = 'UPDATE items SET n = ? WHERE id = ? RETURNING id'

function sqliteStore (url) {
  const db = new Database(url.replace(/^sqlite:/, ''))
  // fastbase's connection settings (lib/dialects/sqlite-connection.ts).
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  const select = db.prepare(SELECT_20)
  const count = db.prepare(COUNT).pluck()
  const view = db.prepare(VIEW)
  const insert = db.prepare(INSERT)
  const edit = db.prepare(EDIT)
  return {
    select: () => select.all(),
    list: () => ({ items: select.all(), total: count.get() }),
    view: (id) => view.get(id),
    // `all`: a write is stepped to its end (decision D83).
    insert: (v) => insert.all(v.title, v.body, v.n, v.created),
    edit: (id, n) => edit.all(n, id)[0],
    close: () => db.close()
  }
}

function postgresStore (url) {
  const { named, close } = ceilingPool(url, 'items_ceiling')
  const select = named(SELECT_20)
  const count = named(COUNT)
  const view = named(VIEW)
  const insert = named(INSERT)
  const edit = named(EDIT)
  return {
    select,
    // Page and total on two connections at once, as fastbase runs them.
    async list () {
      const [items, [{ n }]] = await Promise.all([select(), count()])
      return { items, total: n }
    },
    view: async (id) => (await view(id))[0],
    insert: (v) => insert(v.title, v.body, v.n, v.created),
    edit: async (id, n) => (await edit(n, id))[0],
    close
  }
}

const store = /^postgres(ql)?:\/\//i.test(databaseUrl) ? postgresStore(databaseUrl) : sqliteStore(databaseUrl)

const Item = {
  type: 'object',
  properties: { id: { type: 'integer' }, title: { type: 'string' }, body: { type: 'string' }, n: { type: 'integer' }, created: { type: 'string' } }
}
const Items = { type: 'array', items: Item }
const IdParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }
const notFound = { code: 404, message: 'Not found' }

const started = performance.now()
const app = Fastify({ logger: false })
const prefix = '/api/v1/table/items'

app.get(`${prefix}/select`, {
  schema: {
    querystring: { type: 'object', required: ['limit'], properties: { order: { const: '-id' }, limit: { type: 'integer', enum: [20] } } },
    response: { 200: Items }
  }
}, async () => await store.select())

app.get(`${prefix}/list`, {
  schema: {
    querystring: { type: 'object', required: ['limit'], properties: { order: { const: '-id' }, limit: { type: 'integer', enum: [20] } } },
    response: { 200: { type: 'object', properties: { items: Items, total: { type: 'integer' } } } }
  }
}, async () => await store.list())

app.get(`${prefix}/view/:id`, { schema: { params: IdParams, response: { 200: Item } } }, async (request, reply) => {
  const row = await store.view(request.params.id)
  return row === undefined ? reply.code(404).send(notFound) : row
})

app.post(`${prefix}/insert`, {
  schema: {
    body: {
      type: 'object',
      required: ['values'],
      properties: {
        values: {
          type: 'object',
          additionalProperties: false,
          properties: { title: { type: 'string' }, body: { type: 'string' }, n: { type: 'integer' }, created: { type: 'string' } }
        },
        returning: { const: '*' }
      }
    },
    response: { 200: Items }
  }
}, async (request) => await store.insert(request.body.values))

app.post(`${prefix}/edit/:id`, {
  schema: {
    params: IdParams,
    body: { type: 'object', required: ['n'], additionalProperties: false, properties: { n: { type: 'integer' } } },
    response: { 200: { type: 'object', properties: { id: { type: 'integer' } } } }
  }
}, async (request, reply) => {
  const row = await store.edit(request.params.id, request.body.n)
  return row === undefined ? reply.code(404).send(notFound) : row
})

app.addHook('onClose', async () => { await store.close() })
await app.ready()
await serveOverIpc(app, performance.now() - started)
