// The pure parts of a restore's checks (decisions D86, D87): which entry paths a manifest may list,
// and which of an archive's tables and columns a restore loads.
import t from 'tap'
import { entriesProblem, entryPathProblem, isPlainPath, type Manifest } from '../../../lib/backup/manifest.js'
import { columnsToLoad, tablesToLoad } from '../../../lib/backup/copy-plan.js'

const sha = '0'.repeat(64)
const manifest = (paths: string[]): Manifest => ({
  format: 'fastbase-backup',
  version: 2,
  name: 'fastbase-20260101T000000000Z-000000',
  createdAt: '2026-01-01T00:00:00.000Z',
  fastbaseVersion: '0.0.0',
  appName: '',
  dialect: 'sqlite',
  database: { entry: 'database.sqlite' },
  schema: { migrations: 1, last: '00000_initial_schema' },
  tables: {},
  files: { included: true, count: 0, bytes: 0 },
  entries: paths.map((path) => ({ path, size: 1, sha256: sha }))
})

t.test('entry paths', async (t) => {
  for (const path of ['a', 'files/a', 'files/a/b.txt', 'database.sqlite']) t.ok(isPlainPath(path), `${path} is plain`)
  for (const path of ['', '/etc/passwd', 'a//b', './a', 'a/./b', '../a', 'files/../a', 'files/a\\b', 'files/a\0b', 'files/']) t.notOk(isPlainPath(path), `${JSON.stringify(path)} is not plain`)
  t.equal(entryPathProblem('database.sqlite', 'database.sqlite'), undefined)
  t.equal(entryPathProblem('files/notes/a.txt', 'database.sqlite'), undefined)
  t.match(entryPathProblem('files', 'database.sqlite'), /neither the database nor under files\//, 'files itself is no entry')
  t.match(entryPathProblem('other.txt', 'database.sqlite'), /neither the database nor under files\//)
  t.match(entryPathProblem('database.pgdump', 'database.sqlite'), /neither the database/)
  t.match(entryPathProblem('files/../../x', 'database.sqlite'), /leaves the archive's folder/)
})

t.test('the entry list as a whole', async (t) => {
  t.equal(entriesProblem(manifest(['database.sqlite', 'files/a', 'files/b/c'])), undefined, 'a sound list')
  t.match(entriesProblem(manifest(['database.sqlite', 'files/a', 'files/a'])), /lists files\/a more than once/)
  t.match(entriesProblem(manifest(['files/a'])), /names no database\.sqlite/)
  t.match(entriesProblem(manifest(['database.sqlite', 'files/a', 'files/a/b'])), /files\/a is listed as a file and as a folder/)
  t.match(entriesProblem(manifest(['database.sqlite', 'manifest.json'])), /lists itself/)
})

t.test('tables and columns to load', async (t) => {
  const made = new Set(['notes', 'notes_fts_data', '_fastbase_migrations', '_fastbase_schema', '_fastbase_instances'])
  t.same(tablesToLoad(['notes', 'notes_fts_data', '_fastbase_migrations', '_fastbase_schema', '_fastbase_instances', '_fastbase_rate_limits'], ['notes'], made),
    ['notes', '_fastbase_migrations'], 'the config\'s tables and the migration record; not the schema model, the instances, a search index\'s table or fastbase\'s own unused ones')
  t.throws(() => tablesToLoad(['notes', 'stranger'], ['notes'], made), { code: 'FB_ERR_RESTORE_REFUSED', message: /tables this config does not make \(stranger\)/ })
  t.same(columnsToLoad('notes', ['id', 'body', 'search'], { columns: ['id', 'body', 'added', 'search'], generated: ['search'] }), ['id', 'body'], 'computed columns are left to the database')
  t.throws(() => columnsToLoad('notes', ['id', 'secret'], { columns: ['id'], generated: [] }), { code: 'FB_ERR_RESTORE_REFUSED', message: /table notes: the archive has columns this config does not \(secret\)/ })
})
