// The hot path of a public read: a plan hit under a trivial rule reads no global, so the
// request's globals (`request.*`) are never built for it (decision D106); a rule that reads one still
// gets it, and decides by it. SQLite answers a planned read at once, with no promise (decision D109),
// PostgreSQL with one; failures stay failures either way.
import t from 'tap'
import { buildApp, forEachDialect } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { crudContext } from '../../../lib/crud/context.js'
import { list, select, view } from '../../../lib/crud/read.js'
import { FastbaseError } from '../../../lib/errors.js'

/** The status of the FastbaseError `run` fails with; undefined when it succeeds or fails otherwise. */
async function failure (run: () => Promise<unknown>): Promise<number | undefined> {
  try {
    await run()
    return undefined
  } catch (error) {
    return error instanceof FastbaseError ? error.statusCode : undefined
  }
}

const everyone = { name: 'rules' as const, listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const config: DatabaseSettings = {
  jwtSecret: 'hot-path-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'items',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', usage: 'record_uid', primary: true, autoIncrement: true, noUpdate: true },
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'n', type: 'integer', sqlType: 'integer' },
        { name: 'done', type: 'bool', sqlType: 'boolean' },
        { name: 'meta', type: 'json', sqlType: 'json' }
      ],
      extensions: [everyone]
    },
    {
      name: 'desk',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', usage: 'record_uid', primary: true, autoIncrement: true },
        { name: 'title', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ ...everyone, listRule: "request.headers.desk == 'front'", viewRule: "request.headers.desk == 'front'" }]
    }
  ]
}

forEachDialect(t, 'a plan hit under a trivial rule builds no globals', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  for (const table of ['items', 'desk']) {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, payload: { values: [{ title: 'a', ...(table === 'items' ? { n: 1, done: true, meta: { k: [1] } } : {}) }, { title: 'b' }] } })
    t.equal(res.statusCode, 200, res.body)
  }
  const fb = app.fastbase
  let built = 0
  const context = (table: string, headers: Record<string, string> = {}) => crudContext(fb.executor, fb.descriptors.get(table)!, ANONYMOUS, {
    globals: () => { built++; return { request: { method: 'GET', headers, query: {} } } }
  })
  const params = { limit: 20, order: '-id' }
  // The first of each builds the plan; what follows must be hits.
  await select(context('items'), params)
  await list(context('items'), params)
  await view(context('items'), '1', {})
  await view(context('items'), '1', { select: 'title, n' })
  built = 0
  for (let i = 0; i < 3; i++) {
    t.same((await select(context('items'), params)).map((r) => r.title), ['b', 'a'])
    t.same(await list(context('items'), params), { items: [{ id: 2, title: 'b', n: null, done: null, meta: null }, { id: 1, title: 'a', n: 1, done: true, meta: { k: [1] } }], total: 2 })
    t.same(await view(context('items'), '1', { select: 'title, n' }), { title: 'a', n: 1 })
    t.same(await view(context('items'), '2', {}), { id: 2, title: 'b', n: null, done: null, meta: null })
  }
  t.equal(built, 0, 'no hit built the globals')
  await select(context('items'), { ...params, where: 'n > 0' })
  t.ok(built > 0, 'a new shape builds them, to plan')

  // A rule that reads `request.*` gets it on every request, hit or not, and decides by it.
  built = 0
  t.same((await select(context('desk', { desk: 'front' }), params)).map((r) => r.title), ['b', 'a'])
  t.same(await select(context('desk', { desk: 'back' }), params), [])
  t.same((await select(context('desk', { desk: 'front' }), params)).map((r) => r.title), ['b', 'a'])
  t.ok(built >= 3, 'each desk read built its globals')
  t.equal((await app.inject({ url: '/api/v1/table/desk/view/1', headers: { desk: 'back' } })).statusCode, 404)
  t.equal((await app.inject({ url: '/api/v1/table/desk/view/1', headers: { desk: 'front' } })).json().title, 'a')
})

forEachDialect(t, 'SQLite answers a planned read at once; failures stay failures', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: { title: 'a', n: 1 } } })
  const fb = app.fastbase
  const context = () => crudContext(fb.executor, fb.descriptors.get('items')!, ANONYMOUS, {})
  const answer = view(context(), '1', {})
  t.equal(answer instanceof Promise, dialect === 'postgres', dialect === 'sqlite' ? 'the row, not a promise' : 'a promise')
  t.same(await answer, { id: 1, title: 'a', n: 1, done: null, meta: null })
  // A missing record is a 404 whether it is thrown (SQLite) or rejected (PostgreSQL).
  t.equal(await failure(async () => await view(context(), '99', {})), 404)
  const missing = await app.inject({ url: '/api/v1/table/items/view/99' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().code, 404)
  // Bad caller text fails before any statement, as a 400, through the route and the in-process API alike.
  const bad = await app.inject({ url: '/api/v1/table/items/select?where=nope%20%3D%3D%201' })
  t.equal(bad.statusCode, 400)
  t.equal(await failure(async () => await fb.tables.items.select({ where: 'nope == 1' }, { as: 'system' })), 400)
})
