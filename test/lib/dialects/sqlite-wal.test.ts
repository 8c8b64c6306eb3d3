// Switching a new SQLite connection to WAL while another connection writes the file. SQLite answers
// that switch SQLITE_BUSY at once, without its busy handler (waiting could deadlock); two processes
// opening one new database at the same moment hit it (CI did). The switch waits, as the handler
// would, up to the busy timeout, and gives up with SQLite's own error after it.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { connectSqlite, enterWal } from '../../../lib/dialects/sqlite-connection.js'

/** A file in rollback mode with a connection that holds a write open on it until `release`. */
function heldFile (t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-wal-'))
  const file = join(dir, 'db.sqlite')
  const holder = new Database(file)
  holder.exec('CREATE TABLE a (b INTEGER)')
  holder.exec('BEGIN')
  holder.prepare('SELECT * FROM a').all()
  holder.prepare('INSERT INTO a VALUES (1)').run()
  const release = () => { if (holder.inTransaction) holder.exec('COMMIT') }
  t.teardown(() => {
    release()
    holder.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { file, release }
}

t.test('SQLite answers the switch SQLITE_BUSY at once while another connection writes', async (t) => {
  const { file } = heldFile(t)
  const db = new Database(file, { timeout: 5000 })
  t.teardown(() => db.close())
  const started = Date.now()
  t.throws(() => db.pragma('journal_mode = WAL'), { code: 'SQLITE_BUSY' })
  t.ok(Date.now() - started < 2500, 'without waiting for its busy timeout: why enterWal waits itself')
})

t.test('enterWal waits for the other write to end, then switches', async (t) => {
  const { file, release } = heldFile(t)
  const db = new Database(file)
  t.teardown(() => db.close())
  setTimeout(release, 100)
  const started = Date.now()
  await enterWal(db, 5000)
  t.ok(Date.now() - started >= 90, 'it waited for the write')
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
})

t.test('enterWal gives up with SQLite\'s error after the busy timeout', async (t) => {
  const { file } = heldFile(t)
  const db = new Database(file)
  t.teardown(() => db.close())
  const started = Date.now()
  await t.rejects(enterWal(db, 150), { code: 'SQLITE_BUSY' })
  const waited = Date.now() - started
  t.ok(waited >= 140 && waited < 2000, `it waited about the timeout (${waited} ms)`)
  t.equal(db.pragma('journal_mode', { simple: true }), 'delete', 'the mode is unchanged')
})

t.test('any other error is thrown at once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-wal-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = new Database(join(dir, 'db.sqlite'))
  db.close()
  const started = Date.now()
  await t.rejects(enterWal(db, 5000), { name: 'TypeError' })
  t.ok(Date.now() - started < 1000)
})

t.test('fastbase\'s writer connection opens while another connection writes the new file', async (t) => {
  const { file, release } = heldFile(t)
  const connection = connectSqlite(`sqlite:${file}`)
  t.teardown(() => connection.close())
  setTimeout(release, 100)
  t.same(await connection.knex('a').pluck('b'), [1], 'it opened once the write ended, and reads the committed row')
  t.equal((await connection.knex.raw('PRAGMA journal_mode'))[0].journal_mode, 'wal')
})
