// Full-text search (decision D37) on both dialects: the same rows for the same words, the index kept
// in step by writes, rules evaluated first, errors as 400, rank order; and the SQL each dialect gets.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { postgres } from '../../../lib/dialects/postgres.js'
import { compile, parse, type Scope } from '../../../lib/expr/index.js'
import { validateConfig } from '../../../lib/config/validate.js'
import { searchIndexOf, type SearchRank } from '../../../lib/search/fts.js'
import { sqliteSearch } from '../../../lib/dialects/sqlite-fts.js'

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const text = (name: string, extra: object = {}) => ({ name, type: 'text', sqlType: 'text', ...extra }) as const

const notes: TableData = {
  name: 'notes',
  fields: [id, text('owner', { notNull: true }), text('status', { notNull: true }), text('title'), text('body'), text('secret', { noSelect: true })],
  fullTextSearch: { fields: ['title', 'body', 'secret'] },
  extensions: [{ name: 'rules', listRule: 'status == \'published\' | owner == auth.uid', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
}

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost:3000',
  // Several searches in one where (one field each), and the refusal past the limit (decision D85).
  limits: { searches: 4 },
  tables: [
    notes,
    // A rule made of a search: only rows that mention "public" exist for callers.
    {
      name: 'docs',
      fields: [id, text('body')],
      fullTextSearch: { fields: ['body'], tokenize: 'porter' },
      extensions: [{ name: 'rules', listRule: 'docs @@ \'public\'', viewRule: 'docs @@ \'public\'', createRule: null, updateRule: null, deleteRule: null }]
    },
    // content_rowid: FTS5 keyed by an integer column; contentless false: FTS5 keeps its own copy.
    {
      name: 'keyed',
      fields: [{ name: 'n', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' }, text('body')],
      fullTextSearch: { fields: ['body'], content_rowid: 'n', prefix: '2 3', detail: 'column' },
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
    },
    {
      name: 'copied',
      fields: [id, text('body')],
      fullTextSearch: { fields: ['body'], contentless: false, columnsize: 0 },
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
    },
    { name: 'plain', fields: [id, text('body')], extensions: [{ name: 'rules', listRule: 'true' }] },
    // Relation expand reads `docs` under an alias, and under its listRule (a search).
    {
      name: 'links',
      fields: [id, text('doc', { foreignKey: { table: 'docs', column: 'id' } })],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
    },
    // A create rule checked in SQL on the inserted row: the index already holds it.
    {
      name: 'guarded',
      fields: [id, text('body')],
      fullTextSearch: { fields: ['body'] },
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'guarded @@ \'allowed\'', updateRule: 'true', deleteRule: null }]
    }
  ]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }
const as = (uid: string) => ({ 'x-test-uid': uid })

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

const NOTES = [
  { id: 'n1', owner: 'alice', status: 'published', title: 'Hello World', body: 'The quick brown fox' },
  { id: 'n2', owner: 'alice', status: 'published', title: 'Café au lait', body: 'write to john@example.com about file.txt' },
  { id: 'n3', owner: 'bob', status: 'published', title: 'hello-kitty fans', body: 'Running, runs; ran!' },
  { id: 'n4', owner: 'bob', status: 'draft', title: 'Plans', body: 'hello from the hidden draft' },
  { id: 'n5', owner: 'bob', status: 'published', title: 'Numbers 3.14 and 42', body: null, secret: 'password hunter2' }
]

async function insert (app: FastifyInstance, table: string, values: object[]): Promise<void> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, headers: ADMIN, payload: { values } })
  if (res.statusCode !== 200) throw new Error(res.body)
}

forEachDialect(t, 'full-text search', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  await insert(app, 'notes', NOTES)
  const list = async (table: string, query: Record<string, string>, headers: Record<string, string> = ADMIN) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/table/${table}/list`, query, headers })
    return { status: res.statusCode, body: res.json() }
  }
  const ids = async (where: string, headers: Record<string, string> = ADMIN, extra: Record<string, string> = {}) => {
    const res = await list('notes', { where, order: 'id', ...extra }, headers)
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return (res.body.items as Array<{ id: string }>).map((r) => r.id)
  }

  t.test('the same rows for the same words', async (t) => {
    const cases: Array<[string, string[]]> = [
      ['notes @@ \'hello\'', ['n1', 'n3', 'n4']],
      ['notes @@ \'HELLO world\'', ['n1']],
      ['notes @@ \'world hello\'', ['n1']],
      ['notes @@ \'john\'', ['n2']],
      ['notes @@ \'example\'', ['n2']],
      ['notes @@ \'txt\'', ['n2']],
      ['notes @@ \'café\'', ['n2']],
      ['notes @@ \'CAFÉ\'', ['n2']],
      ['notes @@ \'cafe\'', []],
      ['notes @@ \'kitty\'', ['n3']],
      ['notes @@ \'running\'', ['n3']],
      ['notes @@ \'run\'', []],
      ['notes @@ \'14\'', ['n5']],
      ['notes @@ \'hel*\'', ['n1', 'n3', 'n4']],
      ['notes @@ \'numb* 42\'', ['n5']],
      ['title @@ \'hello\'', ['n1', 'n3']],
      ['notes.body @@ \'hello\'', ['n4']],
      ['body @@ \'hello\' | title @@ \'fans\'', ['n3', 'n4']],
      ['notes @@ \'hello\' & status == \'published\'', ['n1', 'n3']],
      ['!(notes @@ \'hello\')', ['n2', 'n5']],
      ['notes @@ \'hunter2\'', ['n5']],
      // The search grammar (lib/search/fts-query.ts): the same meaning on both databases.
      ['notes @@ \'hello OR quick\'', ['n1', 'n3', 'n4']],
      ['notes @@ \'"hel"* OR "numb"*\'', ['n1', 'n3', 'n4', 'n5']],
      ['notes @@ \'"hello world"\'', ['n1']],
      ['notes @@ \'"world hello"\'', []],
      ['notes @@ \'"quick brown"\'', ['n1']],
      ['notes @@ \'"quick fox"\'', []],
      ['notes @@ \'"hello wor"*\'', ['n1']],
      ['notes @@ \'"john@example.com"\'', ['n2']],
      ['notes @@ \'hello -world\'', ['n3', 'n4']],
      ['notes @@ \'hello NOT world\'', ['n3', 'n4']],
      ['notes @@ \'-world hello\'', ['n3', 'n4']],
      ['notes @@ \'hello -"hello world" -(draft OR fans)\'', []],
      ['notes @@ \'(hello OR café) -kitty\'', ['n1', 'n2', 'n4']],
      ['notes @@ \'hello AND kitty\'', ['n3']],
      ['notes @@ \'hello-kitty\'', ['n3']],
      ['notes @@ \'hello or\'', []],
      ['title @@ \'hello -running\'', ['n1', 'n3']],
      ['title @@ \'hello -"brown fox"\'', ['n1', 'n3']]
    ]
    for (const [where, expected] of cases) t.same(await ids(where), expected, where)
  })

  t.test('writes keep the index in step', async (t) => {
    const edit = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', headers: ADMIN, payload: { where: 'id == \'n1\'', setValues: { title: 'Goodbye moon' } } })
    t.equal(edit.statusCode, 200, edit.body)
    t.same(await ids('notes @@ \'hello\''), ['n3', 'n4'])
    t.same(await ids('notes @@ \'goodbye\''), ['n1'])
    t.same(await ids('notes @@ \'quick fox\''), ['n1'], 'an unchanged field stays indexed')
    const owner = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', headers: ADMIN, payload: { where: 'id == \'n2\'', setValues: { status: 'draft' } } })
    t.equal(owner.statusCode, 200)
    t.same(await ids('notes @@ \'café\''), ['n2'], 'an update of other fields leaves the index alone')
    const del = await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', headers: ADMIN, payload: { where: 'id == \'n3\'' } })
    t.equal(del.statusCode, 200)
    t.same(await ids('notes @@ \'kitty\''), [])
    await insert(app, 'notes', [{ id: 'n6', owner: 'carol', status: 'published', title: 'Kitty returns', body: null }])
    t.same(await ids('notes @@ \'kitty\''), ['n6'])
    await insert(app, 'notes', [{ id: 'n3', owner: 'bob', status: 'published', title: 'hello-kitty fans', body: 'Running, runs; ran!' }])
    t.same(await ids('notes @@ \'kitty\''), ['n3', 'n6'])
    const bySearch = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', headers: ADMIN, payload: { where: 'title @@ \'kitty\'', setValues: { body: 'purr' }, returning: 'id' } })
    t.same(bySearch.json().map((r: { id: string }) => r.id).sort(), ['n3', 'n6'], 'an update filtered by @@')
    t.same(await ids('body @@ \'purr\''), ['n3', 'n6'], 'a body that was null is indexed once written')
    t.same(await ids('notes @@ \'running\''), [], 'and the words it replaced are gone')
  })

  t.test('rules first: a hidden row never matches', async (t) => {
    t.same(await ids('notes @@ \'hello\'', {}), ['n3'], 'anonymous: the draft n4 is hidden (and n1 no longer says hello)')
    t.same(await ids('notes @@ \'hello\'', as('bob')), ['n3', 'n4'], 'bob sees his own draft')
    const total = await list('notes', { where: 'notes @@ \'hidden draft\'' }, {})
    t.same(total.body, { items: [], total: 0 }, 'nothing of the hidden row, total included')
    t.same(await ids('notes @@ \'hunter2\'', {}), [], 'a noSelect field is not searched for callers who cannot see it')
    const hiddenField = await list('notes', { where: 'secret @@ \'hunter2\'' }, {})
    t.equal(hiddenField.status, 400)
    await insert(app, 'docs', [{ id: 'd1', body: 'a public notice' }, { id: 'd2', body: 'private notes' }, { id: 'd3', body: 'pubs running' }])
    const docs = await list('docs', {}, {})
    t.same(docs.body.items.map((r: { id: string }) => r.id), ['d1'], 'a rule made of @@')
    const narrowed = await list('docs', { where: 'docs @@ \'private\'' }, {})
    t.same(narrowed.body, { items: [], total: 0 }, 'a caller where under a search rule')
    const view = await app.inject({ method: 'GET', url: '/api/v1/table/docs/view/d2' })
    t.equal(view.statusCode, 404)
    await insert(app, 'links', [{ id: 'l1', doc: 'd1' }, { id: 'l2', doc: 'd2' }])
    const expanded = await list('links', { select: 'id, doc(id, body)' }, {})
    t.same(expanded.body.items, [{ id: 'l1', doc: { id: 'd1', body: 'a public notice' } }, { id: 'l2', doc: null }], 'an expanded relation is read under its search rule')
  })

  t.test('a create rule made of @@ sees the row being inserted', async (t) => {
    const create = (body: string) => app.inject({ method: 'POST', url: '/api/v1/table/guarded/insert', payload: { values: { id: body.slice(0, 8), body } } })
    t.equal((await create('allowed here')).statusCode, 200)
    t.equal((await create('refused here')).statusCode, 403)
    const rows = await list('guarded', {}, {})
    t.same(rows.body, { items: [{ id: 'allowed ', body: 'allowed here' }], total: 1 }, 'the refused row was rolled back, index included')
    t.same((await list('guarded', { where: 'guarded @@ \'refused\'' }, {})).body.total, 0)
  })

  t.test('porter: stems, keeps stop words', async (t) => {
    await insert(app, 'docs', [{ id: 'd4', body: 'the public runs' }, { id: 'd5', body: 'public running' }])
    const words = async (where: string) => (await list('docs', { where, order: 'id' })).body.items.map((r: { id: string }) => r.id)
    t.same(await words('docs @@ \'run\''), ['d3', 'd4', 'd5'])
    t.same(await words('docs @@ \'the\''), ['d4'], 'a stop word is a word like any other')
    t.same(await words('docs @@ \'notes\''), ['d2'])
  })

  t.test('content_rowid, own copy, tuning options', async (t) => {
    await insert(app, 'keyed', [{ n: 10, body: 'alpha beta' }, { n: 20, body: 'beta gamma' }])
    await insert(app, 'copied', [{ id: 'c1', body: 'alpha beta' }, { id: 'c2', body: 'beta gamma' }])
    for (const table of ['keyed', 'copied']) {
      const rows = async (where: string) => (await list(table, { where })).body.items.map((r: { body: string }) => r.body)
      t.same(await rows(`${table} @@ 'beta'`), ['alpha beta', 'beta gamma'], table)
      t.same(await rows(`body @@ 'gam*'`), ['beta gamma'], table)
      const del = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/delete`, headers: ADMIN, payload: { where: 'body == \'alpha beta\'' } })
      t.equal(del.statusCode, 200)
      t.same(await rows(`${table} @@ 'beta'`), ['beta gamma'], `${table}: deleted`)
    }
  })

  t.test('rank: best matches first unless an order is given', async (t) => {
    await insert(app, 'docs', [
      { id: 'r1', body: 'public apple banana cherry date elder fig grape' },
      { id: 'r2', body: 'public apple apple apple' },
      { id: 'r3', body: 'public apple banana apple' }
    ])
    const anon = (query: Record<string, string>) => list('docs', query, {})
    t.same((await anon({ where: 'docs @@ \'apple\'' })).body.items.map((r: { id: string }) => r.id), ['r2', 'r3', 'r1'])
    t.same((await anon({ where: 'docs @@ \'apple\'', order: 'id' })).body.items.map((r: { id: string }) => r.id), ['r1', 'r2', 'r3'])
    const page = await anon({ where: 'docs @@ \'apple\'', limit: '1', offset: '1' })
    t.same(page.body, { items: [{ id: 'r3', body: 'public apple banana apple' }], total: 3 })
    const distinct = await anon({ where: 'docs @@ \'apple\'', select: 'id', distinct: 'true' })
    t.equal(distinct.status, 200, 'DISTINCT orders by its columns, not by rank')
  })

  t.test('errors are 400 with the standard body', async (t) => {
    const cases: Array<[string, string, RegExp]> = [
      ['plain', 'plain @@ \'x\'', /no full-text search/],
      ['plain', 'body @@ \'x\'', /no full-text search/],
      ['notes', 'status @@ \'x\'', /not one of the fullTextSearch fields/],
      ['notes', 'nope @@ \'x\'', /Unknown column "nope"/],
      ['notes', 'title @@ 3', /right side of @@ must be a text/],
      ['notes', 'title @@ title', /right side of @@ must be a text/],
      ['notes', 'lower(title) @@ \'x\'', /left side of @@/],
      ['notes', 'notes @@ \'*** ...\'', /has no words/],
      ['notes', `notes @@ '${'w '.repeat(40)}'`, /at most 10 words \(character 21 of the search text\) at position 9/],
      ['notes', 'notes @@ \'hello "world\'', /Unclosed quote \(character 7 /],
      ['notes', 'notes @@ \'(hello world\'', /Unclosed parenthesis \(character 1 /],
      ['notes', 'notes @@ \'hello world)\'', /Unmatched closing parenthesis \(character 12 /],
      ['notes', 'notes @@ \'OR hello\'', /OR needs a word on both sides \(character 1 /],
      ['notes', 'notes @@ \'hello OR\'', /OR needs a word on both sides \(character 9 /],
      ['notes', 'notes @@ \'hello AND\'', /AND needs a word after it/],
      ['notes', 'notes @@ \'hello NOT\'', /NOT needs a word/],
      ['notes', 'notes @@ \'NOT hello\'', /cannot be only NOT terms/],
      ['notes', 'notes @@ \'-hello -world\'', /cannot be only NOT terms/],
      ['notes', 'notes @@ \'hello OR -world\'', /cannot be only NOT terms: add a word to find \(character 10 /],
      ['notes', 'notes @@ \'hello ()\'', /Empty parentheses/],
      ['notes', 'notes @@ \'"" hello\'', /A phrase needs a word/],
      ['notes', 'notes @@ \'h*\'', /A prefix takes at least 2 letters/],
      ['notes', 'notes @@ \'NEAR(hello world)\'', /NEAR is not supported/],
      ['notes', `notes @@ '${'('.repeat(9)}a${')'.repeat(9)}'`, /nests at most 8 parentheses/],
      ['notes', 'notes @@ \'a\' | notes @@ \'b\' | notes @@ \'c\' | notes @@ \'d\' | notes @@ \'e\'', /more than 4 @@ searches in one request \(limits\.searches/],
      ['keyed', 'keyed @@ \'"alpha beta"\'', /A "phrase" needs fullTextSearch detail "full"/],
      ['notes', 'notes @@', /Unexpected end/]
    ]
    for (const [table, where, message] of cases) {
      const res = await list(table, { where })
      t.equal(res.status, 400, where)
      t.match(res.body, { code: 400, message: /^Invalid where: / }, where)
      t.match(res.body.message, message, where)
    }
  })
})

t.test('config: fields hold text; content_rowid is an integer column', async (t) => {
  const table = (fts: object, fields: object[] = []) => ({ jwtSecret: 's', appUrl: 'http://x', tables: [{ name: 'a', fields: [id, text('body'), ...fields], fullTextSearch: fts }] })
  const problems = (fts: object, fields: object[] = []) => (validateConfig(table(fts, fields)) as { problems?: string[] }).problems ?? []
  t.same(problems({ fields: ['body'] }), [])
  t.match(problems({ fields: ['nope'] }), [/fields\[0\]: column "nope" does not exist/])
  t.match(problems({ fields: ['meta'] }, [{ name: 'meta', type: 'json', sqlType: 'json' }]), [/"meta" is not a text field/])
  t.match(problems({ fields: ['n'] }, [{ name: 'n', type: 'integer', sqlType: 'integer' }]), [/"n" is not a text field/])
  t.match(problems({ fields: ['body'], content_rowid: 'body' }), [/content_rowid: "body" must be an integer column/])
  t.match(problems({ fields: ['body'], content_rowid: 'n', contentless: false }, [{ name: 'n', type: 'integer', sqlType: 'integer' }]), [/only used when contentless/])
  t.match(problems({ fields: ['body'], tokenize: 'snowball' }), [/tokenize/])
  t.match(problems({ fields: ['body'], prefix: '2; DROP TABLE a' }), [/prefix/])
  t.match(problems({ fields: [] }), [/fields/])
  t.match(problems({ fields: ['body'], unknown: 1 }), [/unknown/])
})

t.test('compiled SQL per dialect', async (t) => {
  const sql = (dialect: typeof sqlite, src: string, seesHidden = true) => {
    const table = describeTables([notes], dialect).get('notes')!
    const ranks: SearchRank[] = []
    const scope: Scope = { dialect, table, globals: { auth: { q: 'from auth' }, request: {}, params: {} }, seesHidden, ranks }
    const compiled = compile(parse(src), scope)
    return { compiled, ranks }
  }
  const lite = sql(sqlite, 'notes @@ \'Hello wor*\'')
  const aliased = compile(parse('title @@ \'x\''), { dialect: sqlite, table: { ...describeTables([notes], sqlite).get('notes')!, quoted: '"fb-expand-1"' }, globals: {}, seesHidden: true })
  t.match(aliased, { sql: /^\("fb-expand-1"\.rowid IN \(SELECT rowid FROM "fts5_notes_idx" / }, 'the row is the one the statement names, under its alias')
  t.match(lite.compiled, {
    kind: 'sql',
    sql: '("notes".rowid IN (SELECT rowid FROM "fts5_notes_idx" WHERE "fts5_notes_idx" MATCH ?))',
    bindings: ['("Hello" AND "wor"*)'],
    safe: true
  })
  t.same(lite.ranks.map((r) => [r.fields, r.query]), [[undefined, { type: 'and', include: [{ type: 'phrase', words: ['Hello'], prefix: false }, { type: 'phrase', words: ['wor'], prefix: true }], exclude: [] }]])
  t.same(sqlite.search.scores(lite.ranks[0].index, '"notes"', ['title', 'body'], lite.ranks[0].query, { where: { sql: '"notes"."owner" = ?', bindings: ['me'] }, order: '"notes"."id"', limit: 1000 }), {
    sql: 'WITH "fb_c" AS MATERIALIZED (SELECT "notes".rowid AS "fb_row" FROM "notes" WHERE "notes"."owner" = ? ORDER BY "notes"."id" LIMIT 1000) ' +
      'SELECT "fts5_notes_idx".rowid AS "fb_row", coalesce(length(highlight("fts5_notes_idx", 0, char(1), \'\')) - length("fts5_notes_idx"."title"), 0) + coalesce(length(highlight("fts5_notes_idx", 1, char(1), \'\')) - length("fts5_notes_idx"."body"), 0) AS "fb_score" ' +
      'FROM "fts5_notes_idx" WHERE "fts5_notes_idx" MATCH ? AND "fts5_notes_idx".rowid >= (SELECT min("fb_row") FROM "fb_c") AND "fts5_notes_idx".rowid <= (SELECT max("fb_row") FROM "fb_c") AND +"fts5_notes_idx".rowid IN (SELECT "fb_row" FROM "fb_c")',
    bindings: ['me', '{title body} : (("Hello" AND "wor"*))']
  }, 'scores: the hits in the fields searched, of the first candidates only')
  const driven = sqliteSearch.drive(lite.ranks[0].index, '"notes"', undefined, lite.ranks[0].query)
  t.same(driven, {
    sql: '(SELECT rowid AS "fb_match" FROM "fts5_notes_idx" WHERE "fts5_notes_idx" MATCH ?) AS "fb_match" CROSS JOIN "notes" ON "notes".rowid = "fb_match"."fb_match"',
    bindings: ['("Hello" AND "wor"*)']
  }, 'drive: the matches in rowid order, the index\'s columns out of scope, each joined to its row')
  t.match(sqliteSearch.scores(lite.ranks[0].index, '"notes"', undefined, lite.ranks[0].query, { where: { sql: 'unused', bindings: [] }, order: '"notes"."id"', limit: 1000, rest: { sql: '"notes"."owner" = ?', bindings: ['me'] } }), {
    sql: /^WITH "fb_c" AS MATERIALIZED \(SELECT "notes".rowid AS "fb_row" FROM \(SELECT rowid AS "fb_match" FROM "fts5_notes_idx" WHERE "fts5_notes_idx" MATCH \?\) AS "fb_match" CROSS JOIN "notes" ON "notes".rowid = "fb_match"."fb_match" WHERE "notes"."owner" = \? ORDER BY "fb_match"."fb_match" LIMIT 1000\) SELECT /,
    bindings: ['("Hello" AND "wor"*)', 'me', '("Hello" AND "wor"*)']
  }, 'scores with `rest`: the candidates are the first matches in rowid order that `rest` admits (decision D77)')
  const rowidIs = (fields: TableData['fields'], contentRowid?: string) => searchIndexOf({ name: 't', fields, fullTextSearch: { fields: ['body'], content_rowid: contentRowid } })?.rowidIsKey
  const body = text('body')
  t.equal(rowidIs([id, body]), true, 'the table\'s own rowid')
  t.equal(rowidIs([{ name: 'n', type: 'integer', sqlType: 'integer', primary: true }, body], 'n'), true, 'an INTEGER PRIMARY KEY: the rowid\'s alias')
  t.equal(rowidIs([id, { name: 'n', type: 'integer', sqlType: 'integer', unique: true }, body], 'n'), false, 'an integer column that is not the key')
  t.equal(rowidIs([{ name: 'n', type: 'integer', sqlType: 'int', primary: true }, body], 'n'), false, 'an INT key is not the rowid\'s alias (only INTEGER is)')
  t.equal(rowidIs([id, { name: 'rowid', type: 'integer', sqlType: 'integer' }, body]), false, 'a column named rowid hides the rowid')
  t.equal(sqliteSearch.drive({ ...lite.ranks[0].index, rowidIsKey: false }, '"notes"', undefined, lite.ranks[0].query), undefined, 'no drive without a one-seek row id')
  t.match(sql(sqlite, 'title @@ auth.q').compiled, { bindings: ['{title} : (("from" AND "auth"))'] }, 'a global is folded into the query')
  t.match(sql(sqlite, 'notes @@ \'x\'', false).compiled, { bindings: ['{title body} : ("x")'] }, 'a caller who cannot see `secret` does not search it')

  const pg = sql(postgres, 'notes.title @@ \'Hello wor*\'')
  const vector = (fields: string[], q: string) => `to_tsvector('simple', regexp_replace(${fields.map((f) => `coalesce(${q}"${f}", '') COLLATE "C"`).join(' || \' \' || ')}, '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]+', ' ', 'g'))`
  const query = 'to_tsquery(\'simple\', CAST(? AS text))'
  t.match(pg.compiled, {
    kind: 'sql',
    sql: `("notes"."_fastbase_search" @@ ${query} AND ${vector(['title'], '"notes".')} @@ ${query})`,
    bindings: ['(\'Hello\' & \'wor\':*)', '(\'Hello\' & \'wor\':*)'],
    safe: true
  })
  t.same(postgres.search.scores(pg.ranks[0].index, '"notes"', ['title'], pg.ranks[0].query, { where: true, order: '"notes"."id"', limit: 1000 }), {
    sql: `SELECT "fb_c"."fb_row", ts_rank(${vector(['title'], '"fb_c".')}, ${query}) AS "fb_score" FROM (SELECT "notes".ctid AS "fb_row", "notes"."title" FROM "notes" ORDER BY "notes"."id" LIMIT 1000) AS "fb_c"`,
    bindings: ['(\'Hello\' & \'wor\':*)']
  }, 'scores of some fields: their vector, computed for the candidates once chosen')
  t.same(postgres.search.scores(pg.ranks[0].index, '"notes"', undefined, pg.ranks[0].query, { where: { sql: '"notes"."owner" = ?', bindings: ['me'] }, order: '"notes"."id"', limit: 1000 }), {
    sql: `SELECT "fb_c"."fb_row", ts_rank("fb_c"."_fastbase_search", ${query}) AS "fb_score" FROM (SELECT "notes".ctid AS "fb_row", "notes"."_fastbase_search" FROM "notes" WHERE "notes"."owner" = ? ORDER BY "notes"."id" LIMIT 1000) AS "fb_c"`,
    bindings: ['(\'Hello\' & \'wor\':*)', 'me']
  }, 'scores of the whole row: the stored vector')
  t.match(sql(postgres, 'title @@ \'a -b\'').compiled, { bindings: ['\'a\'', '(\'a\' & !\'b\')'] }, 'the index is asked without the negations, the field with them')
  t.match(sql(postgres, 'notes @@ \'x\'').compiled, { sql: `("notes"."_fastbase_search" @@ ${query})`, bindings: ['\'x\''] }, 'the whole row: the stored vector alone')
  t.match(sql(postgres, 'notes @@ auth.nothing').compiled, { kind: 'lit', value: null }, 'a null text matches nothing, as in SQL')

  const ddl = (dialect: typeof sqlite, table: TableData) => dialect.createTable(table, [table]).slice(1)
  t.same(ddl(sqlite, notes), [
    'CREATE VIRTUAL TABLE "fts5_notes_idx" USING fts5("title", "body", "secret", content=\'notes\', tokenize=\'unicode61 remove_diacritics 0\', prefix=\'2 3\')',
    'INSERT INTO "fts5_notes_idx" (rowid, "title", "body", "secret") SELECT rowid, "title", "body", "secret" FROM "notes"',
    'CREATE TRIGGER "fts5_notes_idx_ai" AFTER INSERT ON "notes" BEGIN\n  INSERT INTO "fts5_notes_idx" (rowid, "title", "body", "secret") VALUES (new.rowid, new."title", new."body", new."secret");\nEND',
    'CREATE TRIGGER "fts5_notes_idx_ad" AFTER DELETE ON "notes" BEGIN\n  INSERT INTO "fts5_notes_idx" ("fts5_notes_idx", rowid, "title", "body", "secret") VALUES (\'delete\', old.rowid, old."title", old."body", old."secret");\nEND',
    'CREATE TRIGGER "fts5_notes_idx_au" AFTER UPDATE OF "title", "body", "secret" ON "notes" BEGIN\n  INSERT INTO "fts5_notes_idx" ("fts5_notes_idx", rowid, "title", "body", "secret") VALUES (\'delete\', old.rowid, old."title", old."body", old."secret");\n  INSERT INTO "fts5_notes_idx" (rowid, "title", "body", "secret") VALUES (new.rowid, new."title", new."body", new."secret");\nEND'
  ])
  t.same(ddl(postgres, notes), [
    `ALTER TABLE "notes" ADD COLUMN "_fastbase_search" tsvector GENERATED ALWAYS AS (${vector(['title', 'body', 'secret'], '')}) STORED`,
    'CREATE INDEX "fts_notes_idx" ON "notes" USING gin ("_fastbase_search")',
    'ANALYZE "notes"'
  ], 'PostgreSQL: the vector stored in its column, indexed')
  t.match(ddl(sqlite, { ...notes, fullTextSearch: { fields: ['title'], prefix: 0 } }), [/tokenize='unicode61 remove_diacritics 0'\)$/], 'prefix 0: no prefix index')
  t.match(ddl(sqlite, { ...notes, fullTextSearch: { fields: ['title'], prefix: '2,4' } }), [/prefix='2 4'\)$/], 'the prefix lengths configured')
  const porter = { ...notes, fullTextSearch: { fields: ['title'], tokenize: 'porter' as const } }
  t.match(ddl(postgres, porter), [/^DO \$fastbase\$ BEGIN[\s\S]*CREATE TEXT SEARCH CONFIGURATION fastbase_porter/, /GENERATED ALWAYS AS \(to_tsvector\('fastbase_porter'/])
  t.match(ddl(sqlite, porter), [/tokenize='porter unicode61 remove_diacritics 0'/])
  t.same(ddl(sqlite, { ...notes, fullTextSearch: { fields: ['title'], enabled: false } }), [], 'enabled: false builds nothing')
})
