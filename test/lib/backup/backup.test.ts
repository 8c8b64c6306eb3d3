// Backups and restores on both dialects (lib/backup, routes/backups.ts): a round trip gives the same
// rows and files; a backup under steady writes holds every write acknowledged before it and no half
// of an action; a restore is refused while an instance runs, and for a bad archive with nothing
// changed; the endpoints are for superadmins only; a fleet's schedule runs once per slot.
import t, { type Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { create } from 'tar'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { restoreBackup } from '../../../lib/backup/restore.js'
import { liveInstances } from '../../../lib/backup/liveness.js'
import { readArchive } from '../../../lib/backup/archive.js'
import { claimSlot } from '../../../lib/backup/jobs.js'
import { localStorageRoot } from '../../../lib/files/storage/index.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import type { FastbaseError } from '../../../lib/errors.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'backup-test-jwt-secret-0123456789abcdef',
  rateLimit: false,
  admin: { viewerPassword: 'viewer-password-value' },
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [{ name: 'auth', jwtSecret: 'users-table-secret-0123456789' }, { name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    },
    {
      name: 'docs',
      autoSetUid: true,
      fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }, { name: 'attachment', type: 'file', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    },
    {
      name: 'entries',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
        { name: 'batch', type: 'integer', sqlType: 'integer', notNull: true },
        { name: 'part', type: 'integer', sqlType: 'integer', notNull: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }
  ],
  actions: [{
    // One action, two rows: a restored database has both or neither.
    name: 'pair',
    params: { batch: 'integer' },
    steps: [
      { type: 'INSERT', table: 'entries', expr: { batch: 'params.batch', part: '1' } },
      { type: 'INSERT', table: 'entries', expr: { batch: 'params.batch', part: '2' } }
    ]
  }]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  return `${address}/api/v1`
}

async function upload (api: string, title: string, content: string): Promise<{ id: string, attachment: string }> {
  const body = new FormData()
  body.append('@filePayload', new Blob([content], { type: 'text/plain' }), `${title}.txt`)
  body.append('@jsonPayload', JSON.stringify({ values: { title, attachment: '@filePayload.0' }, returning: '*' }))
  const res = await fetch(`${api}/table/docs/insert`, { method: 'POST', body })
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`)
  return ((await res.json()) as Array<{ id: string, attachment: string }>)[0]
}

async function rows (app: FastifyInstance, table: string): Promise<unknown[]> {
  return await app.fastbase.db(table).select('*').orderBy('id')
}

/** The archive of backup `name`, as the download endpoint serves it, in a file. */
async function download (t: Test, app: FastifyInstance, name: string): Promise<string> {
  const res = await app.inject({ method: 'GET', url: `/api/v1/backups/${name}`, headers: ADMIN, payloadAsStream: true })
  t.equal(res.statusCode, 200, 'the archive downloads')
  t.equal(res.headers['content-type'], 'application/gzip')
  const file = join(freshDir(t, 'archive-'), `${name}.tar.gz`)
  await pipeline(res.stream(), createWriteStream(file))
  t.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), res.headers['x-content-sha256'], 'the bytes are the recorded ones')
  return file
}

function filesRootOf (app: FastifyInstance): string {
  return localStorageRoot(undefined, app.fastbase.options.dataDir)!
}

async function listFiles (root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${prefix}${entry.name}/`)
      else out[`${prefix}${entry.name}`] = readFileSync(join(dir, entry.name), 'utf8')
    }
  }
  await walk(root, '')
  return out
}

forEachDialect(t, 'round trip: the same rows and files after a restore', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  let app = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  const api = await listen(t, app)
  const kept = await upload(api, 'kept', 'kept file body')
  const removedLater = await upload(api, 'removed', 'removed later')
  for (let batch = 1; batch <= 5; batch++) t.equal((await app.inject({ method: 'POST', url: '/api/v1/action/pair', payload: { batch } })).statusCode, 200)
  const before = { docs: await rows(app, 'docs'), entries: await rows(app, 'entries'), files: await listFiles(filesRootOf(app)) }
  t.equal(Object.keys(before.files).filter((f) => !f.endsWith('.meta.json')).length, 2, 'two files stored')

  const created = await app.inject({ method: 'POST', url: '/api/v1/backups', headers: ADMIN })
  t.equal(created.statusCode, 200, created.body)
  const record = created.json()
  t.match(record, { dialect, files: { included: true, count: 2, bytes: 'kept file body'.length + 'removed later'.length }, schema: { migrations: 1, last: '00000_initial_schema' }, tables: { docs: 2, entries: 10 } })
  const listed = (await app.inject({ method: 'GET', url: '/api/v1/backups', headers: ADMIN })).json()
  t.same(listed.backups.map((b: { name: string }) => b.name), [record.name], 'listed once stored')
  t.match(listed, { keep: 7, schedule: null, nextScheduled: null })
  t.ok(Date.parse(listed.lastSuccess) > Date.now() - 60_000, 'the last success is recorded')
  const archive = await download(t, app, record.name)

  // After the backup: a new row and file, one row and its file deleted, one row changed.
  await upload(api, 'after', 'written after the backup')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/docs/delete', payload: { where: `id == '${removedLater.id}'` } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/docs/update', payload: { where: `id == '${kept.id}'`, setValues: { title: 'changed' } } })).statusCode, 200)
  t.notSame(await rows(app, 'docs'), before.docs)
  await app.close()

  const report = await restoreBackup(archive, { databaseUrl, dataDir, config, filesRoot: localStorageRoot(undefined, dataDir) })
  t.equal(report.manifest.name, record.name)
  t.ok(report.databaseKeptAt, 'the replaced database is kept')
  t.ok(report.files.restored && report.files.keptAt !== undefined && existsSync(report.files.keptAt), 'the replaced files folder is kept')

  app = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  t.same(await rows(app, 'docs'), before.docs, 'docs as they were')
  t.same(await rows(app, 'entries'), before.entries, 'entries as they were')
  t.same(await listFiles(filesRootOf(app)), before.files, 'files as they were')
  const file = await app.inject({ method: 'GET', url: `/api/v1/files/docs/${removedLater.id}/${removedLater.attachment}` })
  t.equal(file.body, 'removed later', 'a file deleted after the backup is served again')
})

forEachDialect(t, 'under steady writes: every write acknowledged before the backup, no half action', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  const app = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  let batch = 0
  const acknowledged = new Set<number>()
  let stop = false
  const writer = async (): Promise<void> => {
    while (!stop) {
      const mine = ++batch
      const res = await app.inject({ method: 'POST', url: '/api/v1/action/pair', payload: { batch: mine } })
      if (res.statusCode !== 200) throw new Error(`write ${mine}: ${res.statusCode} ${res.body}`)
      acknowledged.add(mine)
    }
  }
  const writers = [writer(), writer(), writer()]
  while (acknowledged.size < 30) await new Promise((resolve) => setTimeout(resolve, 5))
  const before = new Set(acknowledged)
  const record = await app.fastbase.backups.create()
  const during = acknowledged.size - before.size
  stop = true
  await Promise.all(writers)
  t.ok(during > 0, `writes went on during the backup (${during})`)
  const archive = await download(t, app, record.name)

  // In place (a PostgreSQL dump recreates its own schema, so not beside the source in one database).
  await app.close()
  await restoreBackup(archive, { databaseUrl, dataDir, config, filesRoot: localStorageRoot(undefined, dataDir) })
  const restored = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  const entries = await restored.fastbase.db('entries').select('batch', 'part') as Array<{ batch: number, part: number }>
  const parts = new Map<number, number[]>()
  for (const e of entries) parts.set(Number(e.batch), [...(parts.get(Number(e.batch)) ?? []), Number(e.part)].sort())
  t.same([...before].filter((b) => !parts.has(b)), [], 'every write acknowledged before the backup started is there')
  t.same([...parts].filter(([, p]) => p.join() !== '1,2').map(([b]) => b), [], 'no action is there by half')
  t.equal(entries.length, record.tables.entries, 'the manifest counts the snapshot\'s rows')
})

forEachDialect(t, 'restore refused while an instance runs, and for bad archives: nothing changes', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  const app = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/action/pair', payload: { batch: 1 } })).statusCode, 200)
  const record = await app.fastbase.backups.create()
  const archive = await download(t, app, record.name)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/action/pair', payload: { batch: 2 } })).statusCode, 200)
  const target = { databaseUrl, dataDir, config, filesRoot: localStorageRoot(undefined, dataDir) }
  const refusal = async (file: string, code: string, message: RegExp, what: string): Promise<void> => {
    const error = await restoreBackup(file, target).then(() => undefined, (err: FastbaseError) => err)
    t.match(error, { code, message }, what)
    t.equal((await rows(app, 'entries')).length, 4, `${what}: the database is untouched`)
  }

  await refusal(archive, 'FB_ERR_RESTORE_REFUSED', /1 fastbase instance is running on this database: .* pid \d+ \(seen \d+ s ago\)/, 'refused while running')

  const dir = freshDir(t, 'bad-')
  const garbage = join(dir, 'garbage.tar.gz')
  writeFileSync(garbage, randomBytes(2000))
  await refusal(garbage, 'FB_ERR_BAD_ARCHIVE', /not a readable gzipped tar archive/, 'not an archive')
  const truncated = join(dir, 'truncated.tar.gz')
  writeFileSync(truncated, readFileSync(archive).subarray(0, 200))
  await refusal(truncated, 'FB_ERR_BAD_ARCHIVE', /Not a usable fastbase backup/, 'a cut-short archive')
  await refusal(join(dir, 'missing.tar.gz'), 'FB_ERR_BAD_ARCHIVE', /does not exist/, 'no such file')

  // A tampered entry: same manifest, other bytes.
  const unpacked = join(dir, 'unpacked')
  await mkdir(unpacked)
  await readArchive(archive, unpacked)
  const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'))
  const dbEntry = manifest.database.entry as string
  const original = readFileSync(join(unpacked, dbEntry))
  const bytes = Buffer.from(original)
  bytes[bytes.length - 1] ^= 0xff
  await writeFile(join(unpacked, dbEntry), bytes)
  const tampered = join(dir, 'tampered.tar.gz')
  await create({ gzip: true, file: tampered, cwd: unpacked }, await readdir(unpacked))
  await refusal(tampered, 'FB_ERR_BAD_ARCHIVE', new RegExp(`${dbEntry} does not match its checksum`), 'a damaged entry')

  // A manifest of another dialect.
  await writeFile(join(unpacked, dbEntry), original)
  const other = dialect === 'sqlite' ? 'postgres' : 'sqlite'
  await writeFile(join(unpacked, 'manifest.json'), JSON.stringify({ ...manifest, dialect: other }))
  const otherDialect = join(dir, 'other.tar.gz')
  await create({ gzip: true, file: otherDialect, cwd: unpacked }, await readdir(unpacked))
  await refusal(otherDialect, 'FB_ERR_RESTORE_REFUSED', /the archive holds a .* database and DATABASE_URL names a/, 'another dialect')

  await writeFile(join(unpacked, 'manifest.json'), JSON.stringify({ ...manifest, version: 99 }))
  const newer = join(dir, 'newer.tar.gz')
  await create({ gzip: true, file: newer, cwd: unpacked }, await readdir(unpacked))
  await refusal(newer, 'FB_ERR_BAD_ARCHIVE', /archive format 99 by a newer fastbase/, 'a newer format')

  await rm(join(unpacked, 'manifest.json'))
  const noManifest = join(dir, 'no-manifest.tar.gz')
  await create({ gzip: true, file: noManifest, cwd: unpacked }, await readdir(unpacked))
  await refusal(noManifest, 'FB_ERR_BAD_ARCHIVE', /has no manifest.json/, 'no manifest')
})

forEachDialect(t, 'a start that fails leaves no liveness row: restore and migrate --apply see no running server', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  const first = await buildApp(t, config, { dialect, databaseUrl, dataDir })
  const record = await first.fastbase.backups.create()
  const archive = await download(t, first, record.name)
  await first.close()
  const target = { databaseUrl, dataDir, config, filesRoot: localStorageRoot(undefined, dataDir) }

  // A plugin after fastbase's fails to load, and nobody closes the app (fastify-cli exits there).
  let failed: FastifyInstance | undefined
  await t.rejects(buildApp(t, config, { dialect, databaseUrl, dataDir, setup: (app) => { failed = app; void app.register(async () => { throw new Error('a later plugin fails') }) } }), /a later plugin fails/)
  t.same(await liveInstances(failed!.fastbase.db), [], 'no row: migrate --apply names no server')
  t.equal((await restoreBackup(archive, target)).manifest.name, record.name, 'restore right after is not refused')
  await failed!.close()

  // An onReady hook after fastbase's fails: the row it wrote is removed when the app closes.
  let late: FastifyInstance | undefined
  await t.rejects(buildApp(t, config, { dialect, databaseUrl, dataDir, setup: (app) => { late = app; void app.register(async (scope) => { scope.addHook('onReady', async () => { throw new Error('a later onReady fails') }) }) } }), /a later onReady fails/)
  t.equal((await liveInstances(late!.fastbase.db)).length, 1, 'fastbase was ready: its row is there until the app closes')
  await late!.close()
  t.equal((await restoreBackup(archive, target)).manifest.name, record.name, 'closed after the failed start: restore is not refused')
})

forEachDialect(t, 'the endpoints are for superadmins only', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const record = await app.fastbase.backups.create()
  const user = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'u1', email: 'u1@example.com', password: 'password-123', passwordConfirm: 'password-123', name: 'U' } })
  t.equal(user.statusCode, 200, user.body)
  const viewer = await app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { password: 'viewer-password-value' } })
  t.equal(viewer.statusCode, 200, viewer.body)
  const callers: Array<[string, Record<string, string>, number]> = [
    ['anonymous', {}, 401],
    ['a user', { authorization: `Bearer ${user.json().token as string}` }, 403],
    ['an admin who is not a superadmin', { authorization: `Bearer ${viewer.json().token as string}` }, 403]
  ]
  const endpoints: Array<[string, string]> = [['GET', '/backups'], ['POST', '/backups'], ['GET', `/backups/${record.name}`], ['DELETE', `/backups/${record.name}`]]
  for (const [who, headers, status] of callers) {
    for (const [method, url] of endpoints) {
      const res = await app.inject({ method: method as 'GET', url: `/api/v1${url}`, headers })
      t.equal(res.statusCode, status, `${who}: ${method} ${url}`)
      t.notMatch(res.body, record.name, `${who}: nothing of the backup in the answer`)
    }
  }
  t.equal((await app.fastbase.backups.list()).length, 1, 'nothing was made or deleted by them')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/backups/not-a-backup', headers: ADMIN })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/backups/fastbase-20260101T000000000Z-000000', headers: ADMIN })).statusCode, 404)
  const deleted = await app.inject({ method: 'DELETE', url: `/api/v1/backups/${record.name}`, headers: ADMIN })
  t.same(deleted.json(), { deleted: record.name })
  t.same((await app.inject({ method: 'GET', url: '/api/v1/backups', headers: ADMIN })).json().backups, [])
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/backups/${record.name}`, headers: ADMIN })).statusCode, 404, 'gone')
})

forEachDialect(t, 'retention, and one run per slot across instances', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  t.ok(await claimSlotTwice(t, dialect, databaseUrl), 'one claim per slot')

  const kept = await buildApp(t, { ...config, backups: { keep: 2, files: false } }, { dialect })
  const made = []
  for (let i = 0; i < 3; i++) made.push((await kept.fastbase.backups.create()).name)
  t.same((await kept.fastbase.backups.list()).map((b) => b.name), [made[2], made[1]], 'the newest backups.keep are kept')
  await kept.close()

  // Two instances on one database, one schedule: each second's run is claimed by one of them.
  const backupsRoot = join(freshDir(t, 'shared-backups-'), 'backups')
  const scheduled: DatabaseSettings = { ...config, backups: { schedule: '* * * * * *', keep: 100, storage: { driver: 'local', root: backupsRoot }, files: false } }
  const first = await buildApp(t, scheduled, { dialect, databaseUrl })
  const second = await buildApp(t, scheduled, { dialect, databaseUrl })
  const started = Date.now()
  await new Promise((resolve) => setTimeout(resolve, 4500))
  await first.close()
  await second.close()
  const seconds = Math.ceil((Date.now() - started) / 1000)
  const names = (await readdir(backupsRoot)).filter((n) => n.endsWith('.json') && !n.endsWith('.meta.json'))
  t.ok(names.length >= 1, `the schedule ran (${names.length} backups)`)
  t.ok(names.length <= seconds + 1, `at most one backup per scheduled second (${names.length} in ${seconds} s, two instances)`)
})

async function claimSlotTwice (t: Test, dialect: string, databaseUrl: string): Promise<boolean> {
  const app = await buildApp(t, config, { dialect: dialect as 'sqlite', databaseUrl })
  const db = app.fastbase.db
  const slot = '2026-01-01T00:00:00.000Z'
  const claims = await Promise.all([claimSlot(db, 'test-job', slot, 'a'), claimSlot(db, 'test-job', slot, 'b')])
  t.same(claims.filter(Boolean).length, 1, 'two instances, one slot: one wins')
  t.equal(await claimSlot(db, 'test-job', slot, 'c'), false, 'a slot once claimed stays claimed')
  t.equal(await claimSlot(db, 'test-job', '2026-01-01T00:00:01.000Z', 'c'), true, 'the next slot is free')
  t.equal(await claimSlot(db, 'test-job', slot, 'd'), false, 'an earlier slot never runs again')
  await app.close()
  return true
}
