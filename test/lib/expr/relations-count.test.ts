// A list's total under a rule or where that follows relations (decision D95): the count statement
// compiles a path compared with a constant as a semi-join (lib/expr/compile.ts#compileCondition),
// the page keeps its lookups per row. Both must admit the same rows: through null keys, keys no row
// has, and related rows the caller may not see.
import t from 'tap'
import { forEachDialect } from '../../helper.js'
import { relationTables, seeded, admin, as } from '../../fixtures/relations.js'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { postgres } from '../../../lib/dialects/postgres.js'
import { compileCondition, parse, toCondition, type Scope } from '../../../lib/expr/index.js'
import { expressionHops } from '../../../lib/expr/relations.js'

for (const dialect of [sqlite, postgres]) {
  t.test(`${dialect.name}: which comparisons become semi-joins`, async (t) => {
    const comments = describeTables(relationTables, dialect).get('comments')!
    const scope = (extra: Partial<Scope> = {}): Scope => ({ dialect, table: comments, globals: { auth: { uid: 'alice' } }, seesHidden: true, trusted: true, expressionHops: expressionHops(), semiJoins: true, ...extra })
    const sql = (src: string, extra: Partial<Scope> = {}): string => {
      const condition = toCondition(compileCondition(parse(src), scope(extra)))
      return typeof condition === 'boolean' ? String(condition) : condition.sql
    }
    const semi = /^\("comments"\."post_id" IN \(SELECT "fb_r1"\."id" FROM "posts" AS "fb_r1" (JOIN .*)?WHERE /
    const lookup = /\(SELECT .* WHERE "fb_r1"\."id" = "comments"\."post_id"\)/

    t.match(sql('post_id.public == true'), semi, 'a path compared with a constant: the key among the related rows that pass')
    t.notMatch(sql('post_id.public == true'), lookup, 'with no lookup per row')
    const twoHops = sql("post_id.owner_id.name == 'Alice'")
    t.match(twoHops, semi)
    t.match(twoHops, /FROM "posts" AS "fb_r1" JOIN "users" AS "fb_r2" ON "fb_r2"\."id" = "fb_r1"\."owner_id" WHERE/, 'the next hops joined in it')
    t.match(sql('true == post_id.public'), semi, 'the constant on either side')
    t.match(sql('post_id.owner_id == auth.uid'), semi, 'a global that is not null is a constant')
    const both = sql('post_id.public == true | (auth.uid != null & post_id.owner_id == auth.uid)')
    t.equal(both.match(/IN \(SELECT/g)?.length, 2, 'both sides of a top-level | and &')

    t.match(sql('!(post_id.public == true)'), lookup, 'not under !: there null and false differ')
    t.match(sql('post_id.public != true'), lookup, 'not !=: a null path is != true')
    t.match(sql('post_id.title == null'), lookup, 'not == null: a null key reads null')
    t.match(sql('post_id.owner_id == auth.uid', { globals: { auth: { uid: null } } }), lookup, 'nor with a null global')
    t.match(sql('post_id.title == post_id.owner_id'), lookup, 'not two paths')
    t.match(sql('post_id.public == true', { semiJoins: undefined }), lookup, 'only where the statement asks for them (a page keeps its lookups)')
  })
}

forEachDialect(t, 'a list\'s total counts the rows its items are taken from', async (t, dialect) => {
  const app = await seeded(t, dialect)
  // More rows per case: comments on every post, with no post, and bookmarks of a post that is gone.
  const insert = async (table: string, values: unknown) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: admin, payload: { values } })
    t.equal(res.statusCode, 200, res.body)
  }
  await insert('comments', [
    { id: 14, body: 'second on open', author_id: 'alice', post_id: 1 },
    { id: 15, body: 'second on diary', author_id: 'bob', post_id: 2 },
    { id: 16, body: 'nowhere too', author_id: 'alice', post_id: null }
  ])
  await insert('bookmarks', [{ id: 5, post_id: null }])
  // A key no row has: written past the foreign key, as a database restored in parts may hold one.
  const db = app.fastbase.db
  if (dialect === 'sqlite') {
    await db.raw('PRAGMA foreign_keys = OFF')
    await db('bookmarks').insert({ id: 4, post_id: 99 })
    await db.raw('PRAGMA foreign_keys = ON')
  } else {
    await db.transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica')
      await trx('bookmarks').insert({ id: 4, post_id: 99 })
    })
  }
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/table/bookmarks/view/4', headers: admin })).json().post_id, 99)

  const callers: Record<string, Record<string, string>> = { anonymous: {}, alice: as('alice'), bob: as('bob'), admin }
  const cases: Array<[string, string, Record<string, number>]> = [
    // comments' listRule follows post_id (public, or the caller's own post).
    ['comments', 'true', { anonymous: 2, alice: 4, bob: 3, admin: 7 }],
    ['comments', "post_id.owner_id.name == 'Alice'", { anonymous: 2, alice: 4, bob: 2, admin: 4 }],
    ['comments', "post_id.owner_id.role == 'staff' & author_id == 'bob'", { anonymous: 1, alice: 2, bob: 1, admin: 2 }],
    ['comments', 'post_id.public == true | id == 16', { anonymous: 2, alice: 2, bob: 2, admin: 3 }],
    ['comments', 'post_id.public < true', { anonymous: 0, alice: 2, bob: 1, admin: 3 }],
    // bookmarks are open: a caller's where reads a post it may not see as null.
    ['bookmarks', 'post_id.public == false', { anonymous: 0, alice: 1, bob: 1, admin: 2 }],
    ['bookmarks', "post_id.title == 'diary' | post_id.title == 'plans'", { anonymous: 0, alice: 1, bob: 1, admin: 2 }],
    ['bookmarks', "post_id.owner_id.name >= 'A'", { anonymous: 1, alice: 2, bob: 2, admin: 3 }],
    ['bookmarks', 'post_id.title == null', { anonymous: 4, alice: 3, bob: 3, admin: 2 }],
    ['bookmarks', '!(post_id.public == true)', { anonymous: 4, alice: 4, bob: 4, admin: 4 }]
  ]
  for (const [table, where, expected] of cases) {
    for (const [who, headers] of Object.entries(callers)) {
      const list = await app.inject({ method: 'GET', url: `/api/v1/table/${table}/list`, query: { where, select: 'id', limit: '2' }, headers })
      const all = await app.inject({ method: 'GET', url: `/api/v1/table/${table}/select`, query: { where, select: 'id' }, headers })
      t.equal(list.statusCode, 200, list.body)
      t.equal(list.json().total, all.json().length, `${table} ${who} where ${where}: the total counts the rows a page reads`)
      t.equal(list.json().total, expected[who], `${table} ${who} where ${where}: ${expected[who]}`)
    }
  }
})
