// `fastbase copy` (decision D101): a scaffold-grown app (users with sessions, posts with files, search,
// booleans, JSON, dates, an integer key) copied SQLite -> PostgreSQL and back. On each copy the app
// started on the target answers the same requests with the same bytes, and old tokens still work.
// (JSON objects are written with their keys in the order PostgreSQL's jsonb keeps them: a project on
// PostgreSQL answers them in that order whether or not its rows were copied.)
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { fastbase, skip } from '../../cli-run.js'
import { buildApp, dialects, freshDir, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { connect } from '../../../lib/dialects/index.js'
import { copyDatabase } from '../../../lib/copy/database.js'
import { tablesToCopy } from '../../../lib/copy/copied-tables.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'copy-test-jwt-secret-0123456789abcdef',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [{ name: 'auth', jwtSecret: 'copy-test-users-secret-0123456789' }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: "role == null | role == 'user'", updateRule: null, deleteRule: null }]
    },
    {
      name: 'posts',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'body', type: 'text', sqlType: 'text' },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
        { name: 'meta', type: 'json', sqlType: 'json' },
        { name: 'rank', type: 'integer', sqlType: 'integer', notNull: true },
        { name: 'due', type: 'date', sqlType: 'timestamp' },
        { name: 'attachment', type: 'file', sqlType: 'text' }
      ],
      fullTextSearch: { fields: ['title', 'body'] },
      extensions: [{ name: 'rules', listRule: 'published == true | owner_id == auth.uid', viewRule: 'published == true | owner_id == auth.uid', createRule: 'auth.uid != null & owner_id == auth.uid', updateRule: 'owner_id == auth.uid', deleteRule: null }]
    },
    {
      name: 'entries',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
        { name: 'note', type: 'text', sqlType: 'text', notNull: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }
  ]
}

interface Grown { api: string, token: string, refresh: string, userId: string, posts: Array<{ id: string, attachment: string | null }> }

async function grow (app: FastifyInstance): Promise<Grown> {
  const api = `${await app.listen({ port: 0, host: '127.0.0.1' })}/api/v1`
  const json = async (path: string, body: unknown, token?: string): Promise<any> => {
    const res = await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) })
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return await res.json()
  }
  const ann = await json('/table/users/auth/sign-up', { username: 'ann', email: 'ann@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'Ann' })
  await json('/table/users/auth/sign-up', { username: 'bob', email: 'bob@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'Bob' })
  const posts: Grown['posts'] = []
  for (let rank = 1; rank <= 7; rank++) {
    const values = { owner_id: ann.record.id, title: rank % 2 === 0 ? `hello post ${rank}` : `other post ${rank}`, body: `body ${rank} ünïcode`, published: rank % 3 !== 0, meta: { a: [rank, { b: null }], s: 'x"y', z: rank }, rank, due: rank % 2 === 0 ? `2026-0${rank}-0${rank}T0${rank}:30:15.125Z` : null }
    const body = new FormData()
    if (rank <= 3) body.append('@filePayload', new Blob([`file of post ${rank}\n`.repeat(rank * 100)], { type: 'text/plain' }), `p${rank}.txt`)
    body.append('@jsonPayload', JSON.stringify({ values: rank <= 3 ? { ...values, attachment: '@filePayload.0' } : values, returning: '*' }))
    const res = await fetch(`${api}/table/posts/insert`, { method: 'POST', headers: { authorization: `Bearer ${ann.token}` }, body })
    if (res.status !== 200) throw new Error(`insert: ${res.status} ${await res.text()}`)
    posts.push(((await res.json()) as Grown['posts'])[0])
  }
  for (const note of ['one', 'two', 'three']) await json('/table/entries/insert', { values: { note } })
  return { api, token: ann.token, refresh: ann.refresh_token, userId: ann.record.id, posts }
}

/** The answers a client sees, as bytes (status and body of each request). */
async function answers (app: FastifyInstance, grown: Grown): Promise<string[]> {
  const auth = { authorization: `Bearer ${grown.token}` }
  const urls: Array<[string, Record<string, string>]> = [
    ['/api/v1/table/posts/list?order=rank', {}],
    ['/api/v1/table/posts/list?order=rank', auth],
    [`/api/v1/table/posts/list?order=rank&where=${encodeURIComponent("posts @@ 'hello'")}`, auth],
    [`/api/v1/table/posts/list?order=rank&where=${encodeURIComponent('published == false & rank > 3')}`, auth],
    [`/api/v1/table/users/view/${grown.userId}`, auth],
    ['/api/v1/table/entries/list?order=id', {}],
    ...grown.posts.filter((p) => p.attachment !== null).map((p): [string, Record<string, string>] => [`/api/v1/files/posts/${p.id}/${p.attachment}`, auth])
  ]
  const out: string[] = []
  for (const [url, headers] of urls) {
    const res = await app.inject({ method: 'GET', url, headers })
    out.push(`${url} ${res.statusCode} ${res.body}`)
  }
  return out
}

function project (t: Test, settings: DatabaseSettings = config): { dir: string, file: string } {
  const dir = freshDir(t, 'project-')
  const file = join(dir, 'fastbase.config.json')
  writeFileSync(file, JSON.stringify(settings))
  return { dir, file }
}

// s3rver ships no type declarations; require() gives it `any` without a project-wide shim.
const S3rver = createRequire(import.meta.url)('s3rver')

const noPostgres = dialects.includes('postgres') ? false : 'needs PostgreSQL (FASTBASE_TEST_PG_URL)'

t.test('SQLite -> PostgreSQL -> SQLite: the same answers, old tokens work, interrupted copies go on', { skip: skip || noPostgres }, async (t) => {
  const { dir, file } = project(t)
  const sqliteDir = freshDir(t, 'sqlite-')
  const sqliteUrl = `sqlite:${join(sqliteDir, 'fastbase.sqlite')}`
  const source = await buildApp(t, config, { databaseUrl: sqliteUrl, dataDir: sqliteDir })
  const grown = await grow(source)
  const expected = await answers(source, grown)
  t.ok(expected.every((a) => / 200 /.test(a)), 'every request answers on the source')
  t.match(expected[2], /hello post 2/, 'search finds rows')
  await source.close()

  // An interruption: the copy stops after two batches of posts; the same command goes on from there.
  const pgUrl = sharedDatabase(t, 'postgres')
  const from = connect(sqliteUrl, sqliteDir)
  const into = connect(pgUrl, sqliteDir)
  await into.prepare()
  let batches = 0
  const stopped = copyDatabase(from, into, config, tablesToCopy(config), { batch: 1, progress: { rows: (table, copied) => { if (table === 'posts' && copied > 0 && ++batches === 2) throw new Error('power cut') } } })
  await t.rejects(stopped, /power cut/)
  await from.close()
  await into.close()

  const env = { DATABASE_URL: sqliteUrl, FASTBASE_DATA_DIR: sqliteDir }
  const pgData = freshDir(t, 'pg-')
  const copied = await fastbase(['copy', file, '--to', pgUrl, '--files-to', join(pgData, 'files')], { cwd: dir, env })
  t.equal(copied.code, 0, `${copied.stdout}\n${copied.stderr}`)
  t.match(copied.stdout, /posts: 7 rows, checksum [0-9a-f]{16} \(went on after row 2\)/, 'the rerun went on after the rows already copied')
  t.match(copied.stdout, /_fastbase_sessions: 2 rows/, 'sessions are copied')
  t.match(copied.stdout, /_fastbase_mfa_factors: 0 rows/, 'second factors are copied with their users')
  t.match(copied.stdout, new RegExp(`copied and verified ${tablesToCopy(config).length} tables`), 'every table copy copies is verified')
  t.match(copied.stdout, /copied 3 files \(\d+ bytes\)/)
  t.equal(copied.stderr.includes('\r'), false, 'no progress lines when stderr is not a terminal')

  const again = await fastbase(['copy', file, '--to', pgUrl], { cwd: dir, env })
  t.equal(again.code, 1, 'a second copy into the same database is refused')
  t.match(again.stderr, /the target database is not empty \(it has the table _fastbase_migrations\)/)

  const onPg = await buildApp(t, config, { databaseUrl: pgUrl, dataDir: pgData })
  t.same(await answers(onPg, grown), expected, 'PostgreSQL answers the same bytes')
  const refreshed = await onPg.inject({ method: 'POST', url: '/api/v1/table/users/auth/refresh-token', payload: { refresh_token: grown.refresh } })
  t.equal(refreshed.statusCode, 200, 'the refresh token of a session made on SQLite works')
  const next = await onPg.inject({ method: 'POST', url: '/api/v1/table/entries/insert', payload: { values: { note: 'four' }, returning: '*' } })
  t.equal(next.statusCode, 200, next.body)
  t.equal(next.json()[0].id, 4, 'the identity sequence moved past the copied keys')
  await onPg.close()

  // And back: PostgreSQL -> a new SQLite file.
  const backDir = freshDir(t, 'back-')
  const backUrl = `sqlite:${join(backDir, 'fastbase.sqlite')}`
  const back = await fastbase(['copy', file, '--to', backUrl, '--files-to', join(backDir, 'files')], { cwd: dir, env: { DATABASE_URL: pgUrl, FASTBASE_DATA_DIR: pgData } })
  t.equal(back.code, 0, `${back.stdout}\n${back.stderr}`)
  t.match(back.stdout, /entries: 4 rows/, 'with the row written on PostgreSQL')
  const onSqlite = await buildApp(t, config, { databaseUrl: backUrl, dataDir: backDir })
  const backAnswers = await answers(onSqlite, grown)
  t.same(backAnswers.slice(0, 5), expected.slice(0, 5), 'SQLite answers the same bytes again')
  t.match(backAnswers[5], /"note":"four"/, 'with the row written on PostgreSQL')
  t.same(backAnswers.slice(6), expected.slice(6), 'and the same files')
  const after = await onSqlite.inject({ method: 'POST', url: '/api/v1/table/entries/insert', payload: { values: { note: 'five' }, returning: '*' } })
  t.equal(after.json()[0].id, 5)
})

t.test('copy refuses what it cannot do, with a clear message', { skip }, async (t) => {
  const { dir, file } = project(t)
  const data = freshDir(t, 'data-')
  const env = { DATABASE_URL: `sqlite:${join(data, 'fastbase.sqlite')}`, FASTBASE_DATA_DIR: data }
  const none = await fastbase(['copy', file], { cwd: dir, env })
  t.equal(none.code, 2)
  t.match(none.stderr, /--to <database url> \(or --to-env-file <the target's \.env>\) is required/)
  const same = await fastbase(['copy', file, '--to', env.DATABASE_URL], { cwd: dir, env })
  t.equal(same.code, 2)
  t.match(same.stderr, /--to names the project's own database/)
  const badBatch = await fastbase(['copy', file, '--to', 'sqlite:/tmp/x.sqlite', '--batch', '0'], { cwd: dir, env })
  t.equal(badBatch.code, 2)
  const badS3 = await fastbase(['copy', file, '--to', 'sqlite:/tmp/x.sqlite', '--files-to', 's3://bucket?secret=1'], { cwd: dir, env })
  t.equal(badS3.code, 2)
  t.match(badS3.stderr, /unknown parameter secret/)
})

t.test('files: local -> S3 -> local, with the rows (SQLite to SQLite)', { skip }, async (t) => {
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: freshDir(t, 's3rver-'), configureBuckets: [{ name: 'copy-bucket' }] })
  const { port } = await server.run() as { port: number }
  t.teardown(() => server.close())
  const endpoint = `http://127.0.0.1:${port}`
  const onS3: DatabaseSettings = { ...config, storage: { driver: 's3', bucket: 'copy-bucket', prefix: 'app', endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }

  const local = project(t)
  const sourceDir = freshDir(t, 'local-')
  const sourceUrl = `sqlite:${join(sourceDir, 'fastbase.sqlite')}`
  const source = await buildApp(t, config, { databaseUrl: sourceUrl, dataDir: sourceDir })
  const grown = await grow(source)
  const expected = await answers(source, grown)
  await source.close()

  const s3Dir = freshDir(t, 's3-')
  const s3Url = `sqlite:${join(s3Dir, 'fastbase.sqlite')}`
  const env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' }
  const up = await fastbase(['copy', local.file, '--to', s3Url, '--files-to', `s3://copy-bucket/app?endpoint=${encodeURIComponent(endpoint)}&forcePathStyle=true`], { cwd: local.dir, env: { ...env, DATABASE_URL: sourceUrl, FASTBASE_DATA_DIR: sourceDir } })
  t.equal(up.code, 0, `${up.stdout}\n${up.stderr}`)
  t.match(up.stdout, /copied 3 files \(9000 bytes\)/)
  const again = await fastbase(['copy', local.file, '--to', `sqlite:${join(freshDir(t, 'again-'), 'fastbase.sqlite')}`, '--files-to', `s3://copy-bucket/app?endpoint=${encodeURIComponent(endpoint)}&forcePathStyle=true`], { cwd: local.dir, env: { ...env, DATABASE_URL: sourceUrl, FASTBASE_DATA_DIR: sourceDir } })
  t.match(again.stdout, /copied 0 files \(0 bytes\), 3 already there/, 'files already in the bucket are not sent again')
  const served = await buildApp(t, onS3, { databaseUrl: s3Url, dataDir: s3Dir })
  t.same(await answers(served, grown), expected, 'the app on the bucket serves the same files')
  await served.close()

  const remote = project(t, onS3)
  const backDir = freshDir(t, 'back-')
  const backUrl = `sqlite:${join(backDir, 'fastbase.sqlite')}`
  const down = await fastbase(['copy', remote.file, '--to', backUrl, '--files-to', join(backDir, 'files')], { cwd: remote.dir, env: { DATABASE_URL: s3Url, FASTBASE_DATA_DIR: s3Dir } })
  t.equal(down.code, 0, `${down.stdout}\n${down.stderr}`)
  t.match(down.stdout, /copied 3 files/)
  const back = await buildApp(t, config, { databaseUrl: backUrl, dataDir: backDir })
  t.same(await answers(back, grown), expected, 'and back in a folder')
})

t.test("--to-env-file: the target's own .env names its database, and its storage receives the files when it is another", { skip }, async (t) => {
  const local = project(t)
  const sourceDir = freshDir(t, 'env-source-')
  const sourceUrl = `sqlite:${join(sourceDir, 'fastbase.sqlite')}`
  const source = await buildApp(t, config, { databaseUrl: sourceUrl, dataDir: sourceDir })
  const grown = await grow(source)
  const expected = await answers(source, grown)
  await source.close()
  // The environment wins over both files (as for the server), so each side's settings are in its file.
  writeFileSync(join(local.dir, 'source.env'), `DATABASE_URL=${sourceUrl}\nFASTBASE_DATA_DIR=${sourceDir}\n`)

  const targetDir = freshDir(t, 'env-target-')
  const targetUrl = `sqlite:${join(targetDir, 'fastbase.sqlite')}`
  writeFileSync(join(local.dir, 'target.env'), `DATABASE_URL=${targetUrl}\nFASTBASE_DATA_DIR=${targetDir}\n`)
  const moved = await fastbase(['copy', local.file, '--env-file', 'source.env', '--to-env-file', 'target.env'], { cwd: local.dir })
  t.equal(moved.code, 0, `${moved.stdout}\n${moved.stderr}`)
  t.match(moved.stdout, /copied and verified \d+ tables/)
  t.match(moved.stdout, /copied 3 files \(9000 bytes\)/, 'the target keeps its files in its own data folder: they are copied there')
  const served = await buildApp(t, config, { databaseUrl: targetUrl, dataDir: targetDir })
  t.same(await answers(served, grown), expected, 'the app started with the target\'s settings answers the same bytes, files included')
  await served.close()

  const sameFilesDir = freshDir(t, 'env-same-')
  writeFileSync(join(local.dir, 'same.env'), `DATABASE_URL=sqlite:${join(sameFilesDir, 'fastbase.sqlite')}\nFASTBASE_DATA_DIR=${sourceDir}\n`)
  const same = await fastbase(['copy', local.file, '--env-file', 'source.env', '--to-env-file', 'same.env'], { cwd: local.dir })
  t.equal(same.code, 0, `${same.stdout}\n${same.stderr}`)
  t.match(same.stdout, /files: the target's storage is the source's .*nothing to copy/, 'one storage for both: no file is copied')

  const none = await fastbase(['copy', local.file, '--env-file', 'source.env'], { cwd: local.dir })
  t.equal(none.code, 2, 'neither --to nor --to-env-file: a usage error')
  t.match(none.stderr, /--to <database url> \(or --to-env-file/)
})
