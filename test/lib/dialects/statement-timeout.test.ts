// PostgreSQL runs every statement a caller causes without JIT and under limits.statementTimeout (set
// on each pool connection, so prepared statements, transactions and actions all get it); a statement
// cancelled by it answers 503 FB_ERR_STATEMENT_TIMEOUT. fastbase's own schema work lifts it: waiting
// for another instance's schema lock is not cut short. SQLite has no such timeout (nothing to test).
import t, { type Test } from 'tap'
import pg from 'pg'
import { buildApp, sharedDatabase, adminToken } from '../../helper.js'
import { schemaLockSql } from '../../../lib/dialects/postgres-ddl.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const pgUrl = process.env.FASTBASE_TEST_PG_URL || undefined
const skip = pgUrl === undefined ? 'PostgreSQL not configured' : false

const open = { listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const config = (statementTimeout: number): DatabaseSettings => ({
  jwtSecret: 'timeout-secret',
  appUrl: 'http://localhost:3000',
  tables: [{ name: 'notes', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'body', type: 'text', sqlType: 'text' }], extensions: [{ name: 'rules', ...open }] }],
  limits: { statementTimeout }
})

/** A second session on the test server (not fastbase's pool), closed after the test. */
async function session (t: Test): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: pgUrl })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

const schemaOf = (url: string): string => new URL(url).searchParams.get('schema')!

t.test('postgres: a caller statement past limits.statementTimeout is cancelled and answered 503', { skip }, async (t) => {
  const databaseUrl = sharedDatabase(t, 'postgres')
  const app = await buildApp(t, config(300), { dialect: 'postgres', databaseUrl })
  t.same((await app.fastbase.db.raw('SHOW jit')).rows, [{ jit: 'off' }], 'pool connections run without JIT')
  t.same((await app.fastbase.db.raw('SHOW statement_timeout')).rows, [{ statement_timeout: '300ms' }], 'and under the configured timeout')
  const list = () => app.inject({ method: 'GET', url: '/api/v1/table/notes/list' })
  t.equal((await list()).statusCode, 200, 'a read before')

  // A real long statement: the caller's read waits for a lock another session holds.
  const other = await session(t)
  await other.query('BEGIN')
  await other.query(`LOCK TABLE "${schemaOf(databaseUrl)}"."notes" IN ACCESS EXCLUSIVE MODE`)
  const read = await list()
  t.equal(read.statusCode, 503, 'a read that outlasts the timeout: 503, not 500')
  t.equal(read.headers['fastbase-error-code'], 'FB_ERR_STATEMENT_TIMEOUT')
  t.match(read.json(), { code: 503, message: /limits\.statementTimeout/ })
  const write = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { id: 1, body: 'x' } } })
  t.equal(write.statusCode, 503, 'a write too (inside its transaction)')
  t.equal(write.headers['fastbase-error-code'], 'FB_ERR_STATEMENT_TIMEOUT')
  await other.query('ROLLBACK')

  t.equal((await list()).statusCode, 200, 'the pool connections still work afterwards')
  t.equal((await list()).statusCode, 200, 'prepared statements included')
})

t.test('postgres: schema setup and migrations wait for the schema lock past a tiny statementTimeout', { skip }, async (t) => {
  const databaseUrl = sharedDatabase(t, 'postgres')
  // Another instance migrating this schema: it holds the lock fastbase takes before creating the
  // schema and before changing tables, for longer than the statement timeout.
  const other = await session(t)
  await other.query('BEGIN')
  await other.query(schemaLockSql('$1'), [schemaOf(databaseUrl)])
  const release = setTimeout(() => { void other.query('ROLLBACK') }, 500)
  t.teardown(() => clearTimeout(release))
  const app = await buildApp(t, config(20), { dialect: 'postgres', databaseUrl })
  const res = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', headers: { authorization: `Bearer ${adminToken}` } })
  t.equal(res.statusCode, 200, 'the app started, its tables created: nothing was cancelled')
})
