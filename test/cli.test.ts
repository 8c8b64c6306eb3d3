// The `fastbase` command as users run it: the compiled dist/lib/cli/bin.js in a subprocess
// (`npm test` builds first). Asynchronous spawns only: `exec` talks to an app in this process.
import t, { type Test } from 'tap'
import { existsSync, readFileSync, symlinkSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { adminToken, buildApp } from './helper.js'
import { cleanEnv, fastbase, root, skip } from './cli-run.js'
import { spawn } from 'node:child_process'
import { baseFields } from '../lib/config/helpers.js'
import type { DatabaseSettings } from '../schemas/config.js'

async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  server.close()
  return port
}

t.test('--help', { skip }, async (t) => {
  const top = await fastbase(['--help'])
  t.equal(top.code, 0)
  for (const command of ['check', 'init', 'exec', 'migrate']) t.match(top.stdout, new RegExp(`^  ${command} `, 'm'), `lists ${command}`)
  t.equal((await fastbase([])).code, 0, 'no command shows the help')
  for (const command of ['check', 'init', 'exec', 'migrate']) {
    const help = await fastbase([command, '--help'])
    t.equal(help.code, 0, `${command} --help`)
    t.match(help.stdout, new RegExp(`^Usage: fastbase ${command}`), `${command} --help shows its usage`)
    t.match(help.stdout, /Exit code/, `${command} --help states the exit codes`)
  }
  const unknown = await fastbase(['deploy'])
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown command "deploy"/)
  const badOption = await fastbase(['check', '--nope'])
  t.equal(badOption.code, 2)
  t.match(badOption.stderr, /Unknown option '--nope'[\s\S]*fastbase check --help/)
})

t.test('check', { skip }, async (t) => {
  const dir = t.testdir({
    'good.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
      procedures: [],
      tables: [{ name: 'items', autoSetUid: true, fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }] }]
    }),
    'broken.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: '$MISSING_SECRET',
      tabels: [],
      tables: [{ name: 'items', fields: [{ name: 'id', type: 'integr', sqlType: 'text' }, { name: 'id', type: 'text', sqlType: 'text' }] }]
    }),
    'bad-rule.json': JSON.stringify({
      appUrl: 'http://localhost:3000',
      jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
      tables: [{ name: 'items', fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true }], extensions: [{ name: 'rules', listRule: 'nope == 1' }] }]
    })
  })

  const good = await fastbase(['check', join(dir, 'good.json')])
  t.equal(good.code, 0, good.stderr)
  t.match(good.stdout, /^config OK: 1 table, 0 actions/)
  t.match(good.stderr, /^warning: .*procedures/m, 'teenybase-compatibility warnings are printed')

  const example = await fastbase(['check', join(root, 'example', 'fastbase.config.ts')], { env: { JWT_SECRET: 'x'.repeat(40), JWT_SECRET_USERS: 'y'.repeat(40) } })
  t.equal(example.code, 0, example.stderr)
  t.match(example.stdout, /^config OK: 4 tables, 0 actions/)
  const fromEnv = await fastbase(['check'], { env: { FASTBASE_CONFIG: join(dir, 'good.json') } })
  t.match(fromEnv.stdout, /^config OK: 1 table/, 'FASTBASE_CONFIG')
  const bundled = await fastbase(['check'])
  t.equal(bundled.code, 0, bundled.stderr)
  t.match(bundled.stdout, /^config OK: 4 tables/, 'the bundled example, as npm start does')
  t.match(bundled.stderr, /JWT_SECRET is not set/)

  const broken = await fastbase(['check', join(dir, 'broken.json')])
  t.equal(broken.code, 1)
  t.equal(broken.stdout, '')
  const lines = broken.stderr.trim().split('\n')
  t.match(lines[0], /broken\.json: \d+ problems/)
  for (const expected of [
    /^ {2}- jwtSecret: environment variable MISSING_SECRET is not set$/,
    /^ {2}- config: unknown key "tabels" \(did you mean "tables"\?\)$/,
    /^ {2}- tables\[0\]\.fields\[0\]\.type: .*\(did you mean "integer"\?\)$/,
    /^ {2}- tables\[0\]\.fields\[1\]\.name: duplicate field name "id"/
  ]) t.ok(lines.some((line) => expected.test(line)), `lists ${String(expected)}`)

  const badRule = await fastbase(['check', join(dir, 'bad-rule.json')])
  t.equal(badRule.code, 1, 'rules are compiled as at start')
  t.match(badRule.stderr, /tables\.items\.listRule: .*nope/)

  const missing = await fastbase(['check', join(dir, 'none.json')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /none\.json: config file not found/)

  const twoFiles = await fastbase(['check', 'a.json', 'b.json'])
  t.equal(twoFiles.code, 2)
  t.match(twoFiles.stderr, /unexpected argument: b\.json/)
})

/** `npm install` of the scaffold, without the network: links to this checkout and its fastify-cli. */
function linkDependencies (dir: string): void {
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(root, join(dir, 'node_modules', 'fastbase'), 'dir')
  symlinkSync(join(root, 'node_modules', 'fastify-cli'), join(dir, 'node_modules', 'fastify-cli'), 'dir')
}

t.test('init, then check, then npm start', { skip }, async (t) => {
  const parent = t.testdir({})
  const dir = join(parent, 'my-app')
  const init = await fastbase(['init', 'my-app'], { cwd: parent })
  t.equal(init.code, 0, init.stderr)
  t.match(init.stdout, /cd my-app[\s\S]*npm install[\s\S]*npm start/)
  for (const file of ['fastbase.config.ts', '.env', '.env.example', '.gitignore', 'README.md', 'package.json']) t.ok(existsSync(join(dir, file)), file)

  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  t.equal(pkg.name, 'my-app')
  t.equal(pkg.dependencies.fastbase, `file:${root}`, 'depends on this checkout (not installed from a registry)')
  t.ok(pkg.scripts.start, 'npm start')
  const example = readFileSync(join(dir, '.env.example'), 'utf8')
  for (const name of ['JWT_SECRET', 'JWT_SECRET_USERS', 'ADMIN_SERVICE_TOKEN', 'DATABASE_URL']) t.match(example, new RegExp(`^${name}=$`, 'm'), `.env.example lists ${name}`)
  const dotEnv = readFileSync(join(dir, '.env'), 'utf8')
  const token = /^ADMIN_SERVICE_TOKEN=(\S{32,})$/m.exec(dotEnv)?.[1]
  t.ok(token, '.env has a generated service token')
  const config = readFileSync(join(dir, 'fastbase.config.ts'), 'utf8')
  t.match(config, /baseFields, \.\.\.authFields/)
  t.match(config, /name: 'rules'/)

  linkDependencies(dir)
  const check = await fastbase(['check', '--env-file', '.env', 'fastbase.config.ts'], { cwd: dir })
  t.equal(check.code, 0, check.stderr)
  t.match(check.stdout, /^config OK: 2 tables, 0 actions/)
  const noEnv = await fastbase(['check', 'fastbase.config.ts'], { cwd: dir })
  t.equal(noEnv.code, 1, 'the secrets come from .env')
  t.match(noEnv.stderr, /environment variable JWT_SECRET is not set/)

  const again = await fastbase(['init', dir])
  t.equal(again.code, 1, 'refuses to overwrite')
  t.match(again.stderr, /not overwriting existing files in .*my-app: fastbase\.config\.ts, \.env/)
  writeFileSync(join(parent, 'README.md'), 'mine')
  const oneFile = await fastbase(['init'], { cwd: parent })
  t.equal(oneFile.code, 1)
  t.match(oneFile.stderr, /not overwriting existing file in .*: README\.md\nNothing was written/)
  t.notOk(existsSync(join(parent, 'fastbase.config.ts')), 'nothing written when one file exists')
  t.equal(readFileSync(join(parent, 'README.md'), 'utf8'), 'mine')

  // npm start, as a user runs it: in its own process group, so the server under npm stops with it.
  const port = await freePort()
  const server = spawn('npm', ['start'], { cwd: dir, env: cleanEnv({ PORT: String(port), FASTIFY_ADDRESS: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  server.stdout.on('data', (d) => { output += d })
  server.stderr.on('data', (d) => { output += d })
  const stop = (): void => { try { process.kill(-server.pid!, 'SIGTERM') } catch {} }
  t.teardown(stop)
  const url = `http://127.0.0.1:${port}`
  let health: Response | undefined
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && server.exitCode === null;) {
    health = await fetch(`${url}/api/v1/health`).catch(() => undefined)
    if (health?.ok === true) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.equal(health?.status, 200, `the scaffold serves at once:\n${output}`)
  t.match(await health?.json(), { status: 'ok', dialect: 'sqlite', name: 'My fastbase app' })
  const notes = await fetch(`${url}/api/v1/table/notes/list`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(notes.status, 200, 'the generated service token is the admin token')
  const anonymous = await fetch(`${url}/api/v1/table/notes/list`)
  t.same(await anonymous.json(), { items: [], total: 0 }, 'anonymous callers see no notes (listRule)')
  stop()
  await once(server, 'exit')
})

const execConfig: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
  tables: [{ name: 'items', autoSetUid: true, fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }] }]
}

t.test('exec against a running app', { skip }, async (t: Test) => {
  const app = await buildApp(t, execConfig)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const env = { ADMIN_SERVICE_TOKEN: adminToken, FASTBASE_URL: url }

  const insert = await fastbase(['exec', 'POST', 'table/items/insert', '{"values":{"title":"first"},"returning":["id","title"]}'], { env })
  t.equal(insert.code, 0, insert.stderr)
  const [row] = JSON.parse(insert.stdout)
  t.equal(row.title, 'first')

  const list = await fastbase(['exec', 'get', '/api/v1/table/items/list', '--url', url], { env: { ADMIN_SERVICE_TOKEN: adminToken } })
  t.equal(list.code, 0, list.stderr)
  t.match(JSON.parse(list.stdout), { items: [{ id: row.id, title: 'first' }], total: 1 }, 'GET with --url and a full /api/ path')

  const missing = await fastbase(['exec', 'GET', 'table/nope/list'], { env })
  t.equal(missing.code, 1, 'a non-2xx answer')
  t.same(JSON.parse(missing.stdout), { code: 404, message: 'Table not found - nope' })
  t.match(missing.stderr, /HTTP 404/)

  const wrongToken = await fastbase(['exec', 'GET', 'table/items/list'], { env: { ...env, ADMIN_SERVICE_TOKEN: 'wrong' } })
  t.equal(wrongToken.code, 1)

  const badMethod = await fastbase(['exec', 'FETCH', 'table/items/list'], { env })
  t.equal(badMethod.code, 2)
  t.match(badMethod.stderr, /unknown method "FETCH"/)
  const badBody = await fastbase(['exec', 'POST', 'table/items/insert', '{nope'], { env })
  t.equal(badBody.code, 2)
  t.match(badBody.stderr, /not valid JSON/)
  const noToken = await fastbase(['exec', 'GET', 'table/items/list'], { env: { FASTBASE_URL: url } })
  t.equal(noToken.code, 2)
  t.match(noToken.stderr, /ADMIN_SERVICE_TOKEN is not set/)
  const noRoute = await fastbase(['exec', 'GET'], { env })
  t.equal(noRoute.code, 2)

  await app.close()
  const refused = await fastbase(['exec', 'GET', 'table/items/list'], { env })
  t.equal(refused.code, 1, 'no server')
  t.match(refused.stderr, /connection refused/)
})
