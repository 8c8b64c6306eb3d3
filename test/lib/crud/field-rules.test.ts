// Field rules (decision D96): `fieldRules: { email: 'id == auth.uid' }` makes a field read as null
// for a caller wherever the rule does not hold for the row, and everywhere the caller could read it:
// answers of every operation, expand, relation paths, where, order, search, aggregates, realtime
// and the in-process API. Admins read everything. The attacker's test: nothing bob gets changes
// when only alice's email changes.
import t from 'tap'
import { forEachDialect } from '../../helper.js'
import { seeded, admin, as } from '../../fixtures/relations.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'

type Row = Record<string, unknown>

forEachDialect(t, 'a field only its owner reads', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const get = async (url: string, query: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/table/${url}`, query, headers })
    return { status: res.statusCode, body: res.json() }
  }
  const emails = (rows: Row[]) => rows.map((r) => [r.id, r.email])
  t.same(emails((await get('users/list', { order: 'id' })).body.items), [['alice', null], ['bob', null]], 'anonymous: no email')
  t.same(emails((await get('users/list', { order: 'id' }, as('bob'))).body.items), [['alice', null], ['bob', 'bob@mail.test']], 'bob: his own only')
  t.same(emails((await get('users/list', { order: 'id' }, admin)).body.items), [['alice', 'alice@mail.test'], ['bob', 'bob@mail.test']], 'admins: all')
  t.same((await get('users/view/alice', {}, as('bob'))).body.email, null, 'view')
  t.same((await get('users/view/alice', {}, as('alice'))).body.email, 'alice@mail.test', 'view by its owner')
  t.same(emails((await get('users/select', { select: '*', order: 'id' }, as('bob'))).body), [['alice', null], ['bob', 'bob@mail.test']], 'select *')
  t.same((await get('users/select', { select: 'id, email, lower(email) as low', where: "id == 'alice'" }, as('bob'))).body, [{ id: 'alice', email: null, low: null }], 'named, and inside an expression')

  // where, order, aggregates, search, group: nothing is decided by a hidden email.
  t.same((await get('users/select', { select: 'id', where: "email ~ 'alice%'" }, as('bob'))).body, [], 'bob cannot find alice by her email')
  t.same((await get('users/select', { select: 'id', where: "email ~ 'alice%'" }, as('alice'))).body, [{ id: 'alice' }], 'alice finds herself')
  t.same((await get('users/select', { select: 'count(email) as n' }, as('bob'))).body, [{ n: 1 }], 'an aggregate counts only the emails bob reads')
  const group = await get('users/select', { select: 'email, count(*) as n', group: 'email' }, as('bob'))
  t.equal(group.status, 400, 'grouping by it is refused')
  t.same((await get('users/select', { select: 'id', where: "users @@ 'mail'" }, as('bob'))).body, [], 'a table-wide search does not search it')
  t.equal((await get('users/select', { select: 'id', where: "email @@ 'alice'" }, as('alice'))).status, 400, 'searching it by name is refused for callers')
  t.same((await get('users/select', { select: 'id', where: "users @@ 'mail'" }, admin)).body.length, 2, 'admins search it')

  // expand and relation paths read the field under its rule too.
  const expanded = await get('comments/select', { select: 'id, author_id(name, email) as author, author_id.email as path', order: 'id' }, as('bob'))
  t.same(expanded.body, [{ id: 10, author: { name: 'Bob', email: 'bob@mail.test' }, path: 'bob@mail.test' }, { id: 12, author: { name: 'Bob', email: 'bob@mail.test' }, path: 'bob@mail.test' }], 'bob reads his own email through a relation')
  const alices = await get('comments/select', { select: 'id, author_id(email) as author, author_id.email as path', where: "author_id == 'alice'" }, as('alice'))
  t.same(alices.body, [{ id: 11, author: { email: 'alice@mail.test' }, path: 'alice@mail.test' }], 'alice hers')
  const bobOnAlice = await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/select', query: { select: 'id, post_id.owner_id.email as email', where: 'id == 1' }, headers: as('bob') })
  t.same(bobOnAlice.json(), [{ id: 1, email: null }], 'two hops away, still null for bob')

  // The attacker's test: change only alice's email; every answer bob gets stays the same.
  const probes: Array<[string, Record<string, string>]> = [
    ['users/list', { order: 'email, id' }],
    ['users/list', { order: '-email, id', where: "email != 'x'" }],
    ['users/select', { select: 'count(email) as n, max(email) as m' }],
    ['users/select', { select: 'id', where: "users @@ 'alice*'" }],
    ['users/select', { select: 'id', where: "email > 'b'" }],
    ['comments/select', { select: 'id, author_id(email) as a', where: "author_id.email ~ '%'" }],
    ['bookmarks/list', { order: 'post_id.owner_id.email, id' }]
  ]
  const answers = async () => await Promise.all(probes.map(async ([url, query]) => JSON.stringify(await get(url, query, as('bob')))))
  const before = await answers()
  const edited = await app.inject({ method: 'POST', url: '/api/v1/table/users/edit/alice', headers: admin, payload: { email: 'aaa@zzz.test' } })
  t.equal(edited.statusCode, 200, edited.body)
  t.same(await answers(), before, 'no answer bob gets changed')
  const after = await get('users/list', { order: 'email, id' }, as('alice'))
  t.same(after.body.items.find((r: Row) => r.id === 'alice').email, 'aaa@zzz.test', 'while alice reads her new email')

  // Writes answer with the field under its rule; the in-process API reads it the same way.
  const returned = await app.inject({ method: 'POST', url: '/api/v1/table/users/edit/bob?returning=*', headers: as('bob'), payload: { name: 'Bobby' } })
  t.same({ status: returned.statusCode, email: returned.json().email }, { status: 200, email: 'bob@mail.test' }, 'the owner\'s edit returns it')
  const updated = await app.inject({ method: 'POST', url: '/api/v1/table/users/update', headers: as('bob'), payload: { where: 'true', setValues: { name: 'Bob' }, returning: 'id, email' } })
  t.same(updated.json(), [{ id: 'bob', email: 'bob@mail.test' }], 'update returning')
  const alicePost = await app.inject({ method: 'POST', url: '/api/v1/table/comments/insert', headers: as('bob'), payload: { values: { id: 50, body: 'x', author_id: 'bob', post_id: 1 }, returning: 'id, post_id.owner_id.email as owner, author_id(email) as me' } })
  t.same(alicePost.json(), [{ id: 50, owner: null, me: { email: 'bob@mail.test' } }], 'insert returning: alice\'s email null, bob\'s own read')
  const bob = { ...ANONYMOUS, uid: 'bob', role: 'user', verified: true, jwt: {}, meta: {}, record: { id: 'bob' } }
  const listed = await app.fastbase.tables.users.list({ order: 'id' }, { as: bob })
  t.same(listed.items.map((r: Row) => r.email), [null, 'bob@mail.test'], 'in-process API')
})
