// DirectRunner#readVersioned on SQLite (decision D135): a page and the data version in one read
// transaction. The rows are of the version answered; the writer is left with no transaction open;
// where the writer is busy (a Knex transaction) or the statement belongs on a reader thread, it
// declines and the caller reads apart.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { connectSqlite } from '../../../lib/dialects/sqlite-connection.js'

t.test('the rows and the version of one read transaction', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-read-versioned-'))
  const file = join(dir, 'db.sqlite')
  const connection = connectSqlite(`sqlite:${file}`)
  t.teardown(async () => {
    await connection.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const { knex, direct } = connection
  await knex.raw('CREATE TABLE items (id INTEGER PRIMARY KEY, n INTEGER)')
  await knex.raw('INSERT INTO items (n) VALUES (1), (2)')
  const page = { sql: 'SELECT n FROM items ORDER BY id', native: 'SELECT n FROM items ORDER BY id' }
  const read = direct?.readVersioned?.(page, [])
  t.same(read?.rows, [{ n: 1 }, { n: 2 }])
  t.equal(read?.version, direct?.dataVersion?.(), 'the version a lone read gives right after, nothing having changed')
  t.equal(await knex.transaction(async (trx) => { await trx.raw('SELECT 1'); return direct?.readVersioned?.(page, []) }), undefined, 'declines while Knex holds the writer in a transaction')

  // Another connection commits: the next version differs, and the rows are the new ones.
  const other = new Database(file)
  other.prepare('INSERT INTO items (n) VALUES (3)').run()
  other.close()
  const after = direct?.readVersioned?.(page, [])
  t.same(after?.rows, [{ n: 1 }, { n: 2 }, { n: 3 }])
  t.not(after?.version, read?.version, 'another connection\'s commit moves the version')
  t.equal(after?.version, direct?.dataVersion?.())

  // The writer is free again: a write through it commits.
  await knex.raw('INSERT INTO items (n) VALUES (4)')
  t.equal((await knex.raw('SELECT count(*) AS c FROM items'))[0].c, 4, 'no transaction was left open on the writer')
  const failing = { sql: 'SELECT nope FROM items', native: 'SELECT nope FROM items' }
  t.throws(() => direct?.readVersioned?.(failing, []), /no such column/, 'a failing read throws as a lone read does')
  await knex.raw('INSERT INTO items (n) VALUES (5)')
  t.equal((await knex.raw('SELECT count(*) AS c FROM items'))[0].c, 5, 'and leaves no transaction open either')
  t.equal(direct?.readVersioned?.({ ...page, offThread: true }, []), undefined, 'a statement for a reader thread is read apart')
})
