// Restore against hostile archives (decisions D86, D87): nothing an archive
// carries is run (a pg_dump's functions, a SQLite file's triggers), nothing is unpacked that its
// manifest does not list at its size (a tar bomb, `..` and absolute entries, an entry twice, `files`
// as a plain file), two restores at once never collide, and every refusal leaves the database as it
// was and nothing behind.
import t, { type Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { readdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import pg from 'pg'
import Database from 'better-sqlite3'
import { Header } from 'tar'
import { buildApp, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { restoreBackup, type RestoreTarget } from '../../../lib/backup/restore.js'
import { readArchive } from '../../../lib/backup/archive.js'
import { stagingRoot } from '../../../lib/backup/create.js'
import { localStorageRoot } from '../../../lib/files/storage/index.js'
import { archiveKey, type Manifest } from '../../../lib/backup/manifest.js'
import type { DialectName } from '../../../lib/dialects/types.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import type { FastbaseError } from '../../../lib/errors.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'restore-attacks-jwt-secret-0123456789',
  rateLimit: false,
  tables: [
    {
      name: 'notes',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
        { name: 'body', type: 'text', sqlType: 'text', notNull: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    },
    {
      name: 'marks',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
        { name: 'note', type: 'integer', sqlType: 'integer', foreignKey: { table: 'notes', column: 'id' } },
        { name: 'label', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }
  ]
}

interface Entry { path: string, body: Buffer, type?: 'File' | 'Directory' }

/** A gzipped tar written header by header: any path, any order, the same path twice. */
function rawTar (entries: Entry[]): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const header = new Header({ path: entry.path, mode: entry.type === 'Directory' ? 0o755 : 0o644, size: entry.type === 'Directory' ? 0 : entry.body.length, type: entry.type ?? 'File', mtime: new Date(0) })
    header.encode()
    if (header.block === undefined) throw new Error('tar header not encoded')
    blocks.push(header.block)
    if (entry.type !== 'Directory') blocks.push(entry.body, Buffer.alloc((512 - (entry.body.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex')

/** An archive of `entries` with a manifest made from `base` listing `listed` (default: every entry). */
function archiveOf (base: Manifest, entries: Entry[], change: (m: Manifest) => Manifest = (m) => m, listed = entries): Buffer {
  const manifest = change({ ...base, entries: listed.filter((e) => e.type !== 'Directory').map((e) => ({ path: e.path, size: e.body.length, sha256: sha256(e.body) })) })
  return rawTar([...entries, { path: 'manifest.json', body: Buffer.from(JSON.stringify(manifest)) }])
}

interface Fixture {
  target: RestoreTarget
  dir: string
  /** The backup's manifest and database entry, unpacked. */
  manifest: Manifest
  database: Entry
  archive: string
}

/** A served database with two notes and a mark, one backup of it (unpacked), then a third note. */
async function fixture (t: Test, dialect: DialectName): Promise<Fixture> {
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  const app = await buildApp(t, { ...config, backups: { files: false } }, { dialect, databaseUrl, dataDir })
  for (const body of ['first', 'second']) t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body } } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/marks/insert', payload: { values: { note: 1, label: 'one' } } })).statusCode, 200)
  const record = await app.fastbase.backups.create()
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'after the backup' } } })).statusCode, 200)
  const archive = join(dataDir, 'backups', archiveKey(record.name))
  const dir = freshDir(t, 'attack-')
  const unpacked = join(dir, 'unpacked')
  mkdirSync(unpacked)
  const manifest = await readArchive(archive, unpacked)
  const database = { path: manifest.database.entry, body: readFileSync(join(unpacked, manifest.database.entry)) }
  await app.close()
  return { target: { databaseUrl, dataDir, config, filesRoot: localStorageRoot(undefined, dataDir) }, dir, manifest, database, archive }
}

async function notes (t: Test, dialect: DialectName, databaseUrl: string): Promise<string[]> {
  const app = await buildApp(t, config, { dialect, databaseUrl })
  const rows: Array<{ body: string }> = await app.fastbase.db('notes').select('body').orderBy('id')
  await app.close()
  return rows.map((r) => r.body)
}

/** Nothing of a restore is left: no staging folder, no database made beside the target. */
async function nothingLeft (t: Test, f: Fixture, dialect: DialectName, what: string): Promise<void> {
  const staging = stagingRoot(f.target.dataDir)
  t.same(existsSync(staging) ? readdirSync(staging) : [], [], `${what}: the staging root holds nothing`)
  if (dialect === 'sqlite') {
    const file = new URL(f.target.databaseUrl.replace(/^sqlite:/, 'file:')).pathname
    t.same(readdirSync(dirname(file)).filter((n) => n.includes('.sqlite.restore-')), [], `${what}: no database or lock is left beside the target`)
  } else {
    const schema = new URL(f.target.databaseUrl).searchParams.get('schema') ?? 'public'
    t.same(await pgRows(f.target.databaseUrl, "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1 || '\\_restore\\_%'", [schema.slice(0, 27)]), [], `${what}: no schema is left beside the target`)
  }
}

async function pgRows (databaseUrl: string, sql: string, values: unknown[] = []): Promise<unknown[]> {
  const url = new URL(databaseUrl)
  url.searchParams.delete('schema')
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  try {
    return (await client.query(sql, values)).rows
  } finally {
    await client.end()
  }
}

/** Restores `body` (an archive) into the fixture's target and answers the error, or undefined. */
async function attempt (f: Fixture, name: string, body: Buffer): Promise<FastbaseError | undefined> {
  const file = join(f.dir, name)
  await writeFile(file, body)
  return await restoreBackup(file, f.target).then(() => undefined, (err: FastbaseError) => err)
}

async function refused (t: Test, f: Fixture, dialect: DialectName, name: string, body: Buffer, code: string, message: RegExp): Promise<void> {
  t.match(await attempt(f, name, body), { code, message }, `${name}: refused`)
  t.same(await notes(t, dialect, f.target.databaseUrl), ['first', 'second', 'after the backup'], `${name}: the database is as it was`)
  await nothingLeft(t, f, dialect, name)
}

forEachDialect(t, 'unpacking is bounded by the manifest: a tar bomb, `..` and absolute entries, an entry twice, files as a plain file', async (t, dialect) => {
  const f = await fixture(t, dialect)
  const { manifest, database } = f

  // 64 MiB of zeros (about 64 KiB packed) under a manifest that says 5 bytes: refused before any is written.
  // (With some noise, or tar's own ratio limit would refuse it first: the manifest's bound is tested here.)
  const noise = { path: 'files/notes/noise.bin', body: randomBytes(256 * 1024) }
  const bomb = archiveOf(manifest, [database, noise, { path: 'files/notes/bomb.bin', body: Buffer.alloc(64 * 1024 * 1024) }], (m) => ({ ...m, entries: m.entries.map((e) => e.path.endsWith('bomb.bin') ? { ...e, size: 5 } : e) }))
  t.ok(bomb.length < 1024 * 1024, `the bomb is small packed (${bomb.length} bytes)`)
  const into = freshDir(t, 'into-')
  const bombFile = join(f.dir, 'bomb-direct.tar.gz')
  await writeFile(bombFile, bomb)
  t.match(await readArchive(bombFile, into).then(() => undefined, (err: FastbaseError) => err), { code: 'FB_ERR_BAD_ARCHIVE', message: /bomb\.bin is 67108864 bytes, its manifest says 5/ }, 'readArchive refuses the bomb')
  t.same(await readdir(into), [], 'not a byte of it was written')
  await refused(t, f, dialect, 'bomb.tar.gz', bomb, 'FB_ERR_BAD_ARCHIVE', /bomb\.bin is 67108864 bytes, its manifest says 5/)

  const climber = { path: '../../climbed.txt', body: Buffer.from('outside') }
  await refused(t, f, dialect, 'dotdot.tar.gz', archiveOf(manifest, [database, climber]), 'FB_ERR_BAD_ARCHIVE', /leaves the archive's folder \(\.\.\/\.\.\/climbed\.txt\)/)
  t.notOk(existsSync(join(f.target.dataDir, 'climbed.txt')), 'nothing was written above the staging folder')
  const absolute = `/tmp/fastbase-absolute-${randomBytes(4).toString('hex')}.txt`
  await refused(t, f, dialect, 'absolute.tar.gz', archiveOf(manifest, [database, { path: absolute, body: Buffer.from('x') }]), 'FB_ERR_BAD_ARCHIVE', /leaves the archive's folder/)
  t.notOk(existsSync(absolute), 'nothing was written at the absolute path')
  // The manifest lists the .. entry too: refused for the manifest's path as well.
  await refused(t, f, dialect, 'dotdot-listed.tar.gz', archiveOf(manifest, [database, { path: 'files/../x', body: Buffer.from('x') }]), 'FB_ERR_BAD_ARCHIVE', /leaves the archive's folder/)

  const note = { path: 'files/notes/a.txt', body: Buffer.from('a') }
  await refused(t, f, dialect, 'twice-in-tar.tar.gz', archiveOf(manifest, [database, note, note], (m) => m, [database, note]), 'FB_ERR_BAD_ARCHIVE', /holds files\/notes\/a\.txt more than once/)
  await refused(t, f, dialect, 'twice-in-manifest.tar.gz', archiveOf(manifest, [database, note], (m) => ({ ...m, entries: [...m.entries, ...m.entries] })), 'FB_ERR_BAD_ARCHIVE', /lists .* more than once/)

  // `files` as a plain file would take the files folder's place: the server could not start.
  const filesRoot = f.target.filesRoot ?? ''
  mkdirSync(join(filesRoot, 'notes'), { recursive: true })
  await refused(t, f, dialect, 'files-plain.tar.gz', archiveOf(manifest, [database, { path: 'files', body: Buffer.from('not a folder') }], (m) => ({ ...m, files: { included: true, count: 1, bytes: 12 } })), 'FB_ERR_BAD_ARCHIVE', /neither the database nor under files\/: files/)
  t.ok(statSync(filesRoot).isDirectory(), 'the files folder is still a folder')
})

forEachDialect(t, 'two restores at once: one runs, the other is refused, nothing collides', async (t, dialect) => {
  const f = await fixture(t, dialect)
  const [a, b] = await Promise.all([restoreBackup(f.archive, f.target).then(() => undefined, (err: FastbaseError) => err), restoreBackup(f.archive, f.target).then(() => undefined, (err: FastbaseError) => err)])
  const errors = [a, b].filter((e) => e !== undefined)
  t.equal(errors.length, 1, 'exactly one was refused')
  t.match(errors[0], { code: 'FB_ERR_RESTORE_REFUSED', message: /restore of .* is running already/ }, 'because the other runs')
  t.same(await notes(t, dialect, f.target.databaseUrl), ['first', 'second'], 'the database is the backup\'s')
  await nothingLeft(t, f, dialect, 'after both')
  // Two more, one after the other within a second: the kept copies do not overwrite each other.
  const first = await restoreBackup(f.archive, f.target)
  const second = await restoreBackup(f.archive, f.target)
  t.not(first.databaseKeptAt, second.databaseKeptAt, 'each kept copy has a name of its own')
})

forEachDialect(t, 'an archive with a table the config does not make, or rows its manifest does not count, is refused', async (t, dialect) => {
  const f = await fixture(t, dialect)
  let changed: Entry
  if (dialect === 'sqlite') {
    const file = join(f.dir, 'extra.sqlite')
    await writeFile(file, f.database.body)
    const db = new Database(file)
    db.exec('CREATE TABLE stranger (id integer primary key, secret text); INSERT INTO stranger VALUES (1, \'x\')')
    db.close()
    changed = { path: f.database.path, body: readFileSync(file) }
  } else {
    changed = { path: f.database.path, body: Buffer.concat([f.database.body, Buffer.from('#{"table":"stranger","columns":["id"]}\n{"id":1}\n')]) }
  }
  await refused(t, f, dialect, 'extra-table.tar.gz', archiveOf(f.manifest, [changed], (m) => ({ ...m, tables: { ...m.tables, stranger: 1 } })), 'FB_ERR_RESTORE_REFUSED', /tables this config does not make \(stranger\)/)
  // The manifest's count off by one: refused before the database changes (PostgreSQL: after loading the new schema, which goes).
  await refused(t, f, dialect, 'count-off.tar.gz', archiveOf(f.manifest, [f.database], (m) => ({ ...m, tables: { ...m.tables, notes: 3 } })), 'FB_ERR_BAD_ARCHIVE', /table notes: 2 rows, the manifest says 3/)
})

forEachDialect(t, 'a search index and a config trigger round-trip: rebuilt from the rows, not run on them', async (t, dialect) => {
  const searched: DatabaseSettings = {
    ...config,
    backups: { files: false },
    tables: [{
      ...config.tables[0],
      fullTextSearch: { fields: ['body'] },
      // Counts every new note into marks: it ran when the notes were written, and must not run again on a restore.
      triggers: [{ name: 'count', seq: 'AFTER', event: 'INSERT', body: 'INSERT INTO marks (label) VALUES (\'inserted\')' }]
    }, config.tables[1]]
  }
  const databaseUrl = sharedDatabase(t, dialect)
  const dataDir = freshDir(t, 'data-')
  const app = await buildApp(t, searched, { dialect, databaseUrl, dataDir })
  for (const body of ['the quick brown fox', 'a lazy dog']) t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body } } })).statusCode, 200)
  const record = await app.fastbase.backups.create()
  await app.close()
  await restoreBackup(join(dataDir, 'backups', archiveKey(record.name)), { databaseUrl, dataDir, config: searched, filesRoot: undefined })
  const restored = await buildApp(t, searched, { dialect, databaseUrl, dataDir })
  const found = await restored.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { where: "body @@ 'fox'" } })
  t.equal(found.statusCode, 200, found.body)
  t.same(found.json().items.map((r: { body: string }) => r.body), ['the quick brown fox'], 'the search finds the restored row')
  t.same((await restored.fastbase.db('marks').select('label')).map((r: { label: string }) => r.label), ['inserted', 'inserted'], 'the trigger\'s rows are those of the two inserts, not more')
  t.equal((await restored.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'another fox' } } })).statusCode, 200)
  t.equal((await restored.fastbase.db('marks').select('label')).length, 3, 'the trigger runs again on new rows')
  t.equal((await restored.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { where: "body @@ 'fox'" } })).json().items.length, 2, 'and the index follows new rows')
})

t.test('sqlite: a trigger the archive carries is not restored and never runs', async (t) => {
  const f = await fixture(t, 'sqlite')
  const file = join(f.dir, 'trigger.sqlite')
  await writeFile(file, f.database.body)
  const db = new Database(file)
  // On every new note, every mark is deleted, and a marker row shows the trigger ran.
  db.exec('CREATE TRIGGER evil AFTER INSERT ON notes BEGIN DELETE FROM marks; END')
  db.close()
  const error = await attempt(f, 'trigger.tar.gz', archiveOf(f.manifest, [{ path: f.database.path, body: readFileSync(file) }]))
  t.equal(error, undefined, 'the rows are restored')
  const app = await buildApp(t, config, { dialect: 'sqlite', databaseUrl: f.target.databaseUrl })
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { body: 'third' } } })).statusCode, 200)
  t.same((await app.fastbase.db('marks').select('label')).map((r: { label: string }) => r.label), ['one'], 'the mark is still there: the trigger did not run')
  const triggers = await app.fastbase.db.raw("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'evil'")
  t.same(triggers, [], 'the restored database has no such trigger')
  await app.close()
})

t.test('sqlite: an archive of format 1 loads as data', async (t) => {
  const f = await fixture(t, 'sqlite')
  t.equal(await attempt(f, 'format-1.tar.gz', archiveOf(f.manifest, [f.database], (m) => ({ ...m, version: 1 }))), undefined, 'restored')
  t.same(await notes(t, 'sqlite', f.target.databaseUrl), ['first', 'second'], 'its rows are back')
})

t.test('postgres: a pg_dump archive is refused before it is unpacked, so nothing of it runs', { skip: process.env.FASTBASE_TEST_DIALECT === 'sqlite' ? 'SQLite only run' : false }, async (t) => {
  const f = await fixture(t, 'postgres')
  const token = randomBytes(6).toString('hex')
  const dumped = `fbt_dump_${token}`
  const victim = `fbt_victim_${token}`
  const written = `/tmp/fastbase-restore-attack-${token}`
  t.teardown(async () => {
    await pgRows(f.target.databaseUrl, `DROP SCHEMA IF EXISTS ${dumped} CASCADE`)
    await pgRows(f.target.databaseUrl, `DROP SCHEMA IF EXISTS ${victim} CASCADE`)
  })
  // A schema whose table has a CHECK calling a function: while the victim schema exists, it writes
  // a file on the server and drops the victim's table. The dump is made before the victim exists.
  await pgRows(f.target.databaseUrl, `CREATE SCHEMA ${dumped}`)
  await pgRows(f.target.databaseUrl, `CREATE FUNCTION ${dumped}.armed(x text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '${victim}') THEN
    EXECUTE format('COPY (SELECT 1) TO %L', '${written}');
    EXECUTE 'DROP TABLE ${victim}.precious';
  END IF;
  RETURN true;
END $$`)
  await pgRows(f.target.databaseUrl, `CREATE TABLE ${dumped}.notes (id integer, body text CHECK (${dumped}.armed(body)))`)
  await pgRows(f.target.databaseUrl, `INSERT INTO ${dumped}.notes VALUES (1, 'first')`)
  const dump = join(f.dir, 'database.pgdump')
  const url = new URL(f.target.databaseUrl)
  execFileSync('pg_dump', ['--format=custom', '--no-owner', `--schema=${dumped}`, `--file=${dump}`, `--dbname=${url.pathname.slice(1)}`], { env: { ...process.env, PGHOST: url.hostname, PGPORT: url.port || '5432', PGUSER: decodeURIComponent(url.username) || 'postgres' } })
  await pgRows(f.target.databaseUrl, `DROP SCHEMA ${dumped} CASCADE`)
  await pgRows(f.target.databaseUrl, `CREATE SCHEMA ${victim}`)
  await pgRows(f.target.databaseUrl, `CREATE TABLE ${victim}.precious (id integer)`)

  // As fastbase's format 1 wrote it, with the row count off by one.
  const archive = archiveOf(f.manifest, [{ path: 'database.pgdump', body: readFileSync(dump) }], (m) => ({
    ...m, version: 1, database: { entry: 'database.pgdump', schemaName: dumped }, schema: { migrations: 0, last: null }, tables: { notes: 2 }
  }))
  await refused(t, f, 'postgres', 'pg-dump.tar.gz', archive, 'FB_ERR_BAD_ARCHIVE', /archive format 1, a pg_dump: restoring one runs whatever SQL it holds/)
  t.notOk(existsSync(written), 'no file was written by the archive\'s function')
  t.same(await pgRows(f.target.databaseUrl, `SELECT to_regclass('${victim}.precious') IS NOT NULL AS present`), [{ present: true }], 'the other schema\'s table is still there')
  t.same(await pgRows(f.target.databaseUrl, 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [dumped]), [], 'the dump\'s schema was never made')
})

t.test('postgres: rows are data, whatever they hold', { skip: process.env.FASTBASE_TEST_DIALECT === 'sqlite' ? 'SQLite only run' : false }, async (t) => {
  const f = await fixture(t, 'postgres')
  // A row whose text is SQL, and a header naming a column of another table: loaded as text, refused.
  const sql = "x'); DROP TABLE marks; --"
  const body = Buffer.from(f.database.body.toString('utf8').replace('"body": "second"', `"body": ${JSON.stringify(sql)}`))
  t.not(body.toString(), f.database.body.toString(), 'the row was changed')
  t.equal(await attempt(f, 'sql-text.tar.gz', archiveOf(f.manifest, [{ path: f.database.path, body }])), undefined, 'restored')
  t.same(await notes(t, 'postgres', f.target.databaseUrl), ['first', sql], 'the text is a note\'s body')
  t.same(await pgRows(f.target.databaseUrl, `SELECT count(*)::int AS n FROM "${new URL(f.target.databaseUrl).searchParams.get('schema') ?? 'public'}".marks`), [{ n: 1 }], 'marks is still there')
  const foreign = Buffer.from(f.database.body.toString('utf8').replace('"columns":["id","body"]', '"columns":["id","body","label"]'))
  t.not(foreign.toString(), f.database.body.toString(), 'the header was changed')
  t.match(await attempt(f, 'foreign-column.tar.gz', archiveOf(f.manifest, [{ path: f.database.path, body: foreign }])), { code: 'FB_ERR_RESTORE_REFUSED', message: /table notes: the archive has columns this config does not \(label\)/ })
})
