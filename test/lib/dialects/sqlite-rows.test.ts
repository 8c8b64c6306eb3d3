// Rows made by one literal per statement (lib/dialects/sqlite-rows.ts, decision D140): the direct
// runner's rows are the objects better-sqlite3 itself makes (the same keys in the same order, the
// same values, the same prototype) whatever the column names, and the statements Knex and other
// callers share never change mode.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { connectSqlite } from '../../../lib/dialects/sqlite-connection.js'
import { namedByText, rowMaker } from '../../../lib/dialects/sqlite-rows.js'

// Names a literal could misread if they were ever written into it as code.
const AWKWARD = ['plain', 'a"b', 'back\\slash', 'line\nbreak', '}); globalThis.hacked = 1; ({', '7', 'x y', '\u2028', '']

t.test('rowMaker makes the keys it is given, as text only', async (t) => {
  const make = rowMaker(AWKWARD)
  t.ok(make !== undefined)
  const row = make?.(AWKWARD.map((_, i) => i))
  t.equal((globalThis as { hacked?: number }).hacked, undefined, 'no name ran as code')
  const expected: Record<string, number> = {}
  AWKWARD.forEach((name, i) => { expected[name] = i })
  t.strictSame(row, expected)
  t.strictSame(Object.keys(row ?? {}), Object.keys(expected), 'keys in the order a plain object gives them')
  t.equal(Object.getPrototypeOf(row), Object.prototype)
  t.strictSame(rowMaker(['a', 'b', 'a'])?.([1, 2, 3]), { a: 3, b: 2 }, 'a repeated name keeps its first place and its last value')
  t.strictSame(Object.keys(rowMaker(['a', 'b', 'a'])?.([1, 2, 3]) ?? {}), ['a', 'b'])
  t.strictSame(rowMaker([])?.([]), {}, 'no columns, an empty row')
  t.equal(rowMaker(['id', '__proto__']), undefined, '__proto__ is left to the driver: a literal would set the prototype')
})

t.test('namedByText: only a text that fixes every name', async (t) => {
  t.ok(namedByText('SELECT "t"."id" AS "id", n AS "a""b" FROM t', ['id', 'a"b']))
  t.ok(namedByText('select id as "id" from t', ['id']))
  t.notOk(namedByText('SELECT * FROM t', ['id']), 'a star stands for whatever columns the table has now')
  t.notOk(namedByText('SELECT count(*) AS "n" FROM t', ['n']), 'any star')
  t.notOk(namedByText('SELECT id FROM t', ['id']), 'an unaliased column takes its table\'s spelling')
  t.notOk(namedByText('SELECT id, 1 AS "ID" FROM t', ['id', 'ID']), 'an alias names its own column only, in its own case')
  t.notOk(namedByText('SELECT id AS id FROM t', ['id']), 'an unquoted alias is not matched (fastbase quotes its own)')
})

t.test('the direct runner answers the objects the driver makes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-sqlite-rows-'))
  const file = join(dir, 'db.sqlite')
  const connection = connectSqlite(`sqlite:${file}`)
  const driver = new Database(file)
  t.teardown(async () => {
    driver.close()
    await connection.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const { knex, direct } = connection
  if (direct === undefined) throw new Error('SQLite has a direct runner')
  await knex.raw('CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT, n REAL, data BLOB, gone TEXT)')
  await knex.raw("INSERT INTO items (title, n, data, gone) VALUES ('one', 1.5, x'00ff', NULL), ('two', -2, NULL, 'x')")
  const select = AWKWARD.map((name, i) => `${i % 2 === 0 ? 'title' : 'n'} AS "${name.replaceAll('"', '""')}"`).join(', ')
  // Labels, not the SQL: a line break in an assertion's name would end its TAP line.
  const statements = {
    'every column': 'SELECT * FROM items ORDER BY id',
    'awkward names': `SELECT ${select} FROM items ORDER BY id`,
    'a repeated name': 'SELECT id AS "id", title AS "id", data AS "data" FROM items ORDER BY id',
    'a column named __proto__': 'SELECT id AS "__proto__", title AS "title" FROM items ORDER BY id',
    'no rows': 'SELECT id FROM items WHERE id = -1'
  }
  for (const [label, sql] of Object.entries(statements)) {
    const expected = driver.prepare(sql).all()
    const rows = await direct.read({ sql, native: sql }, [])
    t.strictSame(rows, expected, label)
    t.strictSame(rows?.map((r) => Object.keys(r)), expected.map((r) => Object.keys(r as object)), `${label}: the same keys in the same order`)
    t.ok(rows?.every((r) => Object.getPrototypeOf(r) === Object.getPrototypeOf(expected[0] ?? {})), `${label}: the same prototype`)
    t.strictSame(direct.readVersioned?.({ sql, native: sql }, [])?.rows, expected, `${label}, read with its version`)
    t.strictSame(await direct.read({ sql, native: sql, oneRow: true }, []), expected.slice(0, 1), `${label}, one row`)
    // The statement Knex prepares for the same text still answers objects.
    t.strictSame(await knex.raw(sql), expected, `${label}, through Knex afterwards`)
  }

  // A schema change prepares the statement again; names its text fixes stay, and a star follows the table.
  const aliased = 'SELECT id AS "id", n AS "n" FROM items WHERE id = 1'
  const star = 'SELECT * FROM items WHERE id = 1'
  t.strictSame(await direct.read({ sql: aliased, native: aliased }, []), [{ id: 1, n: 1.5 }])
  t.equal((await direct.read({ sql: star, native: star }, []))?.length, 1)
  await knex.raw('ALTER TABLE items ADD COLUMN extra TEXT')
  await knex.raw('ALTER TABLE items RENAME COLUMN n TO N')
  t.strictSame(await direct.read({ sql: aliased, native: aliased }, []), [{ id: 1, n: 1.5 }], 'aliased names stay after a migration')
  t.strictSame(await direct.read({ sql: star, native: star }, []), driver.prepare(star).all(), 'a star gets the new column and the new spelling')
  t.ok('extra' in ((await direct.read({ sql: star, native: star }, []))?.[0] ?? {}))

  const bound = 'SELECT title AS "title", N AS "n" FROM items WHERE id = ?'
  t.strictSame(await direct.read({ sql: bound, native: bound }, [2]), [{ title: 'two', n: -2 }], 'bindings reach the statement')
  const insert = 'INSERT INTO items (title, N) VALUES (?, ?) RETURNING id AS "id", title AS "title", N AS "a""b"'
  t.strictSame(await direct.write(insert, ['three', 3]), [{ id: 3, title: 'three', 'a"b': 3 }], 'a write answers its RETURNING rows as objects')
  t.strictSame(await direct.write('UPDATE items SET N = ? WHERE id = ?', [4, 3]), [], 'a write without RETURNING answers no rows')
  t.equal(driver.prepare('SELECT N FROM items WHERE id = 3').pluck().get(), 4, 'and is written')
  await t.rejects(Promise.resolve().then(() => direct.read({ sql: 'SELECT nope FROM items', native: 'SELECT nope FROM items' }, [])), /no such column/, 'a failing statement fails as before')
})
