// Search index layouts (decision D71): a database made by an earlier fastbase, whose PostgreSQL search
// index was an expression index, is given the stored vector on the next start, keeps its rows and
// finds the same ones; the stored column never shows in an answer or a filter.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { SCHEMA_TABLE } from '../../../lib/db/migrations.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'fts-upgrade-secret-fts-upgrade-secret',
  appUrl: 'http://localhost:3000',
  tables: [{
    name: 'notes',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true },
      { name: 'title', type: 'text', sqlType: 'text' },
      { name: 'body', type: 'text', sqlType: 'text' }
    ],
    fullTextSearch: { fields: ['title', 'body'] },
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true' }]
  }]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }

async function search (app: FastifyInstance, query: string, extra = '') {
  const res = await app.inject({ url: `/api/v1/table/notes/list?where=${encodeURIComponent(`notes @@ '${query}'`)}${extra}` })
  return { status: res.statusCode, body: res.json() }
}

// What an earlier fastbase made on PostgreSQL: the GIN index over the expression, no column.
const OLD_INDEX = `CREATE INDEX "fts_notes_idx" ON "notes" USING gin (to_tsvector('simple', regexp_replace(coalesce("title", '') COLLATE "C" || ' ' || coalesce("body", '') COLLATE "C", '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]+', ' ', 'g')))`

forEachDialect(t, 'a search index of an earlier layout is made anew on start, and finds the same rows', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  let app = await buildApp(t, config, { dialect, databaseUrl })
  const rows = [{ id: 1, title: 'Red apple', body: 'crisp and sweet' }, { id: 2, title: 'Green pear', body: 'an apple cousin' }, { id: 3, title: 'Plum', body: 'sour' }]
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: ADMIN, payload: { values: rows } })).statusCode, 200)
  const before = await search(app, 'apple', '&order=id')
  t.same(before.body.items.map((r: { id: number }) => r.id), [1, 2])

  // Back to the earlier layout, as a database an earlier fastbase made holds it.
  const db = app.fastbase.db
  const model = JSON.parse((await db(SCHEMA_TABLE).where({ id: 1 }).first()).tables)
  if (dialect === 'postgres') {
    await db.raw('ALTER TABLE "notes" DROP COLUMN "_fastbase_search"')
    await db.raw(OLD_INDEX)
  }
  for (const table of model) delete table.searchFormat
  await db(SCHEMA_TABLE).where({ id: 1 }).update({ tables: JSON.stringify(model) })
  await app.close()

  app = await buildApp(t, config, { dialect, databaseUrl })
  const migrations = (await app.inject({ url: '/api/v1/migrations', headers: ADMIN })).json()
  const names = migrations.migrations.map((m: { name: string }) => m.name.replace(/^\d{5}_/, ''))
  if (dialect === 'postgres') {
    t.ok(names.includes('search_notes'), 'PostgreSQL: the search index is made anew on start')
    const columns = await app.fastbase.db.raw("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'notes' AND column_name = '_fastbase_search'")
    t.equal(columns.rows.length, 1, 'the stored vector exists')
  } else {
    t.notOk(names.includes('search_notes'), 'SQLite has one layout: nothing to make anew')
  }
  t.same(migrations.pending, [], 'nothing waits')
  t.same((await search(app, 'apple', '&order=id')).body, before.body, 'the same rows are found')
  t.same((await search(app, 'appl*')).body.items.map((r: { id: number }) => r.id).sort(), [1, 2], 'prefixes and ranking still work')

  // Restarting changes nothing more.
  await app.close()
  app = await buildApp(t, config, { dialect, databaseUrl })
  t.equal((await app.inject({ url: '/api/v1/migrations', headers: ADMIN })).json().migrations.length, migrations.migrations.length, 'no new migration on the next start')

  // The stored vector is fastbase's own: it shows in no answer and no caller may name it.
  const listed = (await app.inject({ url: '/api/v1/table/notes/list?order=id', headers: ADMIN })).json()
  t.same(Object.keys(listed.items[0]).sort(), ['body', 'id', 'title'], 'a list answers the configured fields only')
  const selected = (await app.inject({ method: 'POST', url: '/api/v1/table/notes/select', headers: ADMIN, payload: { where: "notes @@ 'plum'" } })).json()
  t.same(selected.map((r: object) => Object.keys(r).sort()), [['body', 'id', 'title']], 'a search answers the configured fields only')
  for (const url of ['/api/v1/table/notes/list?select=_fastbase_search', `/api/v1/table/notes/list?where=${encodeURIComponent("_fastbase_search != ''")}`, '/api/v1/table/notes/list?order=_fastbase_search']) {
    const res = await app.inject({ url, headers: ADMIN })
    t.equal(res.statusCode, 400, `${url}: 400`)
  }
  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: ADMIN, payload: { values: { id: 4, title: 'x', _fastbase_search: 'y' }, returning: ['*'] } })
  t.equal(inserted.statusCode, 400, 'a write naming it is refused')
  await app.close()
})

t.test('a field may not take a name fastbase keeps for its own columns', async (t) => {
  const reserved = structuredClone(config)
  reserved.tables[0].fields.push({ name: '_fastbase_search', type: 'text', sqlType: 'text' })
  await t.rejects(buildApp(t, reserved), /"_fastbase_search" is reserved/)
})
