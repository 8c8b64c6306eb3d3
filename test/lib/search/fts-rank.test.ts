// Search rank (decision D41): what a caller sees of a search, order included, depends only on rows and
// fields it may see; and ranking scores a bounded number of rows however many match.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { RANK_CANDIDATES } from '../../../lib/search/fts.js'

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const text = (name: string, extra: object = {}) => ({ name, type: 'text', sqlType: 'text', ...extra }) as const
const rules = (listRule: string) => [{ name: 'rules' as const, listRule, viewRule: listRule, createRule: null, updateRule: null, deleteRule: null }]

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    { name: 'notes', fields: [id, text('owner'), text('body'), text('secret', { noSelect: true })], fullTextSearch: { fields: ['body', 'secret'] }, extensions: rules('owner == auth.uid') },
    { name: 'many', fields: [id, text('body')], fullTextSearch: { fields: ['body'] }, extensions: rules('true') }
  ]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }
const ALICE = { 'x-test-uid': 'alice' }

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

forEachDialect(t, 'search rank', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const admin = async (op: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/notes/${op}`, headers: ADMIN, payload })
    if (res.statusCode !== 200) throw new Error(res.body)
  }

  t.test('hidden rows and noSelect text change nothing alice sees', async (t) => {
    await admin('insert', {
      values: [
        { id: 'a1', owner: 'alice', body: 'apple banana banana' },
        { id: 'a2', owner: 'alice', body: 'apple apple banana' },
        { id: 'a3', owner: 'alice', body: 'banana split with applesauce' }
      ]
    })
    const queries = ['apple banana', 'ban* app*', 'apple OR banana', '"apple banana"', 'banana -split', 'app*']
    const answers = async () => {
      const out: string[] = []
      for (const q of queries) {
        for (const order of [undefined, 'id']) {
          const query = { where: `notes @@ '${q}'`, ...(order === undefined ? {} : { order }) }
          const res = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', query, headers: ALICE })
          out.push(`${q} ${order ?? ''} ${res.statusCode} ${res.body}`)
        }
      }
      return out
    }
    const before = await answers()
    t.match(before[0], /"a1".*"a2"/, 'a search alice can run')

    // bob's private rows make "banana" common and "apple" rare, and are long.
    const hidden = Array.from({ length: 30 }, (_, i) => ({ id: `b${i}`, owner: 'bob', body: `banana banana ${'filler '.repeat(i)} bananas applesauce` }))
    await admin('insert', { values: hidden })
    t.same(await answers(), before, 'bob\'s rows inserted')
    await admin('update', { where: 'owner == \'alice\'', setValues: { secret: 'apple apple apple apple banana banana split' } })
    t.same(await answers(), before, 'noSelect text in alice\'s own rows')
    await admin('update', { where: 'owner == \'bob\'', setValues: { body: 'apple apple apple' } })
    t.same(await answers(), before, 'bob\'s rows rewritten')
    await admin('delete', { where: 'owner == \'bob\'' })
    await admin('update', { where: 'owner == \'alice\'', setValues: { secret: null } })
    t.same(await answers(), before, 'and removed')
  })

  t.test(`only the first ${RANK_CANDIDATES} matches are scored; the rest follow in key order`, async (t) => {
    const key = (i: number) => `m${String(i).padStart(5, '0')}`
    // Every row matches once; the last one, past the candidates, matches three times.
    const values = Array.from({ length: RANK_CANDIDATES + 5 }, (_, i) => ({ id: key(i), body: i === RANK_CANDIDATES + 4 ? 'kiwi kiwi kiwi' : i === 3 ? 'kiwi kiwi' : 'kiwi' }))
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/many/insert', headers: ADMIN, payload: { values } })
    t.equal(res.statusCode, 200)
    const page = async (offset: number) => {
      const r = await app.inject({ method: 'GET', url: '/api/v1/table/many/select', query: { where: 'many @@ \'kiwi\'', select: 'id', limit: '3', offset: String(offset) } })
      return r.json().map((row: { id: string }) => row.id)
    }
    t.same(await page(0), [key(3), key(0), key(1)], 'the best scored candidate first, then the others by key')
    t.same(await page(RANK_CANDIDATES), [key(RANK_CANDIDATES), key(RANK_CANDIDATES + 1), key(RANK_CANDIDATES + 2)], 'after the candidates: key order, whatever they score')
    // A page within the candidates is read from them alone (decision D71); one that crosses their end
    // reads every match. Both give the same rows in the same places.
    t.same(await page(RANK_CANDIDATES - 3), [key(RANK_CANDIDATES - 3), key(RANK_CANDIDATES - 2), key(RANK_CANDIDATES - 1)], 'the last page within the candidates')
    t.same(await page(RANK_CANDIDATES - 2), [key(RANK_CANDIDATES - 2), key(RANK_CANDIDATES - 1), key(RANK_CANDIDATES)], 'a page across their end: the same rows in the same places')
    const list = await app.inject({ method: 'GET', url: '/api/v1/table/many/list', query: { where: 'many @@ \'kiwi\'', select: 'id', limit: '2' } })
    t.same(list.json(), { items: [{ id: key(3) }, { id: key(0) }], total: RANK_CANDIDATES + 5 }, 'a list from the candidates counts every match')
  })
})
