// Relation paths (decision D95): `post_id.public` in rules, where, select lists and order follows a
// foreign key to the row it references, compiled to SQL on both dialects. Rules read the related
// row as it is; a caller's own text reads it only where the caller may see it, so filtering on a
// hidden row's values tells the caller nothing. The app is the one a scaffold grows into: users,
// posts with an owner and a public flag, comments on posts.
import t from 'tap'
import { forEachDialect } from '../../helper.js'
import { relationTables, seeded, admin, as } from '../../fixtures/relations.js'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { ConfigError } from '../../../lib/errors.js'

const ids = (res: { json: () => unknown }): number[] => {
  const body = res.json() as { items?: Array<{ id: number }> } | Array<{ id: number }>
  return (Array.isArray(body) ? body : body.items ?? []).map((r) => r.id)
}

forEachDialect(t, 'a child row inherits its parent\'s visibility through the rule', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const list = async (headers: Record<string, string>, query: Record<string, string> = {}) =>
    await app.inject({ method: 'GET', url: '/api/v1/table/comments/list', query, headers })
  t.same(ids(await list({})), [10], 'anonymous: comments on public posts only (a null post reads null: hidden)')
  t.same(ids(await list(as('alice'))), [10, 11], 'alice: the public post and her own')
  t.same(ids(await list(as('bob'))), [10, 12], 'bob: the public post and his own')
  t.same(ids(await list(admin)), [10, 11, 12, 13], 'admins see every row')
  t.equal((await list({})).json().total, 1, 'the total counts only visible rows')

  const view = async (id: number, headers: Record<string, string> = {}) => await app.inject({ method: 'GET', url: `/api/v1/table/comments/view/${id}`, headers })
  t.equal((await view(11)).statusCode, 404, 'a comment on a private post cannot be viewed by others')
  t.equal((await view(11, as('alice'))).statusCode, 200, 'its post\'s owner views it')

  const chained = await app.inject({ method: 'GET', url: '/api/v1/table/comments/select', query: { select: 'id, post_id.owner_id.name as owner, post_id.title as title', order: 'id' }, headers: as('alice') })
  t.equal(chained.statusCode, 200, chained.body)
  t.same(chained.json(), [{ id: 10, owner: 'Alice', title: 'open' }, { id: 11, owner: 'Alice', title: 'diary' }], 'paths in a select list, two hops')
})

forEachDialect(t, 'a caller\'s where reads related rows only as the caller may see them', async (t, dialect) => {
  const app = await seeded(t, dialect)
  // posts' own list: bob may not see post 2; a where on the comments of post 2... is hidden by the comments rule.
  // users' table is open: a where on post_id.owner_id.name works for every visible comment.
  const select = async (table: string, where: string, headers: Record<string, string>) =>
    await app.inject({ method: 'GET', url: `/api/v1/table/${table}/select`, query: { where, select: 'id' }, headers })
  t.same(ids(await select('comments', "post_id.owner_id.name == 'Alice'", as('bob'))), [10], 'a path in a where, through two tables')
  t.same(ids(await select('comments', "author_id.name == 'Bob'", {})), [10], 'anonymous: only what the rule lets through')

  // bookmarks point at posts without inheriting their rule: a where on them still cannot see into
  // a post the caller may not see.
  const where = async (w: string, headers: Record<string, string>, order?: string) =>
    await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/list', query: { where: w, select: 'id', ...(order === undefined ? {} : { order }) }, headers })
  t.same(ids(await where("post_id.title == 'diary'", as('bob'))), [], 'bob cannot find the bookmark of alice\'s private post by its title')
  t.same(ids(await where("post_id.title == 'diary'", as('alice'))), [2], 'alice, who sees the post, can')
  t.same(ids(await where("post_id.title == 'diary'", admin)), [2], 'so can an admin')
  t.same(ids(await where('post_id.public == false', as('bob'))), [3], 'a hidden post\'s flag reads null, not false')
  t.same(ids(await where('post_id.title == null', as('bob'))), [2], 'the hidden post reads as null')
  const selected = await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/select', query: { select: 'id, post_id.title as title' }, headers: as('bob') })
  t.same(selected.json(), [{ id: 1, title: 'open' }, { id: 2, title: null }, { id: 3, title: 'plans' }], 'a select list reads a hidden row as null')

  // The rule of the related table decides: changing only the hidden post changes nothing bob sees.
  const before = (await where("post_id.title ~ '%a%'", as('bob'))).body
  const edited = await app.inject({ method: 'POST', url: '/api/v1/table/posts/edit/2', headers: admin, payload: { title: 'banana' } })
  t.equal(edited.statusCode, 200, edited.body)
  t.equal((await where("post_id.title ~ '%a%'", as('bob'))).body, before, 'editing a post bob cannot see changes none of his answers')
  t.same(ids(await where("post_id.title ~ '%a%'", as('alice'))), [2], 'alice sees her post\'s new title (and not bob\'s plans)')

  // order: a path sorts by the related value as the caller sees it; a hidden post sorts as null.
  t.same(ids(await where('true', as('bob'), '-post_id.title, id')), [3, 1, 2], 'bob: plans, open, then the hidden post (null last when descending)')
  t.same(ids(await where('true', as('alice'), '-post_id.title, id')), [1, 2, 3], 'alice: open, her banana, then bob\'s hidden plans')
  const decoded = await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/select', query: { select: 'id, post_id.public', order: 'id' }, headers: admin })
  t.same(decoded.json(), [{ id: 1, 'post_id.public': true }, { id: 2, 'post_id.public': false }, { id: 3, 'post_id.public': false }], 'a path in a select list is keyed by its text and decoded as the field it reads')

  t.equal((await where('post_id.secret == 1', as('bob'))).statusCode, 400, 'a path cannot reach a column it could not name on the related table')
})

forEachDialect(t, 'paths: null keys, unknown fields, bounds', async (t, dialect) => {
  const app = await seeded(t, dialect)
  const select = async (where: string) => await app.inject({ method: 'GET', url: '/api/v1/table/comments/select', query: { where, select: 'id' }, headers: admin })
  t.same(ids(await select('post_id.title == null')), [13], 'a path through a null key reads null')
  t.same(ids(await select("post_id.owner_id.name != null & id < 12")), [10, 11], 'paths beside other conditions')
  const bad = await select('body.length == 1')
  t.equal(bad.statusCode, 400, 'a path through a field without a foreign key is refused')
  t.match(bad.json().message, /not a foreign key field/)
  const unknown = await select('post_id.nope == 1')
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /Unknown column "nope"/)
  const deep = await select('post_id.owner_id.name.x.y.z == 1')
  t.equal(deep.statusCode, 400, 'a path of too many hops is refused before anything runs')
  t.match(deep.json().message, /at most 4 relations/)
  const path = "post_id.owner_id.name != 'x'"
  const wide = await select(Array(5).fill(path).join(' & '))
  t.equal(wide.statusCode, 400, 'five 2-hop paths in one expression pass its bound of 8')
  t.match(wide.json().message, /at most 8 in one expression/)
  t.same(ids(await select(Array(4).fill(path).join(' & '))), [10, 11, 12, 13], 'four are within it (null != \'x\' holds: != is null-safe)')
  const items = Array.from({ length: 13 }, (_, i) => `${path.split(' ')[0]} as n${i}`).join(', ')
  const many = await app.inject({ method: 'GET', url: '/api/v1/table/comments/select', query: { select: `id, ${items}` }, headers: admin })
  t.equal(many.statusCode, 400, 'thirteen 2-hop items in one request pass its bound of 24')
  t.match(many.json().message, /at most 24 in one request/)
})

t.test('rules that follow relations are checked at start-up', async (t) => {
  const broken = relationTables.map((table) => table.name !== 'comments'
    ? table
    : { ...table, extensions: [{ name: 'rules' as const, listRule: 'post_id.nope == true', viewRule: 'body.x == 1', createRule: null, updateRule: null, deleteRule: null }] })
  const error = (() => { try { describeTables(broken, sqlite) } catch (e) { return e } })()
  t.ok(error instanceof ConfigError)
  t.match(String((error as Error).message), /tables\.comments\.listRule: Unknown column "nope"/)
  t.match(String((error as Error).message), /tables\.comments\.viewRule: "body" is not a foreign key field/)
})
