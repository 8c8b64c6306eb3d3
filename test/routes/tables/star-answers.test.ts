// An answer whose `select` / `returning` list is `*` alone is written by the route's response schema
// (the faster serializer), as an answer without a list is; a list spelled out is written in its own
// order by JSON.stringify. Both must give the same bytes for the same columns: every value type, nulls,
// a field rule's null, noSelect fields for admins, on every route that takes a list, on both dialects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }

const config: DatabaseSettings = {
  jwtSecret: 'star-answers-secret',
  appUrl: 'http://localhost',
  tables: [{
    name: 'things',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid', autoIncrement: true },
      { name: 'title', type: 'text', sqlType: 'text' },
      { name: 'n', type: 'integer', sqlType: 'integer' },
      { name: 'x', type: 'number', sqlType: 'real' },
      { name: 'flag', type: 'bool', sqlType: 'boolean' },
      { name: 'meta', type: 'json', sqlType: 'json' },
      { name: 'due', type: 'date', sqlType: 'timestamp' },
      { name: 'secret', type: 'text', sqlType: 'text', noSelect: true },
      { name: 'owner_note', type: 'text', sqlType: 'text' }
    ],
    extensions: [{
      name: 'rules',
      listRule: 'true',
      viewRule: 'true',
      createRule: 'true',
      updateRule: 'true',
      deleteRule: 'true',
      fieldRules: { owner_note: 'auth.admin == true' }
    }]
  }]
}

const ALL = ['id', 'title', 'n', 'x', 'flag', 'meta', 'due', 'secret', 'owner_note']
const PUBLIC = ALL.filter((name) => name !== 'secret')

forEachDialect(t, '* answers as the same list spelled out', async (t, dialect) => {
  const app: FastifyInstance = await buildApp(t, config, { dialect })
  const call = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object): Promise<string> => {
    const res = await app.inject({ method, url: `/api/v1/table/things${url}`, headers, payload })
    // Not the body in the message: its U+2028 would end a line of the TAP stream.
    t.equal(res.statusCode, 200, `${method} ${url}`)
    t.match(res.headers['content-type'], /^application\/json/, `${url}: a JSON content type`)
    return res.body
  }
  const values = [
    { title: 'full', n: 7, x: 1.5, flag: true, meta: { a: [1, 'b', null], 'k"ey': 'q\\"' }, due: '2026-11-29T10:00:00.000Z', secret: 's1', owner_note: 'only admins' },
    { title: null, n: null, x: null, flag: false, meta: null, due: null, secret: null, owner_note: null },
    { title: 'ünïcode \u2028 "quoted"', n: -3, x: -0.25, flag: null, meta: [true], due: '2026-01-01T00:00:00.000Z', secret: 's3', owner_note: 'x' }
  ]
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/things/insert', headers: ADMIN, payload: { values } })).statusCode, 200)

  for (const [who, headers, visible] of [['anonymous', {}, PUBLIC], ['admin', ADMIN, ALL]] as const) {
    const listed = visible.join(',')
    t.equal(await call('GET', '/select?select=*&order=id', headers), await call('GET', `/select?select=${listed}&order=id`, headers), `${who}: select`)
    t.equal(await call('POST', '/list', headers, { select: ['*'], order: 'id' }), await call('POST', '/list', headers, { select: [...visible], order: 'id' }), `${who}: list`)
    t.equal(await call('GET', '/view/1?select=*', headers), await call('GET', `/view/1?select=${listed}`, headers), `${who}: view`)
    const inserted = await call('POST', '/insert', headers, { values: values[0], returning: '*' })
    const insertedListed = await call('POST', '/insert', headers, { values: values[0], returning: listed })
    t.equal(inserted.replace(/"id":\d+/, ''), insertedListed.replace(/"id":\d+/, ''), `${who}: insert`)
    t.equal(await call('POST', '/edit/2?returning=*', headers, { n: 8 }), await call('POST', `/edit/2?returning=${listed}`, headers, { n: 8 }), `${who}: edit`)
    t.equal(await call('POST', '/update', headers, { where: 'id <= 3', setValues: { x: 2.5 }, returning: '*' }), await call('POST', '/update', headers, { where: 'id <= 3', setValues: { x: 2.5 }, returning: [...visible] }), `${who}: update`)
    const id = JSON.parse(inserted)[0].id
    const listedId = JSON.parse(insertedListed)[0].id
    const deleted = await call('POST', '/delete', headers, { where: `id == ${id}`, returning: '*' })
    const deletedListed = await call('POST', '/delete', headers, { where: `id == ${listedId}`, returning: listed })
    t.equal(deleted.replace(/"id":\d+/, ''), deletedListed.replace(/"id":\d+/, ''), `${who}: delete`)
  }
})
