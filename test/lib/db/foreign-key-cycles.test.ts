// Foreign keys in a cycle (`boxes -> broker_boxes -> boxes`) and a self-reference: such a config
// starts on both dialects (PostgreSQL adds the key closing the cycle after creating the tables),
// rows that keep the keys are written, and a write that breaks one is the usual 400.
import t from 'tap'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }
const id = { name: 'id', type: 'text', sqlType: 'text', primary: true } as const
const boxes: TableData = {
  name: 'boxes',
  fields: [id, { name: 'broker_box', type: 'relation', sqlType: 'text', foreignKey: { table: 'broker_boxes', column: 'id' } }]
}
const brokerBoxes: TableData = {
  name: 'broker_boxes',
  fields: [
    id,
    { name: 'box', type: 'relation', sqlType: 'text', foreignKey: { table: 'boxes', column: 'id' } },
    { name: 'parent', type: 'relation', sqlType: 'text', foreignKey: { table: 'broker_boxes', column: 'id' } }
  ]
}
const config = (tables: TableData[]): DatabaseSettings => ({ appUrl: 'http://localhost:3000', jwtSecret: 'cycle-test-secret-cycle-test-secret', tables })

void forEachDialect(t, 'a config with a cycle and a self-reference starts; keys hold', async (t, dialect) => {
  const app = await buildApp(t, config([boxes, brokerBoxes]), { dialect })
  const insert = (table: string, values: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: ADMIN, payload: { values, returning: '*' } })
  t.equal((await insert('boxes', { id: 'b1' })).statusCode, 200)
  t.equal((await insert('broker_boxes', { id: 'k1', box: 'b1' })).statusCode, 200)
  t.equal((await insert('broker_boxes', { id: 'k2', box: 'b1', parent: 'k1' })).statusCode, 200)
  const closed = await app.inject({ method: 'POST', url: '/api/v1/table/boxes/update', headers: ADMIN, payload: { where: "id == 'b1'", setValues: { broker_box: 'k2' }, returning: '*' } })
  t.same(closed.json(), [{ id: 'b1', broker_box: 'k2' }])
  for (const [table, values, column] of [['broker_boxes', { id: 'k3', box: 'nope' }, 'box'], ['boxes', { id: 'b2', broker_box: 'nope' }, 'broker_box'], ['broker_boxes', { id: 'k3', parent: 'nope' }, 'parent']] as const) {
    const refused = await insert(table, values)
    t.equal(refused.statusCode, 400, `${table}.${column} refused`)
    t.match(refused.json(), { code: 400, data: { [column]: { code: 'foreign_key' } } })
  }
})

void forEachDialect(t, 'a migration that adds the table closing a cycle', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const first = await buildApp(t, config([{ ...boxes, fields: [id] }]), { dialect, databaseUrl })
  await first.inject({ method: 'POST', url: '/api/v1/table/boxes/insert', headers: ADMIN, payload: { values: { id: 'b1' } } })
  await first.close()
  const app = await buildApp(t, config([boxes, brokerBoxes]), { dialect, databaseUrl })
  const res = await app.inject({ method: 'POST', url: '/api/v1/table/broker_boxes/insert', headers: ADMIN, payload: { values: { id: 'k1', box: 'b1' }, returning: 'id,box' } })
  t.same(res.json(), [{ id: 'k1', box: 'b1' }])
  const refused = await app.inject({ method: 'POST', url: '/api/v1/table/boxes/update', headers: ADMIN, payload: { where: "id == 'b1'", setValues: { broker_box: 'nope' } } })
  t.match(refused.json(), { code: 400, data: { broker_box: { code: 'foreign_key' } } })
})
