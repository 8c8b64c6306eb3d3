// `fastbase migrate` as users run it: the compiled CLI in a subprocess against a real database on
// both dialects (a file of its own: each run starts a Node process, and tap times files out).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, skip } from '../../cli-run.js'
import { forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'


const migrateConfig = (fields: DatabaseSettings['tables'][number]['fields']): DatabaseSettings => ({
  jwtSecret: 'cli-migrate-secret',
  appUrl: 'http://127.0.0.1',
  tables: [{ name: 'notes', fields, extensions: [{ name: 'rules', listRule: 'true' }] }]
})

t.test('migrate', { skip }, (t) => forEachDialect(t, 'migrate', async (t, dialect) => {
  const dir = t.testdir()
  const file = join(dir, 'fastbase.config.json')
  const databaseUrl = sharedDatabase(t, dialect)
  const env = { DATABASE_URL: databaseUrl }
  const noteFields = [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true }, { name: 'body', type: 'text', sqlType: 'text' }] as const
  writeFileSync(file, JSON.stringify(migrateConfig([...noteFields])))

  const plan = await fastbase(['migrate', file], { env })
  t.equal(plan.code, 0, plan.stderr)
  t.match(plan.stdout, /\d migrations? pending; run with --apply/)
  t.match(plan.stdout, /create_table_notes\n {4}CREATE TABLE "notes" \(/, 'each step with its SQL')
  const applied = await fastbase(['migrate', file, '--apply'], { env })
  t.equal(applied.code, 0, applied.stderr)
  t.match(applied.stdout, /applied 1 migration\n {2}00000_initial_schema/)
  t.match((await fastbase(['migrate', file], { env })).stdout, /nothing to do, the database matches the config/)

  // A destructive change (a dropped column) is printed with its reason; --apply applies the safe
  // step and holds the destructive one back (exit 1, saying how); --allow-destructive applies it.
  writeFileSync(file, JSON.stringify(migrateConfig([noteFields[0], { name: 'title', type: 'text', sqlType: 'text' }])))
  const destructive = await fastbase(['migrate', file], { env })
  t.equal(destructive.code, 0)
  t.match(destructive.stdout, /pending \(1 destructive\); run with --apply to apply the safe ones, --apply --allow-destructive for all/)
  t.match(destructive.stdout, /\[destructive: column body is no longer in the config: dropping it deletes its values\]/)
  t.match(destructive.stdout, /add_column_notes_title\n {4}ALTER TABLE "notes" ADD COLUMN "title"/)
  const safe = await fastbase(['migrate', file, '--apply'], { env })
  t.equal(safe.code, 1, 'something was held back')
  t.match(safe.stdout, /applied 1 migration\n {2}00001_add_column_notes_title/)
  t.match(safe.stderr, /held back 1 migration[\s\S]*(drop_column_notes_body|rebuild_table_notes|add_column_notes_title)?[\s\S]*fastbase migrate --apply --allow-destructive/)
  const both = await fastbase(['migrate', file, '--apply', '--allow-destructive'], { env })
  t.equal(both.code, 0, both.stderr)
  t.match(both.stdout, /applied 1 migration\n {2}00002_(drop_column_notes_body|rebuild_table_notes)/)
  t.match((await fastbase(['migrate', file], { env })).stdout, /nothing to do/)
  t.equal((await fastbase(['migrate', file, '--allow-destructive'], { env })).code, 2, '--allow-destructive goes with --apply')

  // Failures: a config with problems, a database that is not there, a wrong command line.
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...migrateConfig([...noteFields]), tables: [{ name: 'notes', fields: [] }] }))
  const bad = await fastbase(['migrate', join(dir, 'bad.json')], { env })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /bad\.json: \d+ problems?/)
  if (dialect === 'postgres') {
    const down = await fastbase(['migrate', file], { env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' } })
    t.equal(down.code, 1)
    t.match(down.stderr, /^fastbase migrate: .*ECONNREFUSED/m)
  }
  const usage = await fastbase(['migrate', file, 'extra'], { env })
  t.equal(usage.code, 2)
  t.match(usage.stderr, /unexpected argument: extra/)
}))

