// The documented examples, run as a user runs them (on SQLite and PostgreSQL):
// - examples/host-app/server.mjs is the code of docs/embedding.md ("Inside your own Fastify app"),
//   letter for letter; started outside the checkout with its dependencies installed, it serves notes
//   as that page says.
// - a scaffold from `fastbase init`: every command of its README's sh blocks is run in order, and
//   every URL it names answers. A command this test does not know fails it, so the README and the
//   test move together.
import t from 'tap'
import { appendFileSync, copyFileSync, readFileSync, readdirSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { cleanEnv, fastbase, linkDependencies, root, skip, startServer, type Server } from '../cli-run.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../helper.js'

// Servers installed and started per dialect, side by side: more than .taprc's time per file on a busy machine.
t.setTimeout(600_000)

const hostApp = join(root, 'examples', 'host-app')
const hostExtended = join(root, 'examples', 'host-extended')

/** The first ```<lang> block after the heading `heading` of a Markdown text. */
function codeBlockAfter (markdown: string, heading: string): string | undefined {
  const at = markdown.indexOf(`\n${heading}\n`)
  if (at === -1) return undefined
  return /\n```[a-z]*\n([\s\S]*?)\n```\n/.exec(markdown.slice(at))?.[1]
}

async function json (response: Response): Promise<any> {
  return await response.json()
}

t.test('the host-app example is the embedding guide\'s code', async (t) => {
  const guide = readFileSync(join(root, 'docs', 'embedding.md'), 'utf8')
  const code = codeBlockAfter(`\n${guide}`, '# Inside your own Fastify app')
  t.ok(code, 'docs/embedding.md has the example')
  t.equal(readFileSync(join(hostApp, 'server.mjs'), 'utf8'), `${code}\n`, 'examples/host-app/server.mjs is the guide\'s code block, as it is')
  t.match(guide, 'examples/host-app/server.mjs', 'the guide says where it is')
  const pkg = JSON.parse(readFileSync(join(hostApp, 'package.json'), 'utf8'))
  t.same(Object.keys(pkg.dependencies).sort(), ['fastbase', 'fastify'], 'depends on what it imports')
  t.equal(pkg.dependencies.fastbase, 'file:../..', 'on this checkout')
  // npm reads these from the root project only: without allowScripts npm 11 leaves better-sqlite3
  // without its native binding, and without the overrides Node 20 gets cookie 2 (Node 22 only).
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  t.same(pkg.allowScripts, own.allowScripts, 'allows the install scripts fastbase\'s own package allows')
  // Overrides of fastbase's own build tools (devDependencies) never reach a project that installs it.
  const installed = Object.fromEntries(Object.entries(own.overrides).filter(([name]) => !Object.hasOwn(own.devDependencies, name)))
  t.same(pkg.overrides, installed, 'carries fastbase\'s overrides of what it installs')
  t.ok(Object.keys(installed).length >= 2, 'the cookie overrides among them')
  t.match(guide, '"allowScripts": { "better-sqlite3": true, "sharp": true }', 'the guide names allowScripts')
})

t.test('the host-app example serves notes', { skip }, (t) => forEachDialect(t, 'host app', async (t, dialect) => {
  // A copy outside the checkout, installed as `npm install` would (fastbase from file:../..).
  const dir = freshDir(t, 'host-app-')
  for (const file of ['server.mjs', 'package.json']) copyFileSync(join(hostApp, file), join(dir, file))
  linkDependencies(dir, ['fastify'])
  const env = { JWT_SECRET: 'a-host-app-secret-long-enough-0123456789', ADMIN_SERVICE_TOKEN: adminToken, ...(dialect === 'postgres' ? { DATABASE_URL: sharedDatabase(t, dialect) } : {}) }
  const server = await startServer(t, dir, ['npm', 'start'], env)
  const api = `${server.url}/api/v1`
  const health = await fetch(`${api}/health`).catch(() => undefined)
  t.equal(health?.status, 200, `started:\n${server.output()}`)
  t.match(await json(health!), { dialect })

  const insert = await fetch(`${api}/table/notes/insert`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { body: 'hello from the README' }, returning: '*' }) })
  t.equal(insert.status, 200, 'anyone may write a note (createRule true)')
  const [note] = await json(insert) as Array<{ id: string, body: string }>
  t.equal(note.body, 'hello from the README')
  const list = await json(await fetch(`${api}/table/notes/list`))
  t.match(list, { items: [{ id: note.id, body: 'hello from the README' }], total: 1 }, 'and list it')

  const huge = await fetch(`${api}/table/notes/insert`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { body: 'x'.repeat(10_001) } }) })
  t.equal(huge.status, 400, 'the check bounds the text')
  for (const [operation, body] of [['update', { where: 'true', setValues: { body: 'defaced' } }], ['delete', { where: 'true' }]] as const) {
    const refused = await fetch(`${api}/table/notes/${operation}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    t.equal(refused.status, 403, `anonymous ${operation} refused (${operation}Rule null)`)
  }
  t.match(await json(await fetch(`${api}/table/notes/list`)), { items: [{ body: 'hello from the README' }], total: 1 }, 'the note is as it was')
  const admin = await fetch(`${api}/table/notes/delete`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ where: `id == '${note.id}'` }) })
  t.equal(admin.status, 200, 'the admin service token may')

  const doc = await json(await fetch(`${api}/doc`))
  t.match(doc, { openapi: /^3\./ }, 'the API document')
  t.ok(doc.paths['/api/v1/table/notes/insert'], 'describes the notes table')
  await server.stop()
}))

t.test('the host-extended example: a host route, hooks and a code action', { skip }, (t) => forEachDialect(t, 'host extended', async (t, dialect) => {
  const dir = freshDir(t, 'host-extended-')
  for (const file of ['server.mjs', 'package.json']) copyFileSync(join(hostExtended, file), join(dir, file))
  linkDependencies(dir, ['fastify', '@sinclair'])
  const env = { JWT_SECRET: 'a-host-extended-secret-long-enough-0123456789', JWT_SECRET_USERS: 'users-secret-0123456789', ...(dialect === 'postgres' ? { DATABASE_URL: sharedDatabase(t, dialect) } : {}) }
  const server = await startServer(t, dir, ['npm', 'start'], env)
  const api = `${server.url}/api/v1`
  const post = async (path: string, body: unknown, token?: string) => await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) })

  const signUp = await post('/table/users/auth/sign-up', { username: 'ada', email: 'ada@example.com', password: 'correct horse', passwordConfirm: 'correct horse', name: 'Ada' })
  t.equal(signUp.status, 200, `signed up:\n${server.output()}`)
  const { token, record } = await json(signUp) as { token: string, record: { id: string } }

  const outbox = join(dir, 'data', 'outbox')
  let mails: string[] = []
  for (let i = 0; i < 100 && mails.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    mails = (() => { try { return readdirSync(outbox) } catch { return [] } })()
  }
  t.equal(mails.length, 1, 'the afterSignUp hook sent one email')
  const mail = readFileSync(join(outbox, mails[0]), 'utf8')
  t.match(mail, /To: ada@example\.com/)
  t.match(mail, /Subject: Welcome to the blog/)
  t.match(mail, /Hello Ada, welcome!/)

  const created = await post('/table/posts/insert', { values: { owner: record.id, title: 'Hello, World!' }, returning: '*' }, token)
  const [hello] = await json(created) as Array<{ id: string, slug: string, likes: number }>
  t.match(hello, { slug: /^hello-world-[a-z0-9]+$/, likes: 0 }, 'the beforeInsert hook set the slug')
  t.same(await json(await post('/table/posts/insert', { values: { owner: record.id, title: '!!!' } }, token)), { code: 400, message: 'The title needs a letter or a digit', data: {} }, 'and refuses a title without one')
  t.equal((await post('/table/posts/insert', { values: { owner: record.id, title: 'x', slug: 'mine' } }, token)).status, 403, 'callers cannot set the slug themselves')

  t.same(await json(await post('/action/like', { id: hello.id }, token)), { id: hello.id, likes: 1 }, 'the code action')
  t.equal((await post('/action/like', { id: hello.id })).status, 401, 'requires a signed-in caller')
  t.equal((await post('/action/like', { id: 'nope' }, token)).status, 404)

  const me = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } })
  t.same(await json(me), { uid: record.id, posts: [{ id: hello.id, title: 'Hello, World!', slug: hello.slug, likes: 1 }] }, 'the host route, as its caller')
  const anonymous = await fetch(`${server.url}/me`)
  t.same([anonymous.status, await json(anonymous)], [401, { code: 401, message: 'Authentication required', data: {} }])

  const doc = await json(await fetch(`${api}/doc`))
  t.ok(doc.paths['/api/v1/action/like'], 'the code action is in the API document')
  await server.stop()
}))

/** Runs an `npm`/`npx` command line of the scaffold's README in `dir`. */
async function runLine (dir: string, line: string, env: Record<string, string>): Promise<{ code: number | null, output: string }> {
  const [command, ...args] = line.split(/\s+/)
  const child = spawn(command, args, { cwd: dir, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const [code] = await once(child, 'close') as [number | null]
  return { code, output }
}

/** The command lines of the sh blocks of a README, comments dropped. */
function shellLines (markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].split('\n')).map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l !== '')
}

t.test('a fresh scaffold, step by step as its README says', { skip }, (t) => forEachDialect(t, 'scaffold README', async (t, dialect) => {
  const parent = freshDir(t, 'scaffold-')
  const dir = join(parent, 'my-app')
  const init = await fastbase(['init', 'my-app'], { cwd: parent })
  t.equal(init.code, 0, init.stderr)
  if (dialect === 'postgres') appendFileSync(join(dir, '.env'), `DATABASE_URL=${sharedDatabase(t, dialect)}\n`)
  const readme = readFileSync(join(dir, 'README.md'), 'utf8')
  const lines = shellLines(readme)
  t.ok(lines.includes('npm install') && lines.includes('npm start'), 'the README says how to install and start')

  let server: Server | undefined
  for (const line of lines) {
    if (line === 'npm install') {
      linkDependencies(dir)
    } else if (line === 'npm start') {
      server = await startServer(t, dir, ['npm', 'start'])
      // Every URL the README names, on the port this test chose.
      for (const url of new Set(readme.match(/http:\/\/localhost:3000\/\S*[^\s.,)]/g) ?? [])) {
        const answer = await fetch(url.replace('http://localhost:3000', server.url))
        t.equal(answer.status, 200, `${url}:\n${server.output()}`)
      }
    } else if (/^(npm run |npx fastbase )/.test(line)) {
      // `npx fastbase exec` talks to the server on the port this test chose; its token comes from .env.
      const run = await runLine(dir, line, server === undefined ? {} : { FASTBASE_URL: server.url })
      t.equal(run.code, 0, `${line}:\n${run.output}`)
      if (line === 'npm run check') t.match(run.output, /config OK: 2 tables/)
      if (line.startsWith('npx fastbase exec ')) t.match(run.output, /"items": \[\]/, `${line} answers`)
    } else {
      t.fail(`a README step this test does not run: ${line}`)
    }
  }
  t.ok(server, 'the README starts the server')
  await server?.stop()
}))
