// SQLite's reader threads (lib/dialects/sqlite-readers.ts): reads that may take long (searches,
// expansions) run off the event loop, under limits.statementTimeout, and come back as the driver
// would have answered them.
import t from 'tap'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ReaderPool, READ_TIMEOUT, READERS_BUSY } from '../../../lib/dialects/sqlite-readers.js'
import { buildApp, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

// A statement that runs for a second or more (and ends: a thread inside it exits only when it does).
const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c'

function database (dir: string): string {
  const filename = join(dir, 'readers.sqlite')
  const db = new Database(filename)
  db.pragma('journal_mode = WAL')
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT, data BLOB); INSERT INTO t VALUES (1, 'one', x'00ff10'), (2, 'two', NULL)")
  db.close()
  return filename
}

const pool = (filename: string, settings: Partial<ConstructorParameters<typeof ReaderPool>[0]> = {}): ReaderPool =>
  new ReaderPool({ filename, threads: 1, busyTimeout: 100, timeout: 0, queuePerThread: 4, statementCacheSize: 10, ...settings })

/**
 * How many times the event loop turned while `work` ran: on a reader thread, thousands; on the main
 * thread, none until it ended. Counted, not timed (a turn's length depends on the machine's load).
 */
async function turnsDuring (work: Promise<unknown>): Promise<number> {
  let turns = 0
  let pending = true
  const turn = () => { if (pending) { turns++; setImmediate(turn) } }
  setImmediate(turn)
  try {
    await work.catch(() => {})
  } finally {
    pending = false
  }
  return turns
}

t.test('rows as the driver answers them: bindings of every kind, blobs as Buffers', async (t) => {
  const readers = pool(database(t.testdir()))
  t.teardown(() => readers.close())
  const rows = await readers.read('SELECT id, body, data FROM t WHERE id >= ? AND body <> ? ORDER BY id', [1n, Buffer.from('x')])
  t.same(rows.map((r) => [r.id, r.body]), [[1, 'one'], [2, 'two']])
  t.ok(Buffer.isBuffer(rows[0].data), 'a blob is a Buffer')
  t.same([...(rows[0].data as Buffer)], [0, 255, 16])
  t.equal(rows[1].data, null)
  t.same(await readers.read('SELECT count(*) AS n FROM t WHERE data = ?', [Buffer.from([0, 255, 16])]), [{ n: 1 }], 'a Buffer binds as a blob')
})

t.test("the driver's errors keep their code; the thread goes on", async (t) => {
  const readers = pool(database(t.testdir()))
  t.teardown(() => readers.close())
  await t.rejects(readers.read('SELECT nope FROM t', []), { code: 'SQLITE_ERROR', message: /no such column: nope/ })
  t.same(await readers.read('SELECT count(*) AS n FROM t', []), [{ n: 2 }])
})

t.test('a read past the timeout fails as a timeout, without holding the event loop; the next read gets a new thread', async (t) => {
  const readers = pool(database(t.testdir()), { timeout: 300 })
  t.teardown(() => readers.close())
  const started = performance.now()
  const slow = readers.read(SLOW, [])
  const turns = await turnsDuring(slow)
  await t.rejects(slow, { code: READ_TIMEOUT })
  t.ok(performance.now() - started >= 290, 'not before the timeout')
  t.ok(turns >= 10, `the event loop kept turning while it ran (${turns} turns)`)
  t.same(await readers.read('SELECT count(*) AS n FROM t', []), [{ n: 2 }], 'a replacement thread answers, once the old one has exited')
})

t.test('a full queue is refused as busy at once; closing fails what is pending', async (t) => {
  const readers = pool(database(t.testdir()), { queuePerThread: 1 })
  const running = readers.read(SLOW, [])
  const queued = readers.read('SELECT 1 AS one', [])
  await t.rejects(readers.read('SELECT 1 AS one', []), { code: READERS_BUSY })
  const failed = [t.rejects(running, /closed/, 'the running read fails'), t.rejects(queued, /closed/, 'the queued read fails')]
  await readers.close()
  await Promise.all(failed)
  await t.rejects(readers.read('SELECT 1', []), /closed/, 'a read after closing fails')
})

const config = (statementTimeout: number): DatabaseSettings => ({
  jwtSecret: 'readers-secret',
  appUrl: 'http://localhost:3000',
  tables: [{
    name: 'notes',
    fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'body', type: 'text', sqlType: 'text' }],
    fullTextSearch: { fields: ['body'] },
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }],
  limits: { statementTimeout }
})

t.test('sqlite: a search runs off the event loop and answers 503 FB_ERR_STATEMENT_TIMEOUT past limits.statementTimeout', async (t) => {
  const app = await buildApp(t, config(1))
  // Enough matching rows that counting and ranking them takes well over the 1 ms the limit allows.
  const values = Array.from({ length: 20_000 }, (_, i) => ({ id: i + 1, body: `hello world number ${i} of many rows` }))
  for (let i = 0; i < values.length; i += 2000) {
    const insert = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { authorization: `Bearer ${adminToken}` }, payload: { values: values.slice(i, i + 2000), returning: [] } })
    t.equal(insert.statusCode, 200, `rows ${i + 1} to ${i + 2000} inserted`)
  }
  const search = () => app.inject({ method: 'GET', url: `/api/v1/table/notes/list?where=${encodeURIComponent("notes @@ 'hello OR wor*'")}` })
  const pending = search()
  let healthy = 0
  const health = (async () => {
    for (let i = 0; i < 5; i++) if ((await app.inject({ method: 'GET', url: '/api/v1/health' })).statusCode === 200) healthy++
  })()
  await health
  const res = await pending
  t.equal(res.statusCode, 503, res.body)
  t.equal(res.headers['fastbase-error-code'], 'FB_ERR_STATEMENT_TIMEOUT')
  t.equal(healthy, 5, '/health answered meanwhile')
  const plain = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list?limit=1&where=id%20%3D%3D%201' })
  t.same(plain.json(), { items: [{ id: 1, body: 'hello world number 0 of many rows' }], total: 1 }, 'a plain read runs in place, with no timeout on SQLite')
})
