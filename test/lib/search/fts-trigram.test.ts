// Substring search, `tokenize: 'trigram'` (decision D103), on both dialects: the same rows for the same
// search (each word or phrase a case-insensitive substring, AND, OR, NOT, fields), a word under three
// characters refused, key order instead of a rank, the budget of every search, writes kept in step, and
// a word index turned into a substring one by a migration, and a PostgreSQL role that may not create
// pg_trgm told what to run.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, dialects, forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import { parseSearch, SearchSyntaxError, MIN_TRIGRAM_LENGTH } from '../../../lib/search/fts-query.js'
import { searchIndexOf } from '../../../lib/search/fts.js'
import { ftsStatements } from '../../../lib/dialects/sqlite-fts.js'
import { configNotes } from '../../../lib/config/warnings.js'
import { describeTables } from '../../../lib/table/descriptor.js'
import { dialectFor } from '../../../lib/dialects/index.js'
import { validateConfig } from '../../../lib/config/validate.js'
import { PG_TRGM_MISSING } from '../../../lib/dialects/postgres-trigram.js'

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const text = (name: string, extra: object = {}) => ({ name, type: 'text', sqlType: 'text', ...extra }) as const

const items = (tokenize: 'trigram' | 'unicode61'): TableData => ({
  name: 'items',
  // `tag` NOCASE: PostgreSQL's ILIKE refuses a nondeterministic collation unless told another.
  fields: [id, text('title'), text('body'), text('secret', { noSelect: true }), text('tag', { collate: 'NOCASE' })],
  fullTextSearch: { fields: ['title', 'body', 'secret', 'tag'], tokenize },
  extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
})

const config = (tokenize: 'trigram' | 'unicode61' = 'trigram'): DatabaseSettings => ({
  jwtSecret: 'trigram-secret-trigram-secret',
  appUrl: 'http://localhost:3000',
  tables: [items(tokenize)]
})

const ADMIN = { authorization: `Bearer ${adminToken}` }

const ROWS = [
  { id: 't1', title: 'Espresso Machine', body: 'Brews a strong ESPRESSO shot', secret: null },
  { id: 't2', title: 'Pressure cooker', body: 'Cooks rice fast', secret: 'classified' },
  { id: 't3', title: 'French press', body: 'Coffee, espresso-style', secret: null },
  { id: 't4', title: 'Tea kettle', body: null, secret: null, tag: 'Stovetop' },
  { id: 't5', title: 'Café crème', body: 'au lait', secret: null }
]

async function insert (app: FastifyInstance, values: object[]): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', headers: ADMIN, payload: { values } })
  if (res.statusCode !== 200) throw new Error(res.body)
}

async function list (app: FastifyInstance, query: Record<string, string>, headers: Record<string, string> = ADMIN) {
  const res = await app.inject({ url: '/api/v1/table/items/list', query, headers })
  return { status: res.statusCode, body: res.json() }
}

async function ids (app: FastifyInstance, where: string, headers: Record<string, string> = ADMIN, extra: Record<string, string> = { order: 'id' }): Promise<string[]> {
  const res = await list(app, { where, ...extra }, headers)
  if (res.status !== 200) throw new Error(`${where}: ${JSON.stringify(res.body)}`)
  return (res.body.items as Array<{ id: string }>).map((r) => r.id)
}

forEachDialect(t, 'trigram: substring search', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect })
  await insert(app, ROWS)

  t.test('the same rows for the same search', async (t) => {
    const cases: Array<[string, string[]]> = [
      // The case: a word inside a word.
      ['items @@ \'presso\'', ['t1', 't3']],
      ['items @@ \'PRESSO\'', ['t1', 't3']],
      ['items @@ \'press\'', ['t1', 't2', 't3']],
      ['items @@ \'esp\'', ['t1', 't3']],
      ['items @@ \'xyzzy\'', []],
      // Accents are kept, as in the word indexes.
      ['items @@ \'café\'', ['t5']],
      ['items @@ \'cafe\'', []],
      ['items @@ \'CAFÉ CRÈ\'', ['t5']],
      // Every word (AND), in any field.
      ['items @@ \'press cook\'', ['t2']],
      ['items @@ \'press AND rice\'', ['t2']],
      ['items @@ \'kettle OR machine\'', ['t1', 't4']],
      ['items @@ \'press -espresso\'', ['t2']],
      ['items @@ \'press NOT machine\'', ['t2', 't3']],
      ['items @@ \'(kettle OR cooker) -rice\'', ['t4']],
      // A phrase: its words with one space between, a substring of one field.
      ['items @@ \'"so ma"\'', ['t1']],
      ['items @@ \'"strong espresso"\'', ['t1']],
      ['items @@ \'"e c"\'', ['t2']],
      ['items @@ \'"espresso style"\'', []],
      ['items @@ \'"machine brews"\'', []],
      // `*` changes nothing: a substring already matches every word it starts.
      ['items @@ \'pres*\'', ['t1', 't2', 't3']],
      ['items @@ \'"so ma"*\'', ['t1']],
      // Some fields; a negation looks only at them.
      ['title @@ \'presso\'', ['t1']],
      ['body @@ \'presso\'', ['t1', 't3']],
      ['title @@ \'press -rice\'', ['t1', 't2', 't3']],
      ['!(items @@ \'press\')', ['t4', 't5']],
      ['items @@ \'classified\'', ['t2']],
      ['items @@ \'TOVET\'', ['t4']],
      ['tag @@ \'stove\'', ['t4']]
    ]
    for (const [where, expected] of cases) t.same(await ids(app, where), expected, where)
  })

  t.test('a noSelect field is not searched for callers', async (t) => {
    t.same(await ids(app, 'items @@ \'classified\'', {}), [])
    t.same(await ids(app, 'items @@ \'press\'', {}), ['t1', 't2', 't3'])
  })

  t.test('no rank: matches in key order unless an order is given', async (t) => {
    t.same(await ids(app, 'items @@ \'espresso\'', ADMIN, {}), ['t1', 't3'])
    t.same(await ids(app, 'items @@ \'press\'', ADMIN, { order: '-id' }), ['t3', 't2', 't1'])
    const page = await list(app, { where: 'items @@ \'press\'', limit: '1', offset: '1', select: 'id' })
    t.same(page.body, { items: [{ id: 't2' }], total: 3 })
  })

  t.test('a word or phrase under three characters is a 400 naming it; budget as every search', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['items @@ \'es\'', /at least 3 characters \(character 1 of the search text\)/],
      ['items @@ \'press es\'', /at least 3 characters \(character 7 of the search text\)/],
      ['items @@ \'press OR "a"\'', /at least 3 characters \(character 10 of the search text\)/],
      ['items @@ \'ab*\'', /at least 3 characters/],
      ['items @@ \'espresso\' | items @@ \'kettle\'', /more than 1 @@ search in one request/]
    ]
    for (const [where, message] of cases) {
      const res = await list(app, { where })
      t.equal(res.status, 400, where)
      t.match(res.body, { code: 400, message: /^Invalid where: / }, where)
      t.match(res.body.message, message, where)
    }
  })

  t.test('a substring search makes the statement costly (decision D85)', async (t) => {
    const direct = app.fastbase.executor.direct
    if (direct === undefined) throw new Error('no direct runner')
    const read = direct.read
    const offThread: boolean[] = []
    direct.read = (statement, bindings) => {
      offThread.push(statement.offThread === true)
      return read(statement, bindings)
    }
    t.teardown(() => { direct.read = read })
    t.same(await ids(app, 'items @@ \'presso\''), ['t1', 't3'])
    t.ok(offThread.length > 0 && offThread.every((costly) => costly), 'every statement of a search is costly')
    offThread.length = 0
    t.same(await ids(app, 'id == \'t1\''), ['t1'])
    t.ok(offThread.length > 0 && offThread.every((costly) => !costly), 'a plain list is not')
  })

  t.test('writes keep the index in step', async (t) => {
    await insert(app, [{ id: 't6', title: 'Ultrapresso', body: null, secret: null }])
    t.same(await ids(app, 'items @@ \'presso\''), ['t1', 't3', 't6'])
    const update = await app.inject({ method: 'POST', url: '/api/v1/table/items/edit/t6', headers: ADMIN, payload: { title: 'Kettle two' } })
    t.equal(update.statusCode, 200, update.body)
    t.same(await ids(app, 'items @@ \'presso\''), ['t1', 't3'])
    t.same(await ids(app, 'items @@ \'kettle\''), ['t4', 't6'])
    const removed = await app.inject({ method: 'POST', url: '/api/v1/table/items/delete', headers: ADMIN, payload: { where: 'items @@ \'kettle two\'', returning: 'id' } })
    t.equal(removed.statusCode, 200, removed.body)
    t.same(removed.json(), [{ id: 't6' }], 'a delete filtered by a substring search removes only its match')
    t.same(await ids(app, 'items @@ \'kettle\''), ['t4'])
  })
})

forEachDialect(t, 'trigram: changing tokenize rebuilds the index', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  let app = await buildApp(t, config('unicode61'), { dialect, databaseUrl })
  await insert(app, ROWS)
  t.same(await ids(app, 'items @@ \'presso\''), [], 'words: no substring')
  await app.close()

  app = await buildApp(t, config('trigram'), { dialect, databaseUrl })
  t.same(await ids(app, 'items @@ \'presso\''), ['t1', 't3'], 'substrings after the migration')
  await insert(app, [{ id: 't6', title: 'Ultrapresso', body: null, secret: null }])
  t.same(await ids(app, 'items @@ \'presso\''), ['t1', 't3', 't6'], 'writes after the migration')
})

t.test('trigram: the grammar, the SQLite index, no warning', async (t) => {
  t.same(parseSearch('"e c" press*', MIN_TRIGRAM_LENGTH), { type: 'and', include: [{ type: 'phrase', words: ['e', 'c'], prefix: false }, { type: 'phrase', words: ['press'], prefix: true }], exclude: [] })
  t.throws(() => parseSearch('abc de', MIN_TRIGRAM_LENGTH), SearchSyntaxError)
  t.same(parseSearch('de'), { type: 'phrase', words: ['de'], prefix: false }, 'a word index takes short words')
  const index = searchIndexOf(items('trigram'))
  if (index === undefined) throw new Error('a trigram table has a search index')
  t.equal(index.tokenize, 'trigram')
  t.equal(index.prefix, undefined, 'no prefix index by default')
  t.match(ftsStatements(index)[0], /tokenize='trigram case_sensitive 0 remove_diacritics 0'\)$/)
  t.same(configNotes(config(), describeTables(config().tables, dialectFor('sqlite'))).warnings, [], 'trigram is no longer a warning')
  // FTS5 runs a trigram term of more than three characters as a phrase, which needs positions.
  const withDetail = (detail: 'full' | 'column' | 'none') => validateConfig({ ...config(), tables: [{ ...items('trigram'), fullTextSearch: { fields: ['title'], tokenize: 'trigram', detail } }] }) as { problems?: string[] }
  t.same(withDetail('full').problems ?? [], [])
  t.match(withDetail('column').problems, [/tables\[0\]\.fullTextSearch\.detail: tokenize "trigram" needs detail "full"/])
  t.match(withDetail('none').problems, [/needs detail "full"/])
})

// A database without pg_trgm, and a role that may make tables in its public schema but not extensions
// (pg_trgm is trusted: a role that may create schemas in the database may create it).
t.test('postgres: a role that may not create pg_trgm is told what to run as a superuser', { skip: dialects.includes('postgres') ? false : 'PostgreSQL not configured' }, async (t) => {
  const adminUrl = process.env.FASTBASE_TEST_PG_URL ?? ''
  const suffix = randomBytes(4).toString('hex')
  const role = `fbt_trgm_role_${suffix}`
  const database = `fbt_trgm_${suffix}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
    await admin.query(`DROP ROLE IF EXISTS "${role}"`)
    await admin.end()
  })
  await admin.query(`CREATE ROLE "${role}" LOGIN`)
  await admin.query(`CREATE DATABASE "${database}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  const owner = new pg.Client({ connectionString: url.toString() })
  await owner.connect()
  await owner.query(`GRANT CREATE ON SCHEMA public TO "${role}"`)
  await owner.end()
  url.username = role
  await t.rejects(buildApp(t, config(), { dialect: 'postgres', databaseUrl: url.toString() }), { message: new RegExp(PG_TRGM_MISSING.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) })
  const check = new pg.Client({ connectionString: adminUrl.replace(/\/[^/?]*(\?|$)/, `/${database}$1`) })
  await check.connect()
  t.same((await check.query("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).rows, [], 'nothing was created')
  await check.end()
})
