// `fastbase init`, then `check`, then `npm start` of the scaffold, as a new user runs them.
import t from 'tap'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, linkDependencies, root, skip, startServer } from '../../cli-run.js'
import type {} from '../../../schemas/config.js'

t.test('init, then check, then npm start', { skip }, async (t) => {
  const parent = t.testdir({})
  const dir = join(parent, 'my-app')
  const init = await fastbase(['init', 'my-app'], { cwd: parent })
  t.equal(init.code, 0, init.stderr)
  t.match(init.stdout, /cd my-app[\s\S]*npm install[\s\S]*npm start/)
  for (const file of ['fastbase.config.ts', '.env', '.env.example', '.gitignore', 'README.md', 'package.json', 'vendor/README.md']) t.ok(existsSync(join(dir, file)), file)

  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  t.equal(pkg.name, 'my-app')
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version
  t.equal(pkg.dependencies.fastbase, `file:vendor/fastbase-${version}.tgz`, 'depends on this checkout packed into the project (not installed from a registry)')
  t.ok(existsSync(join(dir, 'vendor', `fastbase-${version}.tgz`)), 'the tarball is there')
  t.ok(pkg.scripts.start, 'npm start')
  t.same(pkg.allowScripts, { 'better-sqlite3': true, sharp: true }, 'npm 11 may build better-sqlite3 (and sharp, where no prebuilt binary fits) when fastbase comes from a registry or a tarball')
  const example = readFileSync(join(dir, '.env.example'), 'utf8')
  for (const name of ['JWT_SECRET', 'JWT_SECRET_USERS', 'ADMIN_SERVICE_TOKEN', 'DATABASE_URL']) t.match(example, new RegExp(`^${name}=$`, 'm'), `.env.example lists ${name}`)
  const dotEnv = readFileSync(join(dir, '.env'), 'utf8')
  const token = /^ADMIN_SERVICE_TOKEN=(\S{32,})$/m.exec(dotEnv)?.[1]
  t.ok(token, '.env has a generated service token')
  const config = readFileSync(join(dir, 'fastbase.config.ts'), 'utf8')
  t.match(config, /baseFields, \.\.\.authFields/)
  t.match(config, /name: 'rules'/)
  t.match(config, /fieldRules: \{ email: 'id == auth\.uid' \}/, 'the users table ships with a field rule on email')
  // Written as docs/config.md writes configs: defineConfig, sql`...` and sqlValue(), not the raw objects.
  t.match(config, /export default defineConfig\(\{/)
  t.match(config, /check: sql`length\(title\) <= 200`/)
  t.match(config, /default: sqlValue\(false\)/)
  t.notMatch(config, /\{ [ql]: /, 'no { q: ... } / { l: ... }')

  linkDependencies(dir)
  const check = await fastbase(['check'], { cwd: dir })
  t.equal(check.code, 0, check.stderr)
  t.match(check.stdout, /^config OK: 2 tables, 0 actions/)
  t.notMatch(check.stderr, /email/, 'no warning about exposed emails')
  t.match(check.stderr, `using config ${join(dir, 'fastbase.config.ts')} (FASTBASE_CONFIG), .env ${join(dir, '.env')}, database sqlite:${join(dir, 'data', 'fastbase.sqlite')}`, 'says what it found in the project folder')
  const noEnv = await fastbase(['check', join('my-app', 'fastbase.config.ts')], { cwd: parent })
  t.equal(noEnv.code, 1, 'the secrets come from .env of the folder the command runs in')
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

  // npm start, as a user runs it.
  const server = await startServer(t, dir, ['npm', 'start'])
  const url = server.url
  const health = await fetch(`${url}/api/v1/health`)
  t.equal(health.status, 200, `the scaffold serves at once:\n${server.output()}`)
  t.match(await health.json(), { status: 'ok', dialect: 'sqlite', name: 'My fastbase app' })
  const notes = await fetch(`${url}/api/v1/table/notes/list`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(notes.status, 200, 'the generated service token is the admin token')
  const anonymous = await fetch(`${url}/api/v1/table/notes/list`)
  t.same(await anonymous.json(), { items: [], total: 0 }, 'anonymous callers see no notes (listRule)')
  await server.stop()
})
