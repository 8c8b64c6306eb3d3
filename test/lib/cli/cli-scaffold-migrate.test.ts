// A new user's path, end to end (decision D53): `fastbase init`, `npm start` (tables created, rows
// written), stop, then `npx fastbase migrate --apply` as the scaffold's README and the start-up warning
// say. The CLI must find the scaffold's config, .env and database (as the server did) and drop nothing.
// On both dialects: PostgreSQL through DATABASE_URL in the scaffold's .env.
import t from 'tap'
import { appendFileSync, mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, linkDependencies, root, skip, startServer } from '../../cli-run.js'
import { forEachDialect, sharedDatabase } from '../../helper.js'
import { connect } from '../../../lib/dialects/index.js'

async function count (databaseUrl: string, dataDir: string, table: string): Promise<number> {
  const connection = connect(databaseUrl, dataDir)
  try {
    await connection.prepare()
    const [row] = await connection.knex(table).count({ n: '*' })
    return Number(row.n)
  } finally {
    await connection.close()
  }
}

t.test('a fresh scaffold: npm start, rows written, then migrate --apply drops nothing', { skip }, (t) => forEachDialect(t, 'scaffold', async (t, dialect) => {
  const parent = t.testdir({})
  const dir = join(parent, 'my-app')
  t.equal((await fastbase(['init', 'my-app'], { cwd: parent })).code, 0)
  linkDependencies(dir)
  const databaseUrl = dialect === 'postgres' ? sharedDatabase(t, dialect) : `sqlite:${join(dir, 'data', 'fastbase.sqlite')}`
  if (dialect === 'postgres') appendFileSync(join(dir, '.env'), `DATABASE_URL=${databaseUrl}\n`)

  const server = await startServer(t, dir, ['npm', 'start'])
  const signUp = await fetch(`${server.url}/api/v1/table/users/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ann', email: 'ann@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'Ann' })
  })
  t.equal(signUp.status, 200, `signed up:\n${server.output()}`)
  const { token, record } = await signUp.json() as { token: string, record: { id: string } }
  const note = await fetch(`${server.url}/api/v1/table/notes/insert`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ values: { owner_id: record.id, title: 'keep me' } })
  })
  t.equal(note.status, 200, 'a note written')
  await server.stop()
  t.match(server.output(), `fastbase: using config ${join(dir, 'fastbase.config.ts')}, .env ${join(dir, '.env')}, database ${dialect === 'postgres' ? 'postgres://' : databaseUrl}`, 'the server says what it used')

  // As the README says: npx fastbase migrate --apply, in the project folder.
  const migrate = await fastbase(['migrate', '--apply'], { cwd: dir })
  t.equal(migrate.code, 0, `${migrate.stdout}\n${migrate.stderr}`)
  t.match(migrate.stderr, `using config ${join(dir, 'fastbase.config.ts')} (FASTBASE_CONFIG), .env ${join(dir, '.env')}, database`, 'the CLI found the project\'s config and .env')
  t.match(migrate.stdout, /nothing applied, the database matches the config/)
  t.notMatch(migrate.stdout, /drop_table/)
  const dataDir = join(dir, 'data')
  t.equal(await count(databaseUrl, dataDir, 'users'), 1, 'the user is still there')
  t.equal(await count(databaseUrl, dataDir, 'notes'), 1, 'the note is still there')

  // Even the bundled example, named by mistake on this database, plans no drop of the project's tables.
  const wrong = await fastbase(['migrate', join(root, 'examples', 'bundled', 'fastbase.config.ts')], { cwd: dir })
  t.equal(wrong.code, 0, wrong.stderr)
  t.notMatch(wrong.stdout, /drop_table_(notes|users)/, 'another project\'s config never drops this one\'s tables')

  // Outside a project (and outside the fastbase checkout) there is no config to guess.
  const elsewhere = await fastbase(['migrate', '--apply'], { cwd: mkdtempSync(join(parent, 'empty-')), env: { DATABASE_URL: databaseUrl } })
  t.equal(elsewhere.code, 1)
  t.match(elsewhere.stderr, /no config found in .*: pass the config file as an argument, set FASTBASE_CONFIG/)
  t.equal(await count(databaseUrl, dataDir, 'notes'), 1)
}))
