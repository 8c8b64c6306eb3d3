// A write without `returning` answers [] on both dialects, whatever the statement had to return for
// fastbase's own use (realtime's change capture, which is always on with PostgreSQL's shared hub and
// on SQLite while someone watches the table). edit keeps its default answer, the record's id.
import t from 'tap'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { adminToken, buildApp, forEachDialect } from '../../helper.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }
const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'write-answers-secret-write-answers',
  tables: [{
    name: 'notes',
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
      { name: 'title', type: 'text', sqlType: 'text', unique: true },
      { name: 'n', type: 'integer', sqlType: 'integer' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }],
  actions: [
    { name: 'sql_insert', sql: { type: 'INSERT', table: 'notes', values: { id: 'z', title: 'zed' } } },
    { name: 'sql_update', sql: { type: 'UPDATE', table: 'notes', set: { n: { q: 'n + 1' } }, where: { q: 'true' } } },
    { name: 'sql_delete', sql: { type: 'DELETE', table: 'notes', where: { q: "id = 'z'" } } }
  ]
}

void forEachDialect(t, 'writes without returning answer []', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const post = async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, headers: ADMIN, payload })
    t.equal(res.statusCode, 200, `${url} ${res.body}`)
    return res.json()
  }
  t.same(await post('/table/notes/insert', { values: [{ id: 'a', title: 'A', n: 1 }, { id: 'b', title: 'B', n: 2 }] }), [], 'insert')
  t.same(await post('/table/notes/insert', { values: { id: 'a', title: 'A2' }, or: 'REPLACE' }), [], 'upsert meeting a row')
  t.same(await post('/table/notes/insert', { values: { id: 'c', title: 'C' }, or: 'REPLACE' }), [], 'upsert inserting')
  t.same(await post('/table/notes/insert', { values: { id: 'a', title: 'A3' }, or: 'IGNORE' }), [], 'insert or ignore')
  t.same(await post('/table/notes/update', { where: 'true', setValues: { n: 5 } }), [], 'update of three rows')
  t.same(await post('/table/notes/update', { where: 'true', setValues: { title: 'B' }, or: 'IGNORE' }), [], 'update or ignore')
  t.same(await post('/table/notes/edit/a', { n: 7 }), { id: 'a' }, 'edit answers the id by default')
  t.same(await post('/table/notes/delete', { where: "id == 'c'" }), [], 'delete')
  t.same(await post('/action/sql_insert', {}), [[]], 'SQL-mode insert')
  t.same(await post('/action/sql_update', {}), [[]], 'SQL-mode update')
  t.same(await post('/action/sql_delete', {}), [[]], 'SQL-mode delete')
  const deleted = await post('/table/notes/delete', { where: 'true', returning: 'id' }) as Array<{ id: string }>
  t.same(deleted.map((r) => r.id).sort(), ['a', 'b'], 'returning still answers the rows')
})
