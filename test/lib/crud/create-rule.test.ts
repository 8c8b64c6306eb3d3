// The createRule decided before writing (values the row is given, the caller) and in SQL (defaults,
// functions of columns): the same answers either way, on both dialects, and nothing written on a 403.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'

const config: DatabaseSettings = {
  jwtSecret: 'create-rule-secret',
  appUrl: 'http://localhost:3000',
  tables: [{
    name: 'posts',
    autoSetUid: true,
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
      { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
      { name: 'status', type: 'select', sqlType: 'text', values: ['draft', 'published'], notNull: true, default: { l: 'draft' } },
      { name: 'title', type: 'text', sqlType: 'text' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', updateRule: null, deleteRule: null,
      createRule: "auth.uid != null & owner == auth.uid & status == 'draft' & (title == null | length(title) < 10)" }]
  }, {
    // Integer owners against the text auth.uid, and a case-insensitive column: SQL's meaning, not JavaScript's.
    name: 'scores',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
      { name: 'owner', type: 'integer', sqlType: 'integer', notNull: true },
      { name: 'team', type: 'text', sqlType: 'text', collate: 'NOCASE' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', updateRule: null, deleteRule: null, createRule: "owner == auth.uid & (team == null | team == 'red')" }]
  }]
}

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

forEachDialect(t, 'createRule before and in SQL', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const insert = (values: unknown, uid?: string) => app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: uid === undefined ? {} : { 'x-test-uid': uid }, payload: { values, returning: 'owner' } })
  const count = async () => (await app.inject({ method: 'GET', url: '/api/v1/table/posts/list', headers: { authorization: `Bearer ${adminToken}` } })).json().total as number

  t.same((await insert({ owner: 'ann', status: 'draft', title: null }, 'ann')).json(), [{ owner: 'ann' }], 'every value given: decided in memory, allowed')
  t.same((await insert({ owner: 'ann' }, 'ann')).json(), [{ owner: 'ann' }], 'status from its default: checked in SQL, allowed')
  t.same((await insert({ owner: 'ann', title: 'short' }, 'ann')).json(), [{ owner: 'ann' }], 'a function of a given column: allowed')
  t.equal(await count(), 3)
  const refused: Array<[string, unknown, string | undefined]> = [
    ['someone else as owner', { owner: 'bob', status: 'draft' }, 'ann'],
    ['anonymous', { owner: 'ann', status: 'draft' }, undefined],
    ['a status the rule forbids', { owner: 'ann', status: 'published' }, 'ann'],
    ['a title too long (SQL function)', { owner: 'ann', title: 'much too long a title' }, 'ann'],
    ['a batch with one bad row', [{ owner: 'ann' }, { owner: 'ann', status: 'draft' }, { owner: 'bob', status: 'draft' }], 'ann'],
    ['a batch with one bad row left to SQL', [{ owner: 'ann', status: 'draft' }, { owner: 'ann', title: 'much too long a title' }], 'ann']
  ]
  for (const [label, values, uid] of refused) {
    const res = await insert(values, uid)
    t.equal(res.statusCode, 403, label)
  }
  t.equal(await count(), 3, 'nothing written by any refused insert')

  const score = (values: unknown, uid: string) => app.inject({ method: 'POST', url: '/api/v1/table/scores/insert', headers: { 'x-test-uid': uid }, payload: { values } })
  t.equal((await score({ owner: 7 }, '7')).statusCode, 200, 'an integer owner equals the text uid "7", as in SQL')
  t.equal((await score({ owner: 8 }, '7')).statusCode, 403)
  t.equal((await score({ owner: 7, team: 'RED' }, '7')).statusCode, 200, 'a NOCASE column compares without case, as in SQL')
})

// Decisions are remembered per table for the values the rule reads (lib/crud/create-precheck.ts):
// one caller's decision never answers for another, nor one row's values for another's.
const folding: DatabaseSettings = {
  ...config,
  tables: [{
    ...config.tables[0],
    name: 'notes',
    // Only equality and logic: decided in memory whenever owner and status are given.
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', updateRule: null, deleteRule: null, createRule: "auth.uid != null & owner == auth.uid & status == 'draft'" }]
  }]
}

forEachDialect(t, 'a remembered createRule decision answers only for the same caller and values', async (t, dialect) => {
  const app = await buildApp(t, folding, { dialect, setup: simulateUsers })
  const insert = (values: unknown, uid?: string) => app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: uid === undefined ? {} : { 'x-test-uid': uid }, payload: { values } })
  const attempts: Array<[string, Record<string, unknown>, string | undefined, number]> = [
    ['ann as ann', { owner: 'ann', status: 'draft' }, 'ann', 200],
    ['the same values from bob', { owner: 'ann', status: 'draft' }, 'bob', 403],
    ['the same values from anonymous', { owner: 'ann', status: 'draft' }, undefined, 403],
    ['ann again, same values', { owner: 'ann', status: 'draft' }, 'ann', 200],
    ['ann with another status', { owner: 'ann', status: 'published' }, 'ann', 403],
    ['bob as bob', { owner: 'bob', status: 'draft' }, 'bob', 200],
    ['bob with ann\'s row again', { owner: 'ann', status: 'draft' }, 'bob', 403],
    ['a long owner, decided each time', { owner: 'a'.repeat(2000), status: 'draft' }, 'a'.repeat(2000), 200],
    ['the long owner from ann', { owner: 'a'.repeat(2000), status: 'draft' }, 'ann', 403]
  ]
  for (let round = 0; round < 2; round++) {
    for (const [label, values, uid, status] of attempts) {
      const res = await insert(values, uid)
      t.equal(res.statusCode, status, `${label} (round ${round + 1})`)
    }
  }
})
