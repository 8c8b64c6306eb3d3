// The pure parts of `fastbase copy` (decision D101) and of the pooler URL (decision D102).
import t from 'tap'
import { resolve } from 'node:path'
import { canonicalJson, TableDigest } from '../../../lib/copy/checksum.js'
import { parentsFirst, tablesToCopy, keyValue } from '../../../lib/copy/copied-tables.js'
import { batchSize } from '../../../lib/copy/database.js'
import { progressReporter, storageOf } from '../../../lib/cli/copy.js'
import { UsageError } from '../../../lib/cli/io.js'
import { postgresUrlParts } from '../../../lib/dialects/postgres-connection.js'
import type { TableData } from '../../../schemas/config.js'

const id = { name: 'id', type: 'text' as const, sqlType: 'text' as const, primary: true }
const ref = (name: string, table: string) => ({ name, type: 'relation' as const, sqlType: 'text' as const, foreignKey: { table, column: 'id' } })

t.test('tables come after the tables their foreign keys name; a cycle keeps the config order', async (t) => {
  const tables: TableData[] = [
    { name: 'comments', fields: [id, ref('post', 'posts'), ref('parent', 'comments')] },
    { name: 'posts', fields: [id, ref('author', 'users')] },
    { name: 'users', fields: [id] },
    { name: 'a', fields: [id, ref('b', 'b')] },
    { name: 'b', fields: [id, ref('a', 'a')] }
  ]
  t.same(parentsFirst(tables).map((x) => x.name), ['users', 'posts', 'comments', 'b', 'a'])
  t.same(tablesToCopy({ tables: [tables[2]] }).map((x) => x.data.name), ['users'], 'no auth table: no auth state')
  const withAuth = tablesToCopy({ tables: [{ ...tables[2], extensions: [{ name: 'auth', jwtSecret: 'users-secret' }] }] }).map((x) => x.data.name)
  t.same(withAuth, ['users', '_fastbase_sessions', '_fastbase_refresh_tokens', '_fastbase_tokens', '_fastbase_identities', '_fastbase_oauth_states', '_fastbase_email_codes', '_fastbase_mfa_factors', '_fastbase_mfa_recovery_codes', '_fastbase_mfa_challenges'])
  t.throws(() => tablesToCopy({ tables: [{ name: 'bare', fields: [{ name: 'x', type: 'text', sqlType: 'text' }] }] }), /table bare has no one-column primary key/)
  const table = tablesToCopy({ tables: [tables[2]] })[0]
  t.equal(keyValue({ id: 'k' }, table), 'k')
  t.throws(() => keyValue({ id: null }, table), /key id is null/)
})

t.test('the digest: the same rows in any order, object keys in any order; any change shows', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}')
  const rows = [[1, 'a', { x: 1, y: 2 }], [2, 'b', null], [3, 'c', [1, 2]]]
  const one = new TableDigest()
  for (const row of rows) one.add(row)
  const other = new TableDigest()
  for (const row of [rows[2], [1, 'a', { y: 2, x: 1 }], rows[1]]) other.add(row)
  t.equal(one.hex, other.hex)
  t.equal(one.rows, 3)
  const changed = new TableDigest()
  for (const row of [rows[0], rows[1], [3, 'c', [2, 1]]]) changed.add(row)
  t.not(changed.hex, one.hex, 'an array in another order is another value')
  const typed = new TableDigest()
  for (const row of [rows[0], [2, 'b', false], rows[2]]) typed.add(row)
  t.not(typed.hex, one.hex, 'false is not null')
  t.equal(new TableDigest().hex, '0'.repeat(64))
})

t.test('batches stay under both databases\' parameter limits', async (t) => {
  t.equal(batchSize(5), 500)
  t.equal(batchSize(100), 300)
  t.equal(batchSize(5, 20), 20)
  t.equal(batchSize(100_000), 1)
})

t.test('--files-to: a folder, or s3:// with the driver\'s options', async (t) => {
  // From the current directory: `./data/files-copy` is not `<data dir>/data/files-copy`.
  t.same(storageOf('./files'), { driver: 'local', root: resolve('./files') })
  t.match(storageOf('s3://bucket/some/prefix/?region=auto&endpoint=https%3A%2F%2Fr2.example.com&forcePathStyle=true'), { driver: 's3', bucket: 'bucket', prefix: 'some/prefix', region: 'auto', endpoint: 'https://r2.example.com', forcePathStyle: true })
  t.same(storageOf('s3://bucket'), { driver: 's3', bucket: 'bucket' })
  t.throws(() => storageOf('s3://bucket?accessKeyId=x'), UsageError)
  t.throws(() => storageOf('s3:///prefix'), /needs a bucket/)
})

t.test('pooler URLs: fastbase\'s parameters are taken out; schema and pooler do not mix', async (t) => {
  t.same(postgresUrlParts('postgres://u:p@h:6432/db?pooler=transaction&sslmode=require'), { connectionString: 'postgres://u:p@h:6432/db?sslmode=require', schema: undefined, pooler: true })
  t.same(postgresUrlParts('postgres://h/db?schema=app'), { connectionString: 'postgres://h/db', schema: 'app', pooler: false })
  t.throws(() => postgresUrlParts('postgres://h/db?schema=app&pooler=transaction'), /both \?schema= and \?pooler=transaction/)
  t.throws(() => postgresUrlParts('postgres://h/db?pooler=session'), /the only value is "transaction"/)
})

t.test('progress: rows and rows/s on a terminal; nothing in CI or when stderr is not a terminal', async (t) => {
  const written: string[] = []
  const terminal = { isTTY: true, write: (text: string) => written.push(text) }
  const progress = progressReporter({}, terminal)
  progress?.rows('posts', 0, 2000)
  progress?.rows('posts', 2000, 2000)
  progress?.end()
  t.match(written[0], /^\rposts: 0\/2000 rows \(0 rows\/s\)/)
  t.match(written[1], /^\rposts: 2000\/2000 rows \(\d+ rows\/s\)/, 'the end of a table always shows')
  t.equal(written.at(-1), '\n', 'the line is ended')
  t.equal(progressReporter({ CI: 'true' }, terminal), undefined)
  t.equal(progressReporter({}, { isTTY: false, write: () => {} }), undefined)
})
