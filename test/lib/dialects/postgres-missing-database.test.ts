// A DATABASE_URL whose database does not exist (decision D99): `npm start` and `fastbase migrate` say
// so in one line with the command that creates it, not Knex's stack; the line names no password.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanEnv, fastbase, root, skip } from '../../cli-run.js'
import { dialects, freshDir } from '../../helper.js'
import { explainConnectError } from '../../../lib/dialects/postgres-reachable.js'

const base = process.env.FASTBASE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const missingUrl = (): string => {
  const url = new URL(base)
  url.password = 'not-for-logs'
  url.pathname = `/fastbase_missing_${process.pid}`
  return url.toString()
}
const config = { jwtSecret: 'missing-db-secret', appUrl: 'http://127.0.0.1', tables: [{ name: 'notes', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }] }] }
const ONE_LINE = /^fastbase could not start: database "fastbase_missing_\d+" does not exist on [^:]+: PostgreSQL does not create it on connect\. Create it once with `createdb -h \S+ (-p \d+ )?(-U \S+ )?fastbase_missing_\d+` \(or CREATE DATABASE "fastbase_missing_\d+"\), then start again\n$/

t.test('explainConnectError: only a missing database is rewritten', async (t) => {
  const missing = Object.assign(new Error('database "shop" does not exist'), { code: '3D000' })
  t.equal((explainConnectError(missing, 'postgres://app:secret@db.example.com:6543/shop') as Error).message,
    'database "shop" does not exist on db.example.com: PostgreSQL does not create it on connect. Create it once with `createdb -h db.example.com -p 6543 -U app shop` (or CREATE DATABASE "shop"), then start again')
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
  t.equal(explainConnectError(refused, 'postgres://db/shop'), refused, 'anything else is left as it is')
})

const noPostgres = dialects.includes('postgres') ? false : 'PostgreSQL is not reachable'
t.test('npm start and fastbase migrate on a database that does not exist', { skip: skip || noPostgres }, async (t) => {
  const dir = freshDir(t)
  writeFileSync(join(dir, 'fastbase.config.json'), JSON.stringify(config))
  const env = { DATABASE_URL: missingUrl() }
  const child = spawn(process.execPath, [join(root, 'scripts', 'start.mjs'), '--options', join(root, 'dist', 'app.js')], { cwd: dir, env: cleanEnv({ ...env, PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(child, 'close') as [number | null]
  t.equal(code, 1)
  t.match(stderr, ONE_LINE, 'one line saying how to create it')
  t.notMatch(stderr, /not-for-logs|\n\s+at /, 'no password, no stack')

  const migrate = await fastbase(['migrate'], { cwd: dir, env })
  t.equal(migrate.code, 1)
  t.match(migrate.stderr, /^fastbase migrate: database "fastbase_missing_\d+" does not exist on [^:]+: .*createdb/m)
  t.notMatch(migrate.stderr, /not-for-logs|\n\s+at /, 'no password, no stack')
})
