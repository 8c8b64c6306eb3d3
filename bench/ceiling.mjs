// The ceiling: the benchmark's routes written by hand on bare Fastify 5, as a careful developer would
// for this one project. It parses no expressions and builds no SQL at run time: every query is fixed
// text, prepared once (better-sqlite3) or named (pg), implementing the scenario's query and the
// posts rules for that caller. It answers with the same JSON as fastbase (run.mjs checks that) and
// does the same security work per request: the token's signature and expiry, then the session row
// (not revoked, not expired, user still there), exactly the checks lib/auth/sessions/user-context.ts makes.
// It reads the database fastbase created and seeded; it never creates anything.
import Fastify from 'fastify'
import Database from 'better-sqlite3'
import { ceilingPool } from './ceiling-pg.mjs'
import { createVerifier } from 'fast-jwt'
import { serveOverIpc, serverOptions } from './child.mjs'
import { CURVE_LIMITS } from './curve.mjs'

const { databaseUrl, jwtKey } = serverOptions()

const POST_COLUMNS = 'id, created, updated, author_id, title, views, published, tags'
// The listRule `published == true | author_id == auth.uid`: anonymous callers have no uid and
// author_id is NOT NULL, so for them it is `published` alone; signed-in callers also see their drafts.
const LIST_WHERE = 'views > 100 AND published = TRUE'
const LIST_WHERE_FOR_USER = 'views > 100 AND (published = TRUE OR author_id = ?)'
const LIST_TAIL = 'ORDER BY views DESC LIMIT 20'
const curveSql = (n) => `SELECT ${POST_COLUMNS} FROM posts WHERE published = TRUE ORDER BY views DESC LIMIT ${n}`
// The session check of lib/auth/sessions/user-context.ts, minus the user fields no rule here reads.
const SESSION_USER = `SELECT u.id FROM _fastbase_sessions s JOIN users u ON u.id = s.user_id
  WHERE s.id = ? AND s.table_name = 'users' AND s.revoked_at IS NULL AND s.expires_at > ?`

/** better-sqlite3, synchronous, with fastbase's connection settings (lib/dialects/sqlite-connection.ts). */
function sqliteStore (url) {
  const db = new Database(url.replace(/^sqlite:/, ''))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  // Dates are stored as `YYYY-MM-DD HH:MM:SS.SSS` UTC text, booleans as 0/1, json as text.
  const post = (r) => ({
    ...r,
    created: new Date(`${r.created.replace(' ', 'T')}Z`).toISOString(),
    updated: new Date(`${r.updated.replace(' ', 'T')}Z`).toISOString(),
    published: r.published === 1,
    tags: r.tags === null ? null : JSON.parse(r.tags)
  })
  const now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
  const s = {
    list: db.prepare(`SELECT ${POST_COLUMNS} FROM posts WHERE ${LIST_WHERE} ${LIST_TAIL}`),
    count: db.prepare(`SELECT count(*) FROM posts WHERE ${LIST_WHERE}`).pluck(),
    listFor: db.prepare(`SELECT ${POST_COLUMNS} FROM posts WHERE ${LIST_WHERE_FOR_USER} ${LIST_TAIL}`),
    countFor: db.prepare(`SELECT count(*) FROM posts WHERE ${LIST_WHERE_FOR_USER}`).pluck(),
    view: db.prepare(`SELECT ${POST_COLUMNS} FROM posts WHERE id = ? AND published = TRUE`),
    viewFor: db.prepare(`SELECT ${POST_COLUMNS} FROM posts WHERE id = ? AND (published = TRUE OR author_id = ?)`),
    insert: db.prepare(`INSERT INTO posts (author_id, title, views, published, tags, created, updated)
      VALUES (?, ?, ?, ?, ?, ${now}, ${now}) RETURNING id`),
    edit: db.prepare(`UPDATE posts SET title = ?, updated = ${now} WHERE id = ? AND author_id = ? RETURNING id`),
    bump: db.prepare('UPDATE posts SET views = views + 1 WHERE id = ? RETURNING id, views'),
    sessionUser: db.prepare(SESSION_USER).pluck(),
    curve: new Map(CURVE_LIMITS.map((n) => [n, db.prepare(curveSql(n))]))
  }
  return {
    select: (n) => s.curve.get(n).all().map(post),
    list: (uid) => uid === null
      ? { items: s.list.all().map(post), total: s.count.get() }
      : { items: s.listFor.all(uid).map(post), total: s.countFor.get(uid) },
    view (id, uid) {
      const row = uid === null ? s.view.get(id) : s.viewFor.get(id, uid)
      return row === undefined ? undefined : post(row)
    },
    insert: (v) => s.insert.all(v.author_id, v.title, v.views ?? 0, v.published === true ? 1 : 0, v.tags === undefined ? null : JSON.stringify(v.tags)),
    // `all`, not `get`: `get` stops a write ... RETURNING after its first row, and a statement that does
    // not run to its end never triggers SQLite's automatic checkpoint (and a failed commit goes
    // unreported). The WAL then grows without bound, and on the shared file the other server's writes
    // pay for the checkpoints: a hand-written server must step its writes to the end, as fastbase does.
    edit: (id, uid, title) => s.edit.all(title, id, uid)[0],
    bump: (id) => s.bump.all(id),
    sessionUser: (sid, now) => s.sessionUser.get(sid, now),
    close: () => db.close()
  }
}

/** The ceiling on PostgreSQL: its statements named, on a pool like fastbase's (bench/ceiling-pg.mjs). */
function postgresStore (url) {
  const { named, close } = ceilingPool(url, 'ceiling')
  // timestamptz arrives as a Date, boolean and jsonb already typed.
  const post = (r) => ({ ...r, created: r.created.toISOString(), updated: r.updated.toISOString() })
  const s = {
    list: named(`SELECT ${POST_COLUMNS} FROM posts WHERE ${LIST_WHERE} ${LIST_TAIL}`),
    count: named(`SELECT count(*) AS n FROM posts WHERE ${LIST_WHERE}`),
    listFor: named(`SELECT ${POST_COLUMNS} FROM posts WHERE ${LIST_WHERE_FOR_USER} ${LIST_TAIL}`),
    countFor: named(`SELECT count(*) AS n FROM posts WHERE ${LIST_WHERE_FOR_USER}`),
    view: named(`SELECT ${POST_COLUMNS} FROM posts WHERE id = ? AND published = TRUE`),
    viewFor: named(`SELECT ${POST_COLUMNS} FROM posts WHERE id = ? AND (published = TRUE OR author_id = ?)`),
    insert: named(`INSERT INTO posts (author_id, title, views, published, tags, created, updated)
      VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) RETURNING id`),
    edit: named('UPDATE posts SET title = ?, updated = CURRENT_TIMESTAMP WHERE id = ? AND author_id = ? RETURNING id'),
    bump: named('UPDATE posts SET views = views + 1 WHERE id = ? RETURNING id, views'),
    sessionUser: named(SESSION_USER),
    curve: new Map(CURVE_LIMITS.map((n) => [n, named(curveSql(n))]))
  }
  return {
    async select (n) { return (await s.curve.get(n)()).map(post) },
    // Items and total on two connections at once, as fastbase does.
    async list (uid) {
      const [items, [{ n }]] = uid === null ? await Promise.all([s.list(), s.count()]) : await Promise.all([s.listFor(uid), s.countFor(uid)])
      return { items: items.map(post), total: n }
    },
    async view (id, uid) {
      const [row] = uid === null ? await s.view(id) : await s.viewFor(id, uid)
      return row === undefined ? undefined : post(row)
    },
    // jsonb takes JSON text: pg would send a JS array as a PostgreSQL array.
    insert: (v) => s.insert(v.author_id, v.title, v.views ?? 0, v.published === true, v.tags === undefined ? null : JSON.stringify(v.tags)),
    edit: async (id, uid, title) => (await s.edit(title, id, uid))[0],
    bump: (id) => s.bump(id),
    sessionUser: async (sid, now) => (await s.sessionUser(sid, now))[0]?.id,
    close
  }
}

const store = /^postgres(ql)?:\/\//i.test(databaseUrl) ? postgresStore(databaseUrl) : sqliteStore(databaseUrl)

class HttpError extends Error {
  constructor (statusCode, message) {
    super(message)
    this.statusCode = statusCode
  }
}
const invalidToken = () => new HttpError(401, 'Invalid or expired token')

const Post = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    created: { type: 'string' },
    updated: { type: 'string' },
    author_id: { type: 'string' },
    title: { type: 'string' },
    views: { type: 'integer' },
    published: { type: 'boolean' },
    tags: {}
  }
}
const IdParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] }
const IdRow = { type: 'object', properties: { id: { type: 'integer' } } }

const started = performance.now()
const app = Fastify({ logger: false })
// Same key and algorithm family as fastbase's @fastify/jwt (fast-jwt, HMAC); no verified-token cache.
const verifyToken = createVerifier({ key: jwtKey })

app.decorateRequest('uid', null)
app.addHook('onRequest', async (request) => {
  const header = request.headers.authorization
  if (header === undefined) return
  let claims
  try {
    claims = verifyToken(header.replace(/^Bearer\s+/i, ''))
  } catch {
    throw invalidToken()
  }
  if (claims.cid !== 'users' || typeof claims.sid !== 'string') throw invalidToken()
  const userId = await store.sessionUser(claims.sid, Math.floor(Date.now() / 1000))
  if (userId === undefined || userId !== claims.id) throw invalidToken()
  request.uid = userId
})
app.setErrorHandler((error, _request, reply) => {
  const code = error.statusCode ?? 500
  // fastbase's error body (docs/errors.md): code, message, data.
  void reply.code(code).send({ code, message: error.message, data: {} })
})

app.get('/api/v1/table/posts/list', {
  schema: { response: { 200: { type: 'object', properties: { items: { type: 'array', items: Post }, total: { type: 'integer' } } } } }
}, async (request) => await store.list(request.uid))

app.get('/api/v1/table/posts/select', {
  schema: {
    querystring: { type: 'object', required: ['limit'], properties: { order: { const: '-views' }, limit: { type: 'integer', enum: CURVE_LIMITS } } },
    response: { 200: { type: 'array', items: Post } }
  }
}, async (request) => await store.select(request.query.limit))

app.get('/api/v1/table/posts/view/:id', { schema: { params: IdParams, response: { 200: Post } } }, async (request) => {
  const post = await store.view(request.params.id, request.uid)
  if (post === undefined) throw new HttpError(404, 'Not found')
  return post
})

app.post('/api/v1/table/posts/insert', {
  schema: {
    body: {
      type: 'object',
      required: ['values'],
      properties: {
        values: {
          type: 'object',
          required: ['author_id', 'title'],
          additionalProperties: false,
          properties: { author_id: { type: 'string' }, title: { type: 'string' }, views: { type: 'integer' }, published: { type: 'boolean' }, tags: {} }
        },
        returning: { const: 'id' }
      }
    },
    response: { 200: { type: 'array', items: IdRow } }
  }
}, async (request) => {
  const { values } = request.body
  // The createRule `auth.uid != null & author_id == auth.uid`, decided before writing.
  if (request.uid === null || values.author_id !== request.uid) throw new HttpError(403, 'Forbidden')
  return await store.insert(values)
})

app.post('/api/v1/table/posts/edit/:id', {
  schema: {
    params: IdParams,
    body: { type: 'object', required: ['title'], additionalProperties: false, properties: { title: { type: 'string' } } },
    response: { 200: IdRow }
  }
}, async (request) => {
  // The updateRule `author_id == auth.uid` is part of the UPDATE's WHERE: no row, no edit.
  const row = request.uid === null ? undefined : await store.edit(request.params.id, request.uid, request.body.title)
  if (row === undefined) throw new HttpError(404, 'Not found')
  return row
})

// One statement needs no explicit transaction: it is atomic on its own.
app.post('/api/v1/action/bump_views', {
  schema: {
    body: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'integer' } } },
    response: { 200: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, views: { type: 'integer' } } } } } }
  }
}, async (request) => [await store.bump(request.body.id)])

app.addHook('onClose', async () => { await store.close() })
await app.ready()
await serveOverIpc(app, performance.now() - started)
