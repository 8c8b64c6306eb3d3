// No drift traps (decision D98), on both dialects: a server started with an older config than the one
// the database has since applied plans nothing (so the panel's "Apply pending" cannot drop what the
// newer config made), warns in /health/ready and the migrations answer, and is refused an apply; a
// restart with the older config applies nothing; `fastbase migrate --apply --allow-older-config` is
// the deliberate way back. A table that exists with other columns than the config names stops the
// start naming the differences instead of being adopted.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { adminToken, buildApp, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { fastbase, skip } from '../../cli-run.js'
import { connect, schemaDialect } from '../../../lib/dialects/index.js'
import { migrate } from '../../../lib/db/migrations.js'
import { internalTablesFor } from '../../../lib/internal/internal-tables.js'
import { heartbeat } from '../../../lib/backup/liveness.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'

const id = { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true } as const
const text = (name: string) => ({ name, type: 'text' as const, sqlType: 'text' as const })
const table = (name: string, ...fields: string[]): TableData => ({ name, fields: [id, ...fields.map(text)], extensions: [{ name: 'rules', listRule: 'true', createRule: 'true' }] })
const configOf = (...tables: TableData[]): DatabaseSettings => ({ jwtSecret: 'drift-secret', appUrl: 'http://127.0.0.1', rateLimit: false, tables })

const older = configOf(table('posts', 'title'))
const newer = configOf(table('posts', 'title'), table('comments', 'body'))
const admin = { authorization: `Bearer ${adminToken}` }

forEachDialect(t, 'a server with an older config never plans dropping what a newer one made', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const running = await buildApp(t, older, { dialect, databaseUrl })
  t.notOk((await running.fastbase.schema.status()).outdated, 'the config it started with is the latest')

  // A newer config is applied while it runs (a deploy, or `fastbase migrate --apply`) and gets rows.
  const deployed = await buildApp(t, newer, { dialect, databaseUrl })
  t.equal((await deployed.inject({ method: 'POST', url: '/api/v1/table/comments/insert', payload: { values: { body: 'keep me' } } })).statusCode, 200)

  const status = await running.inject({ url: '/api/v1/migrations', headers: admin })
  t.equal(status.statusCode, 200)
  t.same(status.json().pending, [], 'no drop_table_comments planned')
  t.match(status.json().outdated, { newerAppliedAt: /^\d{4}-\d\d-\d\dT/ }, 'the answer says the config is older')
  const apply = await running.inject({ method: 'POST', url: '/api/v1/migrations', headers: admin, payload: { allowDestructive: true } })
  t.equal(apply.statusCode, 409, 'an apply with the destructive box ticked is refused')
  t.equal(apply.headers['fastbase-error-code'], 'FB_ERR_CONFIG_OUTDATED')
  t.match(apply.json().message, /older than the one the database last applied.*Restart this server with the new config/)
  const dryRun = await running.inject({ method: 'POST', url: '/api/v1/migrations', headers: admin, payload: { dryRun: true } })
  t.same(dryRun.json().pending, [], 'a preview plans nothing either')
  const ready = await running.inject({ url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 200, 'it keeps serving until replaced')
  t.equal(ready.json().configOutdated, true, '/health/ready says so')
  t.equal((await deployed.inject({ url: '/api/v1/health/ready' })).json().configOutdated, false, 'the newer one is not outdated')

  // Restarted with the older config by mistake (an old instance of a rolling deploy): nothing applied.
  const restarted = await buildApp(t, older, { dialect, databaseUrl })
  t.match((await restarted.fastbase.schema.status()).outdated, { newerAppliedAt: String })
  const rows = await deployed.inject({ url: '/api/v1/table/comments/list' })
  t.match(rows.json().items, [{ body: 'keep me' }], 'the newer config\'s table and rows are there')

  // What such a start logs (the server's log is off in tests: the same call with a log of its own).
  const knex = deployed.fastbase.db
  const warnings: string[] = []
  const database = { knex, ddl: schemaDialect(dialect), dialect, log: { info: () => {}, warn: (_details: object, message: string) => { warnings.push(message) } } }
  const tables = [...internalTablesFor(older, dialect), ...older.tables]
  const start = await migrate(database, tables, { mode: 'start' })
  t.same([start.applied, start.pending], [[], []], 'a start with the older config applies and plans nothing')
  t.match(warnings, [/^database schema: this config is older than the one the database last applied .*Restart this server with the new config/], 'and warns')

  // Going back on purpose: the explicit apply that says so.
  await t.rejects(migrate(database, tables, { mode: 'apply', allowDestructive: true }), { code: 'FB_ERR_CONFIG_OUTDATED', message: /older than the one the database last applied/ })
  const back = await migrate(database, tables, { mode: 'apply', allowDestructive: true, allowOlderConfig: true })
  t.match(back.applied.map((m) => m.name), [/drop_table_comments$/], 'the roll-back drops what the newer config made')
  t.notOk((await running.fastbase.schema.status()).outdated, 'and the older config is the latest again')
  t.ok((await deployed.fastbase.schema.status()).outdated, 'so the newer one now counts as older')
})

forEachDialect(t, 'a config edited further (never applied) still plans as before', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  await buildApp(t, newer, { dialect, databaseUrl })
  const edited = await buildApp(t, configOf(table('posts', 'title', 'summary')), { dialect, databaseUrl })
  const status = await edited.fastbase.schema.status()
  t.notOk(status.outdated)
  t.match(status.pending, [{ name: 'drop_table_comments', destructive: true }], 'a new config that leaves a table out still plans its drop (for an explicit apply)')
})

forEachDialect(t, 'a table of another shape stops the start, naming the differences', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t)
  const connection = connect(databaseUrl, dataDir)
  t.teardown(connection.close)
  await connection.prepare()
  await connection.knex.raw('CREATE TABLE "posts" ("id" integer PRIMARY KEY, "text" text, "author" text)')
  const config = configOf(table('posts', 'title', 'author'))
  await t.rejects(buildApp(t, config, { dialect, databaseUrl, dataDir }), {
    errorCode: 'FB_ERR_SCHEMA_MISMATCH',
    message: /posts \(lacks title; has text, which the config does not name\)/
  })
  t.same(Object.keys(await connection.knex('posts').columnInfo()).sort(), ['author', 'id', 'text'], 'the table is left as it was')

  // The same shape is taken as it is, as before.
  await connection.knex.raw('ALTER TABLE "posts" RENAME COLUMN "text" TO "title"')
  const app = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', payload: { values: { id: 1, title: 'adopted', author: 'a' } } })).statusCode, 200)
})

t.test('fastbase migrate: an older config is told so; an apply names the running servers', { skip }, (t) => forEachDialect(t, 'cli', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dir = freshDir(t)
  const env = { DATABASE_URL: databaseUrl }
  const olderFile = join(dir, 'older.json')
  const newerFile = join(dir, 'newer.json')
  writeFileSync(olderFile, JSON.stringify(older))
  writeFileSync(newerFile, JSON.stringify(newer))
  t.equal((await fastbase(['migrate', olderFile, '--apply'], { env })).code, 0)
  // A server runs on the database (its heartbeat, as every instance keeps one).
  const app = await buildApp(t, older, { dialect, databaseUrl })
  const beat = heartbeat(app.fastbase.db, { warn: () => {} })
  await beat.start()
  t.teardown(beat.stop)

  const applied = await fastbase(['migrate', newerFile, '--apply'], { env })
  t.equal(applied.code, 0, applied.stderr)
  t.match(applied.stdout, /applied 1 migration/)
  t.match(applied.stderr, /fastbase servers? runs? on this database with the config (it|they) started with: restart (it|them) to serve this one\.\n {2}\S+ pid \d+ \(seen \d+ s ago\)/)

  const plan = await fastbase(['migrate', olderFile], { env })
  t.equal(plan.code, 1)
  t.match(plan.stderr, /this config is older than the one the database last applied .*--allow-older-config/)
  t.notMatch(plan.stdout, /drop_table_comments/)
  const refused = await fastbase(['migrate', olderFile, '--apply', '--allow-destructive'], { env })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /older than the one the database last applied/)
  t.equal((await fastbase(['migrate', olderFile, '--allow-older-config'], { env })).code, 2, '--allow-older-config goes with --apply')
  const back = await fastbase(['migrate', olderFile, '--apply', '--allow-destructive', '--allow-older-config'], { env })
  t.equal(back.code, 0, back.stderr)
  t.match(back.stdout, /drop_table_comments/)
}))
