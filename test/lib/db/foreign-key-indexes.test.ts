// Every foreign key gets an index (decision D95), so a relation path's lookups and its parent-side
// checks stay one indexed lookup per row: on a new database with the schema, on an existing one as a
// migration step, and never a second index where the config already declares one.
import t from 'tap'
import type { Knex } from 'knex'
import type { FastifyInstance } from 'fastify'
import { adminToken, buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'
import { withForeignKeyIndexes } from '../../../lib/db/foreign-key-indexes.js'

const posts: TableData = {
  name: 'posts',
  fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'title', type: 'text', sqlType: 'text' }]
}
const comments = (indexes?: TableData['indexes']): TableData => ({
  name: 'comments',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true },
    { name: 'post_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'posts', column: 'id' } },
    { name: 'parent', type: 'relation', sqlType: 'integer', unique: true, foreignKey: { table: 'comments', column: 'id' } }
  ],
  ...(indexes === undefined ? {} : { indexes })
})

t.test('which foreign keys get an index', async (t) => {
  const [, plain] = withForeignKeyIndexes([posts, comments()])
  t.same(plain.indexes, [{ name: 'fk_post_id', fields: ['post_id'] }], 'post_id gets one; a unique field is indexed already')
  const [, declared] = withForeignKeyIndexes([posts, comments([{ fields: '"post_id" DESC, id' }])])
  t.same(declared.indexes, [{ fields: '"post_id" DESC, id' }], 'an index that starts with the field covers it')
  const [, second] = withForeignKeyIndexes([posts, comments([{ fields: ['id', 'post_id'] }])])
  t.same(second.indexes?.map((i) => i.name), [undefined, 'fk_post_id'], 'one where the field comes second does not')
  t.equal(withForeignKeyIndexes([posts])[0], posts, 'a table without foreign keys is left as it is')
})

async function indexNames (db: Knex, dialect: DialectName, table: string): Promise<string[]> {
  if (dialect === 'sqlite') return (await db.raw('SELECT name FROM sqlite_master WHERE type = \'index\' AND tbl_name = ? AND name NOT LIKE \'sqlite_%\' ORDER BY name', [table])).map((r: { name: string }) => r.name)
  return (await db.raw('SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname NOT LIKE ? ORDER BY indexname', [table, '%_pkey'])).rows.map((r: { name: string }) => r.name)
}

forEachDialect(t, 'a new database gets the index; an existing one gets it as a migration', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  let app: FastifyInstance | undefined
  const restart = async (config: DatabaseSettings) => {
    await app?.close()
    app = await buildApp(t, config, { dialect, databaseUrl })
    return app
  }
  const config = (indexes?: TableData['indexes']): DatabaseSettings => ({ jwtSecret: 'fk-secret', appUrl: 'http://localhost', tables: [posts, comments(indexes)] })

  // An existing database whose comments were indexed by the config's own index ...
  let current = await restart(config([{ name: 'by_post', fields: 'post_id' }]))
  t.same((await indexNames(current.fastbase.db, dialect, 'comments')).filter((n) => n.startsWith('idx_')), ['idx_comments_by_post'], 'the declared index, and no second one')
  t.equal((await current.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: { authorization: `Bearer ${adminToken}` }, payload: { values: { id: 1, title: 'kept' } } })).statusCode, 200)
  // ... then the config drops it: the foreign key keeps an index of its own, made by a migration step.
  current = await restart(config())
  t.same((await indexNames(current.fastbase.db, dialect, 'comments')).filter((n) => n.startsWith('idx_')), ['idx_comments_fk_post_id'], 'the foreign key\'s own index')
  const status = (await current.inject({ method: 'GET', url: '/api/v1/migrations', headers: { authorization: `Bearer ${adminToken}` } })).json()
  t.same(status.pending, [], 'nothing pending')
  t.ok(status.migrations.some((m: { sql: string }) => /CREATE INDEX[^;]*"idx_comments_fk_post_id"/.test(m.sql)), 'recorded as a migration')
  t.same((await current.fastbase.db('posts').select('title')).map((r) => r.title), ['kept'], 'the data stays')
  current = await restart(config())
  const again = (await current.inject({ method: 'GET', url: '/api/v1/migrations', headers: { authorization: `Bearer ${adminToken}` } })).json()
  t.equal(again.migrations.length, status.migrations.length, 'a restart with the same config changes nothing')
})
