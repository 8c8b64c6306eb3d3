// Several configs on one database (one PostgreSQL schema, one SQLite file): each is a project (its
// appName) and plans changes to its own tables only (lib/db/migrations.ts). And the guard against the
// wrong config: a plan that would drop every table the config recorded is refused.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }

const table = (name: string): TableData => ({
  name,
  fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true }, { name: 'body', type: 'text', sqlType: 'text' }],
  extensions: [{ name: 'rules', listRule: 'true' }]
})
const project = (appName: string, ...tables: string[]): DatabaseSettings => ({ jwtSecret: 'owners-secret', appUrl: 'http://127.0.0.1', appName, tables: tables.map(table) })

interface Pending { name: string, destructive: boolean }

/** Starts `config` on the database, the previous app closed first (a restart, or another config's turn). */
function turns (t: Test, dialect: DialectName, databaseUrl: string) {
  let current: FastifyInstance | undefined
  return async (config: DatabaseSettings): Promise<FastifyInstance> => {
    await current?.close()
    current = await buildApp(t, config, { dialect, databaseUrl })
    return current
  }
}

async function pendingOf (app: FastifyInstance): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: '/api/v1/migrations', headers: ADMIN })
  return (res.json().pending as Pending[]).map((p) => p.name)
}

async function rows (app: FastifyInstance, name: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: `/api/v1/table/${name}/list?order=id`, headers: ADMIN })
  return (res.json().items as Array<{ body: string }>).map((r) => r.body)
}

async function hasTable (app: FastifyInstance, name: string): Promise<boolean> {
  return await app.fastbase.db.schema.hasTable(name)
}

forEachDialect(t, 'two configs on one database never plan to drop each other\'s tables', async (t, dialect) => {
  const turn = turns(t, dialect, sharedDatabase(t, dialect))
  let app = await turn(project('Blog', 'posts', 'comments'))
  await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: ADMIN, payload: { values: [{ body: 'one' }, { body: 'two' }] } })

  app = await turn(project('Shop', 'products'))
  t.same(await pendingOf(app), [], 'the shop sees no pending drop of the blog\'s tables')
  const apply = await app.inject({ method: 'POST', url: '/api/v1/migrations', headers: ADMIN, payload: { allowDestructive: true } })
  t.equal(apply.statusCode, 200)
  t.same(apply.json().applied, [], 'even allowing destructive steps, it applies nothing to the blog\'s tables')
  t.ok(await hasTable(app, 'posts'), 'the blog\'s table is there')
  await app.inject({ method: 'POST', url: '/api/v1/table/products/insert', headers: ADMIN, payload: { values: { body: 'lamp' } } })

  app = await turn(project('Blog', 'posts', 'comments'))
  t.same(await pendingOf(app), [], 'the blog sees no pending drop of the shop\'s table')
  t.same(await rows(app, 'posts'), ['one', 'two'], 'the blog\'s rows are there')

  // The blog drops a table of its own: that one, and only that one, waits as destructive.
  app = await turn(project('Blog', 'posts'))
  t.same(await pendingOf(app), ['drop_table_comments'], 'its own table, not the shop\'s')

  // A table both use (the shop adopts posts): when the shop lets go of it, it is released, not dropped.
  app = await turn(project('Shop', 'products', 'posts'))
  t.same(await pendingOf(app), [])
  app = await turn(project('Shop', 'products'))
  t.same(await pendingOf(app), [], 'releasing a shared table waits for nothing')
  t.ok(await hasTable(app, 'posts'), 'the shared table stays for the blog')
  app = await turn(project('Blog', 'posts', 'comments'))
  t.same(await rows(app, 'posts'), ['one', 'two'])
  t.same(await pendingOf(app), [])
})

forEachDialect(t, 'a plan that drops every table the config recorded is refused', async (t, dialect) => {
  const turn = turns(t, dialect, sharedDatabase(t, dialect))
  let app = await turn(project('Blog', 'posts', 'comments'))
  await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: ADMIN, payload: { values: { body: 'kept' } } })

  // The same project name with none of its tables: most likely the wrong config.
  app = await turn(project('Blog', 'articles'))
  const status = (await app.inject({ method: 'GET', url: '/api/v1/migrations', headers: ADMIN })).json()
  t.same([...status.dropsEveryTable].sort(), ['comments', 'posts'], 'the status says so')
  for (const body of [{}, { allowDestructive: true }]) {
    const refused = await app.inject({ method: 'POST', url: '/api/v1/migrations', headers: ADMIN, payload: body })
    t.equal(refused.statusCode, 409, `refused with ${JSON.stringify(body)}`)
    t.equal(refused.headers['fastbase-error-code'], 'FB_ERR_MIGRATION_REFUSED')
    t.match(refused.json(), { code: 409, message: /every table it recorded \(.*posts.*\) and keep none: it is probably not the config that made this database/, data: { tables: Array } })
  }
  t.same(await rows(await turn(project('Blog', 'posts', 'comments')), 'posts'), ['kept'], 'nothing was dropped')

  // Named twice, it runs.
  app = await turn(project('Blog', 'articles'))
  const forced = await app.inject({ method: 'POST', url: '/api/v1/migrations', headers: ADMIN, payload: { allowDestructive: true, allowDropAll: true } })
  t.equal(forced.statusCode, 200, forced.body)
  t.notOk(await hasTable(app, 'posts'), 'dropped when the user insists')
})
