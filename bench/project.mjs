// The benchmark project: its config, the 100-table config for the start-up measurement, and the
// seed data. Imports fastbase from dist/ (`npm run bench` builds first), so the bench needs no TS loader.
import Fastify from 'fastify'
import fastbase, { baseFields, authFields } from '../dist/index.js'

export const ADMIN_TOKEN = 'fastbase-bench-admin-service-token'
export const JWT_SECRET = 'fastbase-bench-jwt-secret'
export const USERS_JWT_SECRET = 'fastbase-bench-users-secret'
/** The key fastbase signs `users` tokens with (global secret + the table's), needed by the ceiling. */
export const USERS_JWT_KEY = JWT_SECRET + USERS_JWT_SECRET

export const USER_COUNT = 100
export const POST_COUNT = 10_000
/** The posts.views values are a permutation of 0..POST_COUNT-1 (7919 is prime to 10,000): no ties, so
 * `order=-views` has one right answer and both servers' bodies can be compared exactly. */
const VIEWS_STRIDE = 7919
const INSERT_BATCH = 500

const rules = (ext) => ({ name: 'rules', ...ext })

/** `users` (accounts) and `posts`, with the rules and the action the scenarios exercise. */
export function benchConfig () {
  return {
    appName: 'fastbase bench',
    appUrl: 'http://127.0.0.1',
    jwtSecret: JWT_SECRET,
    rateLimit: false,
    // FASTBASE_BENCH_REALTIME=off: the same project without realtime, to measure what it costs a write.
    // Every subscriber of the bench runs on this machine, one address: its shares are the instance's
    // bounds, so the scenarios measure those (decision D89).
    realtime: process.env.FASTBASE_BENCH_REALTIME === 'off' ? { enabled: false } : { maxStreamsPerAddress: 10_000, maxClassesPerAddress: 1000, maxClassesPerUser: 1000 },
    tables: [
      {
        name: 'users',
        autoSetUid: true,
        fields: [...baseFields, ...authFields],
        extensions: [
          // Long-lived tokens: one set is issued at seeding and used for the whole run.
          { name: 'auth', jwtSecret: USERS_JWT_SECRET, jwtTokenDuration: 24 * 3600, maxTokenRefresh: 0 },
          rules({ listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null })
        ]
      },
      {
        name: 'posts',
        fields: [
          // An integer id (not baseFields' text uid): the bump_views action takes an integer `id`.
          { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
          ...baseFields.filter((f) => f.name !== 'id'),
          { name: 'author_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
          { name: 'title', type: 'text', sqlType: 'text', notNull: true },
          { name: 'views', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
          { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
          { name: 'tags', type: 'json', sqlType: 'json' }
        ],
        indexes: [{ fields: ['author_id'] }, { fields: ['views'] }],
        extensions: [rules({
          listRule: 'published == true | author_id == auth.uid',
          viewRule: 'published == true | author_id == auth.uid',
          createRule: 'auth.uid != null & author_id == auth.uid',
          updateRule: 'author_id == auth.uid',
          deleteRule: null
        })]
      }
    ],
    actions: [{
      name: 'bump_views',
      params: { id: 'integer' },
      sql: { type: 'UPDATE', table: 'posts', set: { views: { q: 'views + 1' } }, where: { q: 'id = {:id}' }, returning: ['id', 'views'] }
    }]
  }
}

/** An auth table and 99 tables hanging off it, each with a foreign key, an index and rules: start-up cost at scale. */
export function manyTablesConfig (count = 100) {
  const config = benchConfig()
  const tables = [config.tables[0]]
  for (let i = 1; i < count; i++) {
    tables.push({
      name: `t${String(i).padStart(3, '0')}`,
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'name', type: 'text', sqlType: 'text', notNull: true },
        { name: 'amount', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 }, check: { q: 'amount >= 0' } },
        { name: 'active', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: true } },
        { name: 'meta', type: 'json', sqlType: 'json' }
      ],
      indexes: [{ fields: ['owner_id'] }, { fields: ['name'], unique: true }],
      extensions: [rules({
        listRule: 'active == true | owner_id == auth.uid',
        viewRule: 'active == true | owner_id == auth.uid',
        createRule: 'owner_id == auth.uid',
        updateRule: 'owner_id == auth.uid & new.owner_id == owner_id',
        deleteRule: 'owner_id == auth.uid'
      })]
    })
  }
  return { ...config, tables, actions: [] }
}

/** A fastbase app on `databaseUrl`, ready, not listening. */
export async function openFastbase (config, databaseUrl, dataDir) {
  const app = Fastify({ logger: false })
  await app.register(fastbase, { config, databaseUrl, dataDir, adminServiceToken: ADMIN_TOKEN })
  await app.ready()
  return app
}

async function call (app, url, payload, token = ADMIN_TOKEN) {
  const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: { authorization: `Bearer ${token}` } })
  if (res.statusCode !== 200) throw new Error(`seeding: POST ${url} answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/**
 * Creates the schema and the data through fastbase itself (sign-up for the users, so every user has a
 * real session and token; admin inserts for the posts), then closes. Returns what the scenarios need.
 */
export async function seed (databaseUrl, dataDir) {
  const app = await openFastbase(benchConfig(), databaseUrl, dataDir)
  try {
    const users = []
    // Sign-ups hash a password (scrypt on the thread pool): a few at a time keeps the pool busy.
    for (let i = 0; i < USER_COUNT; i += 10) {
      const batch = Array.from({ length: Math.min(10, USER_COUNT - i) }, (_, j) => {
        const n = i + j
        return app.inject({
          method: 'POST',
          url: '/api/v1/table/users/auth/sign-up',
          payload: { username: `user${n}`, email: `user${n}@bench.example`, name: `User ${n}`, password: 'bench password' }
        }).then((res) => {
          if (res.statusCode !== 200) throw new Error(`seeding: sign-up answered ${res.statusCode}: ${res.body}`)
          return res.json()
        })
      })
      users.push(...(await Promise.all(batch)).map((s) => ({ id: s.record.id, token: s.token })))
    }

    const posts = Array.from({ length: POST_COUNT }, (_, i) => ({
      author_id: users[i % USER_COUNT].id,
      title: `Post number ${i}`,
      views: (i * VIEWS_STRIDE) % POST_COUNT,
      // Three in four are public; the rest are drafts only their author lists.
      published: i % 4 !== 3,
      tags: ['bench', `tag${i % 10}`]
    }))
    const ids = []
    for (let i = 0; i < posts.length; i += INSERT_BATCH) {
      const rows = await call(app, '/table/posts/insert', { values: posts.slice(i, i + INSERT_BATCH), returning: 'id' })
      ids.push(...rows.map((r) => r.id))
    }
    // Statistics now rather than whenever autovacuum gets round to it: read plans must not change between rounds.
    if (app.fastbase.dialect.name === 'postgres') await app.fastbase.db.raw('ANALYZE posts, users, _fastbase_sessions')
    // Each user's first post: what the edit scenario writes to, as its author.
    const own = users.map((u, i) => ({ token: u.token, userId: u.id, postId: ids[i] }))
    return { users, postIds: ids, own, publishedPostId: ids[0] }
  } finally {
    await app.close()
  }
}

/**
 * The items scenario set's project (bench/items.mjs, decision D111): one table in teenybase's shape with
 * every rule 'true', no auth table, no rate limit. Plain JSON: `npm start` reads it from its working
 * directory as fastbase.config.json.
 */
export function itemsConfig () {
  return {
    appName: 'fastbase items bench',
    appUrl: 'http://127.0.0.1',
    jwtSecret: 'fastbase-items-bench-jwt-secret-0123456789',
    rateLimit: false,
    tables: [{
      name: 'items',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', usage: 'record_uid', primary: true, autoIncrement: true, noUpdate: true },
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'body', type: 'text', sqlType: 'text' },
        { name: 'n', type: 'integer', sqlType: 'integer' },
        { name: 'created', type: 'text', sqlType: 'text', default: { q: 'CURRENT_TIMESTAMP' } }
      ],
      extensions: [rules({ listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' })]
    }]
  }
}
