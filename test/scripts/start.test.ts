// `npm start` is `fastify start` on the built app: run the real CLI on the compiled output, with the
// environment a user would set, and talk to it over HTTP.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { adminToken } from '../helper.js'
import { listeningUrl } from '../cli-run.js'

const root = join(import.meta.dirname, '..', '..')
const cli = join(root, 'node_modules', 'fastify-cli', 'cli.js')
const builtApp = join(root, 'dist', 'app.js')

/** `fastify start <args>` on a port the OS chooses, logging at info (where it listens, listeningUrl) unless `env` says otherwise, until its health answers 200 or 20 s pass. */
async function startCli (t: Test, cwd: string, env: Record<string, string>, args: string[] = ['--options', builtApp]): Promise<{ url: string, output: () => string, child: ChildProcess }> {
  const child = spawn(process.execPath, [cli, 'start', ...args], {
    cwd,
    env: { ...process.env, PORT: '0', FASTIFY_ADDRESS: '127.0.0.1', NODE_ENV: 'production', FASTIFY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  t.teardown(() => { child.kill('SIGTERM') })
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break
    const url = listeningUrl(output)
    try {
      if (url !== undefined && (await fetch(`${url}/api/v1/health`)).ok) return { url, output: () => output, child }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`fastify start did not become healthy:\n${output}`)
}

t.test('fastify start serves the bundled example on SQLite', { skip: existsSync(builtApp) ? false : 'dist/ not built: run npm run build (npm test does)' }, async (t) => {
  const dir = t.testdir()
  const { url, output } = await startCli(t, dir, { FASTBASE_DATA_DIR: join(dir, 'data'), ADMIN_SERVICE_TOKEN: adminToken, JWT_SECRET: 'a-real-secret', JWT_SECRET_USERS: 'another', FASTIFY_LOG_LEVEL: 'info' })
  const health = await (await fetch(`${url}/api/v1/health`)).json()
  t.match(health, { status: 'ok', dialect: 'sqlite' })
  t.ok(existsSync(join(dir, 'data', 'fastbase.sqlite')), 'default database file in the data directory')
  const doc = await (await fetch(`${url}/api/v1/doc`)).json()
  t.ok(doc.paths['/api/v1/table/posts/list'], 'example tables are served')
  const admin = await fetch(`${url}/api/v1/table/users/select`, { headers: { authorization: `Bearer ${adminToken}` } })
  t.equal(admin.status, 200, 'ADMIN_SERVICE_TOKEN from the environment')
  const missing = await fetch(`${url}/api/v1/nope`)
  t.same(await missing.json(), { code: 404, message: 'Route not found - GET /api/v1/nope', data: {} })
  const outside = await fetch(`${url}/nope`)
  t.same(await outside.json(), { code: 404, message: 'Route not found - GET /nope', data: {} }, 'standalone: fastbase\'s 404 outside the API prefix too')
  t.ok(outside.headers.get('x-request-id'), 'with the request id')
  const listed = await fetch(`${url}/api/v1/panel/`, { redirect: 'manual' })
  t.equal(listed.headers.get('location'), '/panel/', 'the panel\'s listed address leads to the panel')
  t.match(output(), /Server listening/, 'info logs are on')
  t.notMatch(output(), /incoming request|request completed/, 'no log lines per request by default')
  t.notMatch(output(), /FSTDEP/, 'no deprecation warnings')
})

t.test('fastify start with FASTBASE_CONFIG and DATABASE_URL', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir({
    'project.json': JSON.stringify({
      jwtSecret: '$MY_SECRET',
      appUrl: 'http://localhost',
      tables: [{ name: 'things', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' }, { name: 'label', type: 'text', sqlType: 'text' }], extensions: [{ name: 'rules', listRule: 'true', createRule: 'true' }] }]
    })
  })
  const { url, output } = await startCli(t, dir, { FASTBASE_CONFIG: join(dir, 'project.json'), DATABASE_URL: `sqlite:${join(dir, 'custom.sqlite')}`, MY_SECRET: 's', FASTBASE_LOG_REQUESTS: 'true', FASTIFY_LOG_LEVEL: 'info' })
  const insert = await fetch(`${url}/api/v1/table/things/insert`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { id: 1, label: 'one' }, returning: '*' }) })
  t.same(await insert.json(), [{ id: 1, label: 'one' }])
  t.ok(existsSync(join(dir, 'custom.sqlite')))
  // pino writes asynchronously: give the lines a moment to arrive.
  for (let i = 0; i < 40 && !/incoming request/.test(output()); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(output(), /incoming request/, 'FASTBASE_LOG_REQUESTS=true logs every request')
  await fetch(`${url}/api/v1/table/things/list?where=${encodeURIComponent("label = 'ann@example.com'")}`)
  for (let i = 0; i < 40 && !/things\/list/.test(output()); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(output(), /"url":"\/api\/v1\/table\/things\/list"/, 'the path is logged')
  t.notMatch(output(), /ann|example\.com|where=/, 'the query string is not: caller text never reaches the logs')
})

t.test('fastify start logs through its own logger: slow answers with their request id and path, never the query string (D142)', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir()
  const { url, output } = await startCli(t, dir, { FASTBASE_DATA_DIR: join(dir, 'data'), JWT_SECRET: 'a-real-secret', JWT_SECRET_USERS: 'another', FASTBASE_SLOW_REQUEST_MS: '0.001', FASTIFY_LOG_LEVEL: 'info' })
  const slowLines = (): Array<Record<string, unknown>> => output().split('\n').filter((line) => line.includes('"slow request"')).map((line) => JSON.parse(line))
  const answer = await fetch(`${url}/api/v1/table/posts/list?where=${encodeURIComponent("title = 'ann@example.com'")}`, { headers: { 'x-request-id': 'trace-own-log' } })
  t.equal(answer.status, 200)
  await fetch(`${url}/api/v1/nope?token=secret-token`)
  // pino writes asynchronously: give the lines a moment to arrive.
  const ours = (): Array<Record<string, unknown>> => slowLines().filter((line) => line.reqId === 'trace-own-log' || line.statusCode === 404)
  for (let i = 0; i < 40 && ours().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  const [list, missing] = ours()
  t.match(list, { level: 40, reqId: 'trace-own-log', method: 'GET', path: '/api/v1/table/posts/list', statusCode: 200 }, 'over real HTTP, with the id it was sent with')
  t.type(list?.ms, 'number')
  t.match(missing, { level: 40, method: 'GET', path: '/api/v1/nope', statusCode: 404 }, 'unknown paths too')
  t.match(String(missing?.reqId), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a fresh random UUID where none was sent')
  t.notMatch(output(), /ann|example\.com|where=|secret-token/, 'no query string, no caller text')
  t.notMatch(output(), /incoming request|request completed/, 'no log lines per request')
  t.match(output(), /Server listening/, 'the server\'s own lines go through it too')
})

t.test('npm start: a config with problems is one clean message and exit code 1', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify({ jwtSecret: 'x', appUrl: 'http://l', tables: [{ name: 'a', fields: [{ name: 'b', type: 'texty', sqlType: 'text' }] }] }) })
  const child = spawn(process.execPath, [join(root, 'scripts', 'start.mjs'), '--options', builtApp], {
    cwd: dir, env: { ...process.env, PORT: '0', FASTBASE_CONFIG: join(dir, 'bad.json'), FASTBASE_DATA_DIR: join(dir, 'data') }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.equal(stderr, 'fastbase could not start: Invalid fastbase config:\n  - tables[0].fields[0].type: must be one of text, number, bool, email, url, editor, date, select, json, file, relation, password, integer, blob (did you mean "text"?)\n')
  t.notMatch(stdout, /Error|at /, 'nothing else')
})

t.test('fastify start refuses an invalid config with the list of problems', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify({ jwtSecret: 'x', appUrl: 'http://l', tables: [{ name: 'a', fields: [{ name: 'b', type: 'texty', sqlType: 'text' }] }] }) })
  const child = spawn(process.execPath, [cli, 'start', '--options', builtApp], {
    cwd: dir, env: { ...process.env, PORT: '0', FASTBASE_CONFIG: join(dir, 'bad.json'), FASTBASE_DATA_DIR: join(dir, 'data') }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const [code] = await once(child, 'exit')
  t.not(code, 0, 'exits with an error')
  t.match(output, /tables\[0\]\.fields\[0\]\.type/)
  t.notMatch(output, /\n\s+at /, 'no stack trace')
})

t.test('SIGTERM lets an upload in flight finish, then the process exits', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir()
  const { url, child } = await startCli(t, dir, {
    FASTBASE_DATA_DIR: join(dir, 'data'), JWT_SECRET: 'a-real-secret', JWT_SECRET_USERS: 'another', FASTIFY_CLOSE_GRACE_DELAY: '10000'
  })
  const boundary = 'grace-boundary'
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="values.name"\r\n\r\nAda\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="values.message"\r\n\r\nhi\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="values.photo"\r\n\r\n@filePayload\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="@filePayload"; filename="p.txt"\r\nContent-Type: text/plain\r\n\r\n`
  const answer = new Promise<string>((resolve, reject) => {
    const req = httpRequest(`${url}/api/v1/table/guestbook/insert`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => resolve(`${res.statusCode} ${body}`))
    })
    req.on('error', reject)
    req.write(head + 'first half ')
    // The signal arrives while the file part is still being received.
    setTimeout(() => { child.kill('SIGTERM') }, 300)
    setTimeout(() => { req.end(`second half\r\n--${boundary}--\r\n`) }, 1000)
  })
  t.equal(await answer, '200 []', 'the upload in flight is answered')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'then the process exits cleanly')
  const files = await readdir(join(dir, 'data', 'files', 'guestbook'))
  t.equal(files.filter((f) => f.endsWith('.tmp')).length, 0, 'no temporary file left')
  t.equal(files.filter((f) => f.endsWith('.txt')).length, 1, 'the file was stored')
})

/** Runs `fastify start <args>` (the command as a user types it, `node_modules/.bin/fastify`) until it exits, listens (stopped at once), or 15 s pass. */
async function runUntilExit (cwd: string, args: string[], env: Record<string, string>): Promise<{ code: number | null, output: string, listened: boolean }> {
  const child = spawn(join(root, 'node_modules', '.bin', 'fastify'), ['start', ...args], {
    cwd, env: { ...process.env, PORT: '0', FASTIFY_ADDRESS: '127.0.0.1', FASTIFY_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  let listened = false
  const timer = setTimeout(() => child.kill('SIGTERM'), 15_000)
  // A server that listens is not refused: stop it at once.
  const read = (d: Buffer): void => {
    output += d
    if (!listened && listeningUrl(output) !== undefined) { listened = true; child.kill('SIGTERM') }
  }
  child.stdout.on('data', read)
  child.stderr.on('data', read)
  const [code] = await once(child, 'close')
  clearTimeout(timer)
  return { code, output, listened }
}

const THINGS = JSON.stringify({
  jwtSecret: 'a-real-secret', appUrl: 'http://localhost',
  tables: [{ name: 'things', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' }], extensions: [{ name: 'rules', listRule: 'true' }] }]
})

t.test('`fastify start dist/app.js` without --options is refused with one line that says how to start it', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir({ 'project.json': THINGS })
  // As the README's reader types it, from the checkout, with a config found: the server options are what is missing.
  const typed = await runUntilExit(root, ['dist/app.js'], { FASTBASE_CONFIG: join(dir, 'project.json'), FASTBASE_DATA_DIR: join(dir, 'data'), FASTBASE_TRUST_PROXY: 'true' })
  t.not(typed.code, 0, 'exits with an error')
  t.notOk(typed.listened, 'never listens')
  t.match(typed.output, '`fastify start` without `--options` would run fastbase without its server options (FASTBASE_TRUST_PROXY ignored')
  t.match(typed.output, 'Start it with `npm start` or `fastify start --options -l info dist/app.js`')
  t.notMatch(typed.output, /\n\s+at /, 'no stack trace')
  t.notMatch(typed.output, /triggerUncaughtException|node:internal|Node\.js v/, 'not Node\'s uncaught-exception dump')
  t.equal(typed.code, 1, 'exit code 1')
  t.match(typed.output, /^fastbase could not start: /m, 'one line of its own')
  // In a project that depends on fastbase, the command names the installed app file.
  await mkdir(join(dir, 'node_modules'))
  await symlink(root, join(dir, 'node_modules', 'fastbase'), 'dir')
  const project = await runUntilExit(dir, ['node_modules/fastbase/dist/app.js'], { FASTBASE_CONFIG: join(dir, 'project.json'), FASTBASE_DATA_DIR: join(dir, 'data3') })
  t.notOk(project.listened)
  t.match(project.output, 'Start it with `npm start` or `fastify start --options -l info node_modules/fastbase/dist/app.js`')
  // Elsewhere, by absolute path, no config at all, the package entry: refused the same way (not served the demo).
  const elsewhere = await runUntilExit(dir, [join(root, 'dist', 'index.js')], { FASTBASE_DATA_DIR: join(dir, 'data2') })
  t.not(elsewhere.code, 0)
  t.notOk(elsewhere.listened)
  t.match(elsewhere.output, 'without `--options`')
})

t.test('a host app run by plain `fastify start` embeds fastbase (nothing to refuse: the host owns the server)', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir({ 'project.json': THINGS })
  const host = join(dir, 'host.mjs')
  await writeFile(host, `import fastbase from ${JSON.stringify(join(root, 'dist', 'index.js'))}
export default async function host (app, opts) {
  app.get('/host', async () => ({ host: true }))
  await app.register(fastbase, { config: ${JSON.stringify(join(dir, 'project.json'))}, dataDir: ${JSON.stringify(join(dir, 'data'))} })
}
`)
  const { url } = await startCli(t, dir, {}, [host])
  t.same(await (await fetch(`${url}/host`)).json(), { host: true })
  t.same(await (await fetch(`${url}/api/v1/table/things/list`)).json(), { items: [], total: 0 })
})

t.test('fastify start --options: FASTBASE_TRUST_PROXY takes effect (rate limits count per client, not per proxy)', { skip: existsSync(builtApp) ? false : 'dist/ not built' }, async (t) => {
  const dir = t.testdir()
  const { url } = await startCli(t, dir, { FASTBASE_DATA_DIR: join(dir, 'data'), JWT_SECRET: 'a-real-secret', JWT_SECRET_USERS: 'another', FASTBASE_TRUST_PROXY: '127.0.0.1' })
  const login = async (client: string) => (await fetch(`${url}/api/v1/table/users/auth/login-password`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' })
  })).headers.get('x-ratelimit-remaining')
  const first = Number(await login('203.0.113.1'))
  t.equal(Number(await login('203.0.113.1')), first - 1, 'the same client: its count goes down')
  t.equal(Number(await login('203.0.113.2')), first, 'another client behind the same proxy: a count of its own')
})
