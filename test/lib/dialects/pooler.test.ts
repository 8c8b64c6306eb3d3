// fastbase behind PgBouncer in transaction mode (decision D102), Debian's pgbouncer (1.18: no named
// prepared statements across clients), started here on a free loopback port: a fleet of two instances
// under concurrent reads and writes, what is refused with a clear message (a schema per connection,
// realtime without a direct connection), and a representative part of the suite (table API, auth,
// migrations, two instances with realtime) run again through it on PostgreSQL.
import t, { type Test } from 'tap'
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import fastbase, { options as serverOptions } from '../../../app.js'
import { freePort, root } from '../../cli-run.js'
import { adminToken, buildApp, dialects, freshDir } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const PGBOUNCER = '/usr/sbin/pgbouncer'
const direct = process.env.FASTBASE_TEST_PG_URL || undefined
const ci = process.env.CI === 'true' || process.env.CI === '1'
if (ci && !existsSync(PGBOUNCER)) throw new Error(`${PGBOUNCER} is missing: install Debian's pgbouncer (.ci/run does)`)
const skip = !dialects.includes('postgres') ? 'needs PostgreSQL (FASTBASE_TEST_PG_URL)' : !existsSync(PGBOUNCER) ? `${PGBOUNCER} is not installed (apt-get install pgbouncer)` : false

/** A pgbouncer in transaction mode in front of the test server, with two server connections per database. */
async function startPgBouncer (t: Test): Promise<{ port: number }> {
  const dir = freshDir(t, 'pgbouncer-')
  chmodSync(dir, 0o755)
  const server = new URL(direct!)
  const port = await freePort()
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username || 'postgres')}" ""\n`)
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 2',
    'max_client_conn = 500',
    ''
  ].join('\n'))
  chmodSync(join(dir, 'pgbouncer.ini'), 0o644)
  chmodSync(join(dir, 'users.txt'), 0o644)
  // PgBouncer refuses to run as root: it switches to the postgres user when started as root.
  const child = spawn(PGBOUNCER, [...(process.getuid?.() === 0 ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await once(child, 'exit') } })
  for (let i = 0; i < 100 && !/listening on 127\.0\.0\.1/.test(output) && child.exitCode === null; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  if (!/listening on 127\.0\.0\.1/.test(output)) throw new Error(`pgbouncer did not start:\n${output}`)
  return { port }
}

/** A new database, its URL through the pooler and its direct URL (dropped after the test). */
function newDatabase (t: Test, port: number, settings = ''): { pooled: string, direct: string } {
  const name = `fbt_${randomBytes(6).toString('hex')}`
  execFileSync('psql', [direct!, '-qXc', `CREATE DATABASE "${name}"`])
  if (settings !== '') execFileSync('psql', [direct!, '-qXc', `ALTER DATABASE "${name}" SET ${settings}`])
  t.teardown(() => { execFileSync('psql', [direct!, '-qXc', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`]) })
  const pooled = new URL(direct!)
  pooled.port = String(port)
  pooled.pathname = `/${name}`
  pooled.searchParams.set('pooler', 'transaction')
  const own = new URL(direct!)
  own.pathname = `/${name}`
  return { pooled: pooled.toString(), direct: own.toString() }
}

const config: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'pooler-test-jwt-secret-0123456789abcdef',
  rateLimit: false,
  tables: [{
    name: 'items',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
      { name: 'n', type: 'integer', sqlType: 'integer', notNull: true },
      { name: 'label', type: 'text', sqlType: 'text' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: null }]
  }]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }

t.test('behind PgBouncer in transaction mode', { skip }, async (t) => {
  const { port } = await startPgBouncer(t)

  /** 120 concurrent requests of many statement shapes over two apps; every answer a 200. */
  async function hammer (t: Test, apps: Array<Awaited<ReturnType<typeof buildApp>>>): Promise<void> {
    // Each statement text once per client connection at least, on two server connections lent in turn:
    // a named prepared statement made on one is missing on the other.
    const requests = Array.from({ length: 120 }, (_, i) => {
      const app = apps[i % apps.length]
      return i % 3 === 0
        ? app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: { n: i, label: `item ${i}` } } })
        : app.inject({ method: 'GET', url: '/api/v1/table/items/list', query: { where: `n >= ${i % 7}`, order: i % 2 === 0 ? 'n' : '-n', limit: String(1 + (i % 5)) } })
    })
    const answers = await Promise.all(requests)
    t.same(answers.filter((a) => a.statusCode !== 200).map((a) => a.body), [], 'every request answered 200')
    const count = await apps[0].inject({ method: 'GET', url: '/api/v1/table/items/list', query: { limit: '1' }, headers: ADMIN })
    t.equal(count.json().total, 40, 'every insert landed')
  }

  t.test('two instances answer concurrent reads and writes of many shapes', async (t) => {
    const db = newDatabase(t, port)
    await hammer(t, [await buildApp(t, config, { databaseUrl: db.pooled, databaseDirectUrl: db.direct }), await buildApp(t, config, { databaseUrl: db.pooled, databaseDirectUrl: db.direct })])
  })

  t.test('a pooler the URL does not declare shows itself by losing a named statement', async (t) => {
    const db = newDatabase(t, port)
    const undeclared = db.pooled.replace('?pooler=transaction', '')
    const quiet = { ...config, realtime: { enabled: false } }
    await hammer(t, [await buildApp(t, quiet, { databaseUrl: undeclared }), await buildApp(t, quiet, { databaseUrl: undeclared })])
  })

  t.test('what a transaction-mode pooler cannot carry is refused at start, saying what to do', async (t) => {
    const db = newDatabase(t, port)
    await t.rejects(buildApp(t, config, { databaseUrl: db.pooled }), /realtime behind a transaction-mode pooler .* needs DATABASE_DIRECT_URL/)
    await t.rejects(buildApp(t, config, { databaseUrl: `${db.pooled}&schema=app` }), /both \?schema= and \?pooler=transaction/)
    await t.rejects(buildApp(t, config, { databaseUrl: db.pooled.replace('pooler=transaction', 'pooler=session') }), /the only value is "transaction"/)
    // The first refusal came after the backups plugin (and the schema) loaded; the app is not closed.
    const rows = execFileSync('psql', [db.direct, '-tAXc', 'SELECT count(*) FROM _fastbase_instances'], { encoding: 'utf8' }).trim()
    t.equal(rows, '0', 'the refused starts left no liveness row: a restore right after is not refused')
    const off = await buildApp(t, { ...config, realtime: { enabled: false } }, { databaseUrl: db.pooled })
    t.equal((await off.inject({ method: 'GET', url: '/api/v1/table/items/list' })).statusCode, 200, 'without realtime no direct URL is needed')
  })

  t.test('a start without a statement timeout on the database says how to set one', async (t) => {
    const warnings = async (databaseUrl: string): Promise<string> => {
      let logged = ''
      const stream = new Writable({ write (chunk, _encoding, done) { logged += String(chunk); done() } })
      const app = Fastify({ ...serverOptions, logger: { level: 'warn', stream } })
      t.teardown(() => app.close())
      await app.register(fastbase, { config: { ...config, realtime: { enabled: false } }, databaseUrl, dataDir: freshDir(t), adminServiceToken: adminToken })
      await app.ready()
      return logged
    }
    t.match(await warnings(newDatabase(t, port).pooled), /cannot set limits\.statementTimeout per connection, and the database sets none: set it on the role/)
    t.notMatch(await warnings(newDatabase(t, port, "statement_timeout = '5s'").pooled), /statementTimeout/, 'a database that sets one: no warning')
  })

  t.test('a representative part of the suite passes through the pooler', async (t) => {
    const pooledUrl = new URL(direct!)
    pooledUrl.port = String(port)
    pooledUrl.searchParams.set('pooler', 'transaction')
    const env: NodeJS.ProcessEnv = {}
    for (const [name, value] of Object.entries(process.env)) if (!/^(TAP|_TAP|NODE_OPTIONS|NODE_V8_COVERAGE)/.test(name)) env[name] = value
    Object.assign(env, { FASTBASE_TEST_DIALECT: 'postgres', FASTBASE_TEST_PG_URL: pooledUrl.toString(), FASTBASE_TEST_PG_DIRECT_URL: direct })
    const loaders = ['@tapjs/typescript/dist/esm/import.mjs', '@tapjs/mock/dist/esm/import.mjs'].map((p) => `--import=file://${join(root, 'node_modules', p)}`)
    for (const file of ['routes/tables/tables', 'routes/auth/auth', 'lib/db/migrations', 'lib/auth/stores/fleet']) {
      // The extra argument gives the run fixture folders of its own (beside the suite's run of the same file).
      const child = spawn(process.execPath, [...loaders, join('test', `${file}.test.ts`), 'through-pgbouncer'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.on('data', (d) => { output += d })
      child.stderr.on('data', (d) => { output += d })
      const [code] = await once(child, 'close') as [number | null]
      const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(output)
      t.equal(code, 0, `test/${file}.test.ts through PgBouncer: ${summary?.[0] ?? output.slice(-3000)}`)
      t.ok(summary !== null && Number(summary[2]) > 0, `test/${file}.test.ts ran its PostgreSQL tests (${summary?.[2] ?? 0} passed)`)
    }
  })
})
