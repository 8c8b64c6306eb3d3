// Schema follows config (decisions D21, D32, D33), end to end: one project's config evolved over
// restarts of the app on one database, on both dialects, with its data checked at every step —
// safe changes applied on start, destructive ones pending until a superadmin applies them through
// the API, a refused apply leaving nothing behind, renames keeping data, SQLite's rebuild keeping
// foreign keys and indexes, autoMigrate: false, and two instances starting together on PostgreSQL.
import t, { type Test } from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Knex } from 'knex'
import { adminToken, buildApp, dialects, forEachDialect, sharedDatabase } from '../../helper.js'
import { authFields, baseFields } from '../../../lib/config/helpers.js'
import { INITIAL_MIGRATION, MIGRATIONS_TABLE } from '../../../lib/db/migrations.js'
import type { DatabaseSettings, TableData, TableField } from '../../../schemas/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'

const PASSWORDS = { editor: 'editor-password-123', viewer: 'viewer-password-123' }
const open = { listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const id: TableField = { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true }
const text = (name: string, extra: Partial<TableField> = {}): TableField => ({ name, type: 'text', sqlType: 'text', ...extra })
const integer = (name: string, extra: Partial<TableField> = {}): TableField => ({ name, type: 'integer', sqlType: 'integer', ...extra })

function project (tables: TableData[], extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  const users: TableData = {
    name: 'users',
    autoSetUid: true,
    fields: [...baseFields, ...authFields],
    extensions: [{ name: 'auth', jwtSecret: 'users-secret' }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: null, deleteRule: null }]
  }
  return {
    jwtSecret: 'migrations-test-secret',
    appUrl: 'http://127.0.0.1',
    rateLimit: false,
    admin: { editorPassword: PASSWORDS.editor, viewerPassword: PASSWORDS.viewer },
    tables: [users, ...tables.map((table): TableData => ({ ...table, extensions: [{ name: 'rules' as const, ...open }] }))],
    ...extra
  }
}

// Version 1: writers, their posts (title indexed), comments on posts.
const comments: TableData = { name: 'comments', fields: [id, integer('post', { foreignKey: { table: 'posts', column: 'id', onDelete: 'CASCADE' } }), text('text')] }
const v1 = project([
  { name: 'writers', fields: [id, text('name', { notNull: true })] },
  { name: 'posts', fields: [id, text('title'), text('body'), integer('author', { foreignKey: { table: 'writers', column: 'id' } })], indexes: [{ fields: 'title' }] },
  comments
])

// Version 2, safe only: writers renamed to authors, body to content, two new columns, a new index, a new table.
const v2 = project([
  { name: 'authors', lastName: 'writers', fields: [id, text('name', { notNull: true })] },
  {
    name: 'posts',
    fields: [id, text('title'), text('content', { lastName: 'body' }), integer('author', { foreignKey: { table: 'authors', column: 'id' } }), integer('views', { notNull: true, default: { l: 0 } }), text('subtitle')],
    indexes: [{ fields: 'title' }, { fields: 'author' }]
  },
  comments,
  { name: 'tags', fields: [text('label', { primary: true })] }
])

// Version 3, destructive: subtitle dropped, title NOT NULL, author names unique, tags dropped.
const v3 = project([
  { name: 'authors', fields: [id, text('name', { notNull: true, unique: true })] },
  {
    name: 'posts',
    fields: [id, text('title', { notNull: true }), text('content'), integer('author', { foreignKey: { table: 'authors', column: 'id' } }), integer('views', { notNull: true, default: { l: 0 } })],
    indexes: [{ fields: 'title' }, { fields: 'author' }]
  },
  comments
])

function withPostColumn (config: DatabaseSettings, field: TableField, extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  const copy = structuredClone(config)
  copy.tables.find((x) => x.name === 'posts')!.fields.push(field)
  return { ...copy, ...extra }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const ADMIN = bearer(adminToken)

function caller (app: FastifyInstance) {
  return async (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, payload?: unknown) => {
    const options: InjectOptions = { method, url: `/api/v1${url}`, headers }
    if (payload !== undefined) options.payload = payload as InjectOptions['payload']
    return await app.inject(options)
  }
}

async function hasColumn (db: Knex, table: string, column: string): Promise<boolean> {
  return await db.schema.hasColumn(table, column)
}

async function indexNames (db: Knex, dialect: DialectName, table: string): Promise<string[]> {
  if (dialect === 'sqlite') return (await db.raw(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_%' ORDER BY name`, [table])).map((r: { name: string }) => r.name)
  return (await db.raw('SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname NOT LIKE ? ORDER BY indexname', [table, '%_pkey'])).rows.map((r: { name: string }) => r.name)
}

/** The app on `databaseUrl` with `config`, the previous one closed first (a restart). */
function restarts (t: Test, dialect: DialectName, databaseUrl: string) {
  let current: FastifyInstance | undefined
  return async (config: DatabaseSettings): Promise<FastifyInstance> => {
    await current?.close()
    current = await buildApp(t, config, { dialect, databaseUrl })
    return current
  }
}

forEachDialect(t, 'a config evolved over restarts', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const restart = restarts(t, dialect, databaseUrl)

  // ---- v1: the initial schema ----
  let app = await restart(v1)
  let request = caller(app)
  let status = (await request('GET', '/migrations', ADMIN)).json()
  t.same(status.migrations.map((m: { name: string }) => m.name), [INITIAL_MIGRATION], 'the initial schema is the first migration')
  t.match(status.migrations[0], { sql: /CREATE TABLE "posts"/, applied_at: /^\d{4}-\d\d-\d\dT/ })
  t.same(status.pending, [])
  t.equal((await request('POST', '/table/writers/insert', ADMIN, { values: [{ id: 1, name: 'Ann' }, { id: 2, name: 'Bob' }] })).statusCode, 200)
  t.equal((await request('POST', '/table/posts/insert', ADMIN, { values: [{ id: 1, title: 'One', body: 'first', author: 1 }, { id: 2, title: 'Two', body: 'second', author: 2 }, { id: 3, title: null, body: 'untitled', author: 1 }] })).statusCode, 200)
  t.equal((await request('POST', '/table/comments/insert', ADMIN, { values: [{ id: 1, post: 1, text: 'nice' }, { id: 2, post: 2, text: 'meh' }] })).statusCode, 200)

  // ---- v2: safe changes, applied on start ----
  app = await restart(v2)
  request = caller(app)
  status = (await request('GET', '/migrations', ADMIN)).json()
  t.same(status.pending, [], 'nothing waits')
  const v2Names = status.migrations.slice(1).map((m: { name: string }) => m.name.replace(/^\d{5}_/, ''))
  for (const name of ['create_table_tags', 'rename_table_writers_to_authors', 'rename_column_posts_body_to_content', 'add_column_posts_views', 'add_column_posts_subtitle', 'add_index_posts_idx_posts_author']) {
    t.ok(v2Names.includes(name), `applied ${name}`)
  }
  t.notOk(v2Names.some((n: string) => /foreign_key/.test(n)), 'the renamed referenced table is not a new foreign key')
  t.match(status.migrations.map((m: { name: string }) => m.name), [INITIAL_MIGRATION, /^00001_/, /^00002_/], 'numbered in order')
  const posts = (await request('GET', '/table/posts/list?order=id', ADMIN)).json()
  t.same(posts.items.map((p: Record<string, unknown>) => [p.id, p.title, p.content, p.author, p.views, p.subtitle]), [
    [1, 'One', 'first', 1, 0, null], [2, 'Two', 'second', 2, 0, null], [3, null, 'untitled', 1, 0, null]
  ], 'renamed column keeps its values; new columns take their default')
  t.same((await request('GET', '/table/authors/list?order=id', ADMIN)).json().items, [{ id: 1, name: 'Ann' }, { id: 2, name: 'Bob' }], 'renamed table keeps its rows')
  const orphan = await request('POST', '/table/posts/insert', ADMIN, { values: { id: 9, title: 'x', author: 99 } })
  t.equal(orphan.statusCode, 400, 'the foreign key now references authors')
  t.equal((await request('POST', '/table/tags/insert', ADMIN, { values: { label: 'news' } })).statusCode, 200)
  t.ok((await indexNames(app.fastbase.db, dialect, 'posts')).includes('idx_posts_author'), 'the new index exists')

  // Restarting with the same config adds nothing.
  app = await restart(v2)
  request = caller(app)
  t.equal((await request('GET', '/migrations', ADMIN)).json().migrations.length, status.migrations.length, 'same config, no new migration')

  // ---- v3: destructive changes wait ----
  app = await restart(v3)
  request = caller(app)
  const db = app.fastbase.db
  status = (await request('GET', '/migrations', ADMIN)).json()
  const appliedBefore = status.migrations.length
  const pendingNames = status.pending.map((p: { name: string }) => p.name)
  t.ok(status.pending.length > 0 && status.pending.every((p: { destructive: boolean, reason?: string, sql: string }) => p.destructive && typeof p.reason === 'string' && p.sql.length > 0), 'each pending step is destructive, with its reason and SQL')
  t.ok(pendingNames.includes('drop_table_tags'), 'the dropped table waits')
  t.match(status.pending.find((p: { name: string }) => p.name === 'drop_table_tags'), { reason: /deletes its rows/ })
  t.ok(pendingNames.includes('add_unique_authors_name'), 'the new unique constraint waits')
  t.ok(pendingNames.some((n: string) => n === 'drop_column_posts_subtitle' || n === 'rebuild_table_posts'), 'the dropped column waits')
  t.ok(await hasColumn(db, 'posts', 'subtitle'), 'data untouched: the column is still there')
  t.ok(await db.schema.hasTable('tags'), 'data untouched: the table is still there')
  const listed = await request('GET', '/table/posts/list?order=id', ADMIN)
  t.equal(listed.statusCode, 200, 'the app serves while changes wait')

  // Who may see and apply.
  const login = async (password: string) => (await request('POST', '/admin/login', {}, { password })).json().token as string
  const editor = bearer(await login(PASSWORDS.editor))
  const viewer = bearer(await login(PASSWORDS.viewer))
  const signUp = await request('POST', '/table/users/auth/sign-up', {}, { username: 'ursula', email: 'ursula@example.com', password: 'correct horse', passwordConfirm: 'correct horse', name: 'Ursula' })
  const user = bearer(signUp.json().token)
  for (const [who, headers, get, post] of [
    ['anonymous', {}, 401, 401],
    ['a signed-in user', user, 403, 403],
    ['viewer', viewer, 200, 403],
    ['editor', editor, 200, 403],
    ['superadmin (raw Authorization)', { authorization: adminToken }, 200, undefined],
    ['X-Service-Token', { 'x-service-token': adminToken }, 401, 401]
  ] as const) {
    const got = await request('GET', '/migrations', headers)
    t.equal(got.statusCode, get, `GET /migrations as ${who}`)
    if (get !== 200) t.match(got.json(), { code: get, message: String }, 'the standard error body')
    if (post !== undefined) t.equal((await request('POST', '/migrations', headers, {})).statusCode, post, `POST /migrations as ${who}`)
  }
  t.ok(await hasColumn(db, 'posts', 'subtitle'), 'nobody without the right applied anything')

  // A dry run answers the plan and changes nothing.
  const dry = await request('POST', '/migrations', ADMIN, { dryRun: true })
  t.equal(dry.statusCode, 200)
  t.same(dry.json().applied, [])
  t.equal(dry.json().dryRun, true)
  t.same(dry.json().pending.map((p: { name: string }) => p.name), pendingNames, 'the same steps as GET lists')
  t.ok(await hasColumn(db, 'posts', 'subtitle'), 'a dry run changes nothing')
  t.equal((await request('POST', '/migrations', ADMIN, { dryRun: 'yes' })).statusCode, 400, 'a bad body is a 400')
  t.equal((await request('POST', '/migrations', ADMIN, { apply: true })).statusCode, 400, 'an unknown key is a 400')

  // An apply that does not name the destructive steps applies none of them: they stay pending.
  const unnamed = await request('POST', '/migrations', ADMIN, {})
  t.equal(unnamed.statusCode, 200)
  t.same(unnamed.json().applied, [], 'nothing destructive applied without allowDestructive')
  t.same(unnamed.json().pending.map((p: { name: string }) => p.name), pendingNames, 'all still pending')
  t.ok(await hasColumn(db, 'posts', 'subtitle'), 'the column is still there')
  t.ok(await db.schema.hasTable('tags'), 'the table is still there')
  t.equal((await request('POST', '/migrations', ADMIN, { allowDestructive: 'yes' })).statusCode, 400, 'allowDestructive is a boolean')
  const allow = { allowDestructive: true }

  // The database refuses one step (duplicate names break the new unique constraint): nothing is applied.
  t.equal((await request('POST', '/table/authors/insert', ADMIN, { values: { id: 3, name: 'Ann' } })).statusCode, 200)
  const refused = await request('POST', '/migrations', ADMIN, allow)
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 409, message: /^Migration \d{5}_\w+ failed, nothing was applied: / })
  t.ok(await hasColumn(db, 'posts', 'subtitle'), 'the steps before the refused one were rolled back')
  t.ok(await db.schema.hasTable('tags'))
  t.equal((await request('GET', '/migrations', ADMIN)).json().migrations.length, appliedBefore, 'nothing recorded')

  // Fixed data, then applied.
  t.equal((await request('POST', '/table/posts/update', ADMIN, { where: 'id = 3', setValues: { title: 'Three' } })).statusCode, 200)
  t.equal((await request('POST', '/table/authors/delete', ADMIN, { where: 'id = 3' })).statusCode, 200)
  const applied = await request('POST', '/migrations', ADMIN, allow)
  t.equal(applied.statusCode, 200)
  t.same(applied.json().pending, [])
  t.same(applied.json().applied.map((m: { name: string }) => m.name.replace(/^\d{5}_/, '')), pendingNames, 'every pending step, recorded')
  status = (await request('GET', '/migrations', ADMIN)).json()
  t.same(status.pending, [], 'nothing waits any more')
  t.equal(status.migrations.length, appliedBefore + pendingNames.length)
  t.notOk(await hasColumn(db, 'posts', 'subtitle'), 'the column is gone')
  t.notOk(await db.schema.hasTable('tags'), 'the table is gone')

  // The data survived, and so did the constraints and indexes (SQLite rebuilt posts and authors).
  const after = (await request('GET', '/table/posts/list?order=id', ADMIN)).json()
  t.same(after.items.map((p: Record<string, unknown>) => [p.id, p.title, p.content, p.author, p.views]), [[1, 'One', 'first', 1, 0], [2, 'Two', 'second', 2, 0], [3, 'Three', 'untitled', 1, 0]])
  t.same((await request('GET', '/table/comments/list?order=id', ADMIN)).json().items, [{ id: 1, post: 1, text: 'nice' }, { id: 2, post: 2, text: 'meh' }])
  t.same(await indexNames(db, dialect, 'posts'), ['idx_posts_author', 'idx_posts_title'], 'indexes of the rebuilt table')
  t.equal((await request('POST', '/table/posts/insert', ADMIN, { values: { id: 8, title: null } })).statusCode, 400, 'NOT NULL holds')
  t.equal((await request('POST', '/table/authors/insert', ADMIN, { values: { id: 4, name: 'Bob' } })).statusCode, 400, 'UNIQUE holds')
  t.equal((await request('POST', '/table/posts/insert', ADMIN, { values: { id: 8, title: 'x', author: 99 } })).statusCode, 400, 'the foreign key of posts holds')
  t.equal((await request('POST', '/table/comments/insert', ADMIN, { values: { id: 9, post: 99, text: 'x' } })).statusCode, 400, 'a foreign key into the rebuilt table holds')
  t.equal((await request('POST', '/table/posts/delete', ADMIN, { where: 'id = 1' })).statusCode, 200)
  t.same((await request('GET', '/table/comments/list?order=id', ADMIN)).json().items.map((c: { id: number }) => c.id), [2], 'ON DELETE CASCADE into the rebuilt table still cascades')

  // ---- v4: autoMigrate false makes safe changes wait too ----
  const v4 = withPostColumn(v3, integer('rating'), { autoMigrate: false })
  app = await restart(v4)
  request = caller(app)
  status = (await request('GET', '/migrations', ADMIN)).json()
  t.same(status.pending.map((p: { name: string, destructive: boolean }) => [p.name, p.destructive]), [['add_column_posts_rating', false]], 'a safe step, pending')
  t.notOk(await hasColumn(app.fastbase.db, 'posts', 'rating'))
  t.equal((await request('POST', '/migrations', ADMIN, {})).statusCode, 200)
  t.same((await request('GET', '/table/posts/list?order=id&select=id,rating', ADMIN)).json().items, [{ id: 2, rating: null }, { id: 3, rating: null }])
  app = await restart(v4)
  t.same((await caller(app)('GET', '/migrations', ADMIN)).json().pending, [], 'applied once, for good')
})

forEachDialect(t, 'a table dropped by hand is created again by setup-db', async (t, dialect) => {
  const app = await buildApp(t, v1, { dialect })
  const request = caller(app)
  await app.fastbase.db.schema.dropTable('comments')
  t.same((await request('GET', '/migrations', ADMIN)).json().pending.map((p: { name: string }) => p.name), ['create_table_comments'], 'listed as pending')
  const setup = await request('POST', '/setup-db', ADMIN, {})
  t.same(setup.json().created, ['comments'])
  t.equal((await request('POST', '/table/comments/insert', ADMIN, { values: { text: 'back' } })).statusCode, 200)
  await app.fastbase.db.schema.dropTable(MIGRATIONS_TABLE)
  t.same((await request('POST', '/setup-db', ADMIN, {})).json().created, [MIGRATIONS_TABLE], 'the bookkeeping table too')
})

t.test('a bad rule fails the start before any DDL', async (t) => {
  const databaseUrl = sharedDatabase(t, 'sqlite')
  const broken = structuredClone(v1)
  broken.tables[1].extensions = [{ name: 'rules', listRule: 'nosuchcolumn == 1' }]
  await t.rejects(buildApp(t, broken, { databaseUrl }), /nosuchcolumn/)
  const app = await buildApp(t, v2, { databaseUrl })
  t.same((await caller(app)('GET', '/migrations', ADMIN)).json().migrations.map((m: { name: string }) => m.name), [INITIAL_MIGRATION], 'the database was still empty: v2 is its initial schema')
})

// PostgreSQL only: several apps on one SQLite file in one process would block each other's thread
// (better-sqlite3 waits synchronously); test/lib/db/database.test.ts starts SQLite instances in separate processes.
t.test('postgres: instances starting together apply each migration once', { skip: dialects.includes('postgres') ? false : 'PostgreSQL not configured' }, async (t) => {
  const databaseUrl = sharedDatabase(t, 'postgres')
  const first = await buildApp(t, v1, { dialect: 'postgres', databaseUrl })
  await first.close()
  const next = withPostColumn(v1, integer('likes', { notNull: true, default: { l: 0 } }))
  const apps = await Promise.all([1, 2, 3].map(async () => await buildApp(t, next, { dialect: 'postgres', databaseUrl })))
  const names = await apps[0].fastbase.db(MIGRATIONS_TABLE).orderBy('id').pluck('name')
  t.same(names, [INITIAL_MIGRATION, '00001_add_column_posts_likes'])
  for (const app of apps) t.equal((await caller(app)('GET', '/table/posts/list', ADMIN)).statusCode, 200, 'every instance serves')
})
