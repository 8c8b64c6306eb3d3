// The database layer below the app: DDL per dialect, connection settings, start-up schema sync and
// the database plugin. Runs on SQLite and, when configured, PostgreSQL.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import type { Knex } from 'knex'
import pg from 'pg'
import type { DatabaseSettings, TableData } from '../../../schemas/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'
import { constraintName, forwardReferences, sortByDependencies } from '../../../lib/dialects/ddl.js'
import { sqliteDdl } from '../../../lib/dialects/sqlite-ddl.js'
import { postgresDdl } from '../../../lib/dialects/postgres-ddl.js'
import { connect, schemaDialect } from '../../../lib/dialects/index.js'
import { resolveLimits } from '../../../lib/limits.js'
import { sqliteFilename } from '../../../lib/dialects/sqlite-connection.js'
import { INITIAL_MIGRATION, MIGRATIONS_TABLE, SCHEMA_TABLE, migrate, migrationStatus, type MigrationDatabase, type MigrationLog } from '../../../lib/db/migrations.js'
import { openDatabase } from '../../../lib/kernel/database.js'
import { Lifecycle } from '../../../lib/kernel/lifecycle.js'
import { buildApp, forEachDialect, freshDir, openTestDatabase, sharedDatabase } from '../../helper.js'

const quietLog: MigrationLog = { info: () => {}, warn: () => {} }
const target = (knex: Knex, dialect: DialectName): MigrationDatabase => ({ knex, ddl: schemaDialect(dialect), dialect, log: quietLog })
/** What the start-up sync does: the whole schema on an empty database, then the safe changes. */
const syncSchema = async (knex: Knex, dialect: DialectName, cfg: DatabaseSettings) => await migrate(target(knex, dialect), cfg.tables, { mode: 'start' })
const BOOKKEEPING = [MIGRATIONS_TABLE, SCHEMA_TABLE]

// ---- a config that uses every field option and every sqlType ----

const owners: TableData = {
  name: 'owners',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
    { name: 'email', type: 'email', sqlType: 'text', unique: true, notNull: true, collate: 'NOCASE' },
    { name: 'age', type: 'integer', sqlType: 'integer', check: { q: 'age >= 0' } }
  ]
}

const things: TableData = {
  name: 'things',
  fields: [
    { name: 'id', type: 'text', sqlType: 'text', primary: true },
    { name: 'owner_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'owners', column: 'id', onUpdate: 'CASCADE', onDelete: 'SET NULL' } },
    { name: 'c_text', type: 'text', sqlType: 'text', default: { l: "it's" } },
    { name: 'c_integer', type: 'integer', sqlType: 'integer', default: { l: 42 } },
    { name: 'c_real', type: 'number', sqlType: 'real', default: { l: 1.5 } },
    { name: 'c_blob', type: 'blob', sqlType: 'blob' },
    { name: 'c_null', type: 'text', sqlType: 'null' },
    { name: 'c_json', type: 'json', sqlType: 'json', default: { l: { a: [1, 'x'] } } },
    { name: 'c_date', type: 'date', sqlType: 'date' },
    { name: 'c_datetime', type: 'date', sqlType: 'datetime' },
    { name: 'c_time', type: 'text', sqlType: 'time' },
    { name: 'c_timestamp', type: 'date', sqlType: 'timestamp', notNull: true, default: { q: 'CURRENT_TIMESTAMP' } },
    { name: 'c_float', type: 'number', sqlType: 'float' },
    { name: 'c_int', type: 'integer', sqlType: 'int', default: '7' },
    { name: 'c_boolean', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
    { name: 'c_numeric', type: 'number', sqlType: 'numeric', default: { q: '2.5' } },
    { name: 'c_select', type: 'select', sqlType: 'text', values: ['a', 'b'], collate: 'BINARY', check: { q: "c_select IN ('a', 'b')" } }
  ],
  indexes: [
    { fields: 'c_text COLLATE NOCASE, c_integer DESC' },
    { name: 'owner', fields: ['owner_id'] },
    { unique: true, fields: ['c_int'], where: { q: 'c_int > {:min}', p: { min: 100 } } }
  ],
  triggers: [
    { name: 'audit', event: 'INSERT', seq: 'AFTER', body: { q: 'INSERT INTO "audit" ("thing") VALUES (NEW."id")' } },
    { name: 'touch', event: 'UPDATE', seq: 'AFTER', updateOf: ['c_text'], forEach: 'ROW', body: [{ q: 'UPDATE \u0000TABLEREF\u0000 SET c_integer = c_integer + 1 WHERE id = NEW.id;' }] },
    { name: 'locked', event: 'DELETE', when: { q: 'OLD.c_integer = 13' }, body: { q: "SELECT RAISE(ABORT, 'thing is locked')" }, dialect: 'sqlite' },
    { name: 'locked', event: 'DELETE', when: { q: 'OLD.c_integer = 13' }, body: { q: "RAISE EXCEPTION 'thing is locked'" }, dialect: 'postgres' }
  ]
}

const audit: TableData = {
  name: 'audit',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
    { name: 'thing', type: 'text', sqlType: 'text', notNull: true }
  ]
}

const settings = (tables: TableData[]): DatabaseSettings => ({ tables, jwtSecret: 'secret', appUrl: 'http://localhost' })

// `things` comes first on purpose: the sync must create `owners` before it (foreign key).
const config = settings([things, owners, audit])

async function syncedDatabase (t: Test, dialect: DialectName, cfg = config): Promise<Knex> {
  const { knex } = await openTestDatabase(t, dialect)
  await syncSchema(knex, dialect, cfg)
  return knex
}

const SQLITE_DATE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/

// ---- pure DDL ----

t.test('defaults render per dialect', async (t) => {
  const createTable = (ddl: typeof sqliteDdl) => ddl.createTable(things, config.tables).find((s) => s.startsWith('CREATE TABLE'))!
  const sqlite = createTable(sqliteDdl)
  const postgres = createTable(postgresDdl)
  t.match(postgresDdl.createTable(things, config.tables)[0], 'CREATE COLLATION IF NOT EXISTS "fastbase_nocase"', 'NOCASE needs its collation first')
  t.match(sqlite, `"c_text" TEXT DEFAULT 'it''s'`, 'a quote in a string is doubled')
  t.match(postgres, `"c_text" text COLLATE "C" DEFAULT 'it''s'`)
  t.match(sqlite, `"c_boolean" BOOLEAN NOT NULL DEFAULT 0`, 'booleans are 1/0 on SQLite')
  t.match(postgres, `"c_boolean" boolean NOT NULL DEFAULT false`, 'booleans are true/false on PostgreSQL')
  t.match(sqlite, `"c_json" JSON DEFAULT '{"a":[1,"x"]}'`, 'objects are JSON text')
  t.match(postgres, `"c_json" jsonb DEFAULT '{"a":[1,"x"]}'`)
  t.match(sqlite, `"c_timestamp" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))`, 'date CURRENT_TIMESTAMP stores the app format')
  t.match(postgres, '"c_timestamp" timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP')
  t.match(sqlite, '"c_int" INT DEFAULT 7', 'a bare string is raw SQL')
  t.match(sqlite, '"c_numeric" NUMERIC DEFAULT 2.5')
  t.match(sqlite, '"id" TEXT PRIMARY KEY')
})

t.test('literal edge cases', async (t) => {
  const table = (field: TableData['fields'][number]): TableData => ({ name: 'x', fields: [field] })
  const create = (ddl: typeof sqliteDdl, field: TableData['fields'][number]) => ddl.createTable(table(field), [])[0]!
  t.match(create(postgresDdl, { name: 'b', type: 'integer', sqlType: 'boolean', default: { l: true } }), '"b" bigint DEFAULT 1',
    'a bool literal in a non-boolean PostgreSQL column is 1/0')
  t.match(create(postgresDdl, { name: 'b', type: 'bool', sqlType: 'integer', default: { l: 1 } }), '"b" boolean DEFAULT true',
    'a 0/1 literal in a boolean column is true/false')
  t.match(create(sqliteDdl, { name: 'j', type: 'json', sqlType: 'json', default: { l: '[1,2]' } }), `DEFAULT '[1,2]'`,
    'a json field keeps a string that is JSON text')
  t.match(create(sqliteDdl, { name: 'j', type: 'json', sqlType: 'json', default: { l: 'guest' } }), `DEFAULT '"guest"'`,
    'a json field stores other strings as JSON strings')
  t.match(create(sqliteDdl, { name: 'n', type: 'text', sqlType: 'text', default: { l: null } }), 'DEFAULT NULL')
  t.match(create(sqliteDdl, { name: 'd', type: 'text', sqlType: 'timestamp', default: { q: 'CURRENT_TIMESTAMP' } }), 'DEFAULT CURRENT_TIMESTAMP',
    'only date fields get the millisecond format')
  t.throws(() => create(sqliteDdl, { name: 'q', type: 'text', sqlType: 'text', default: { q: '{:missing}' } }), /missing/)
  t.throws(() => create(postgresDdl, { name: 'r', type: 'text', sqlType: 'text', collate: 'RTRIM' }), /RTRIM/)
})

t.test('column types follow the field type where it matters', async (t) => {
  const pgType = (type: string, sqlType: string) => postgresDdl.columnType({ name: 'c', type, sqlType } as TableData['fields'][number])
  t.equal(pgType('bool', 'integer'), 'boolean')
  t.equal(pgType('json', 'text'), 'jsonb')
  t.equal(pgType('date', 'text'), 'timestamptz')
  t.equal(pgType('text', 'timestamp'), 'text', 'a text field on a timestamp column stays text')
  t.equal(pgType('integer', 'boolean'), 'bigint')
  t.equal(pgType('number', 'float'), 'double precision')
  t.equal(pgType('blob', 'blob'), 'bytea')
  t.equal(pgType('text', 'null'), 'text')
  t.equal(sqliteDdl.columnType({ name: 'c', type: 'bool', sqlType: 'boolean' }), 'BOOLEAN')
  t.equal(sqliteDdl.columnType({ name: 'c', type: 'integer', sqlType: 'integer', autoIncrement: true }), 'INTEGER')
  t.equal(postgresDdl.columnType({ name: 'c', type: 'integer', sqlType: 'integer', autoIncrement: true }), 'bigint')
})

t.test('a composite primary key', async (t) => {
  const table: TableData = {
    name: 'pairs',
    fields: [
      { name: 'a', type: 'text', sqlType: 'text', primary: true },
      { name: 'b', type: 'text', sqlType: 'text', primary: true }
    ]
  }
  t.match(sqliteDdl.createTable(table, [])[0], /"a" TEXT,\n {2}"b" TEXT,\n {2}PRIMARY KEY \("a", "b"\)/)
})

t.test('tables are ordered by foreign keys', async (t) => {
  t.same(sortByDependencies(config.tables).map((x) => x.name), ['owners', 'things', 'audit'])
  const a: TableData = { name: 'a', fields: [{ name: 'b', type: 'relation', sqlType: 'text', foreignKey: { table: 'b', column: 'id' } }] }
  const b: TableData = { name: 'b', fields: [{ name: 'id', type: 'relation', sqlType: 'text', primary: true, foreignKey: { table: 'a', column: 'b' } }] }
  t.same(sortByDependencies([a, b]).map((x) => x.name), ['b', 'a'], 'a cycle is ordered, not refused (its forward key is added later)')
  t.same(forwardReferences(b, sortByDependencies([a, b])).map((f) => f.name), ['id'])
  const self: TableData = { name: 's', fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true }, { name: 'p', type: 'relation', sqlType: 'text', foreignKey: { table: 's', column: 'id' } }] }
  t.same(sortByDependencies([self]).map((x) => x.name), ['s'], 'a self-reference is fine')
})

t.test('sqlite URLs', async (t) => {
  t.equal(sqliteFilename('sqlite::memory:'), ':memory:')
  t.equal(sqliteFilename('sqlite:data/x.db'), resolve('data/x.db'))
  t.equal(sqliteFilename('sqlite:///tmp/x.db'), '/tmp/x.db')
  t.equal(sqliteFilename('file:///tmp/x.db'), '/tmp/x.db')
  t.equal(sqliteFilename('file:rel.db'), resolve('rel.db'))
  t.equal(sqliteFilename('/abs/x.db'), '/abs/x.db')
})

// ---- DDL against real databases ----

t.test('every field option and sqlType', (t) => forEachDialect(t, 'every field option and sqlType', async (t, dialect) => {
  const knex = await syncedDatabase(t, dialect)
  const [owner] = await knex('owners').insert({ email: 'Ann@example.com', age: 30 }).returning('id') as Array<{ id: number }>
  const ownerId = owner!.id
  t.equal(typeof ownerId, 'number', 'autoIncrement ids are numbers')
  await knex('things').insert({ id: 't1', owner_id: ownerId })
  const row = await knex('things').where({ id: 't1' }).first()
  t.equal(row.c_text, "it's")
  t.equal(row.c_integer, 42)
  t.equal(row.c_real, 1.5)
  t.equal(row.c_int, 7)
  t.equal(row.c_numeric, 2.5)
  t.equal(row.c_boolean, dialect === 'sqlite' ? 0 : false)
  if (dialect === 'sqlite') {
    t.equal(row.c_json, '{"a":[1,"x"]}')
    t.match(row.c_timestamp, SQLITE_DATE, 'CURRENT_TIMESTAMP default in the app format')
  } else {
    t.same(row.c_json, { a: [1, 'x'] })
    t.type(row.c_timestamp, Date)
  }
  t.equal(row.c_null, null)

  await knex('things').insert({ id: 't2', c_blob: Buffer.from([0, 1, 255]), c_select: 'b', c_float: 0.25, c_time: '12:30:00', c_date: '2026-11-21 00:00:00.000Z' })
  const t2 = await knex('things').where({ id: 't2' }).first()
  t.same([...t2.c_blob], [0, 1, 255], 'blobs round-trip')
  t.equal(t2.c_float, 0.25)

  t.same(await knex('audit').orderBy('id').pluck('thing'), ['t1', 't2'], 'a trigger for both dialects runs')
  await knex('things').where({ id: 't1' }).update({ c_text: 'changed' })
  t.equal((await knex('things').where({ id: 't1' }).first()).c_integer, 43, 'UPDATE OF trigger with the table placeholder runs')
  await knex('things').where({ id: 't2' }).update({ c_integer: 13 })
  await t.rejects(knex('things').where({ id: 't2' }).delete(), /thing is locked/, 'the trigger of this dialect runs')

  await t.rejects(knex('owners').insert({ email: 'ann@EXAMPLE.com' }), 'NOCASE unique is case-insensitive')
  await t.rejects(knex('owners').insert({ email: null }), 'notNull')
  await t.rejects(knex('owners').insert({ email: 'b@example.com', age: -1 }), 'check')
  await t.rejects(knex('things').insert({ id: 't3', c_select: 'c' }), 'check on a select field')
  await t.rejects(knex('things').insert({ id: 't3', owner_id: 999 }), 'foreign key')
  await t.rejects(knex('things').insert({ id: 't1' }), 'primary key')
  await knex('things').insert([{ id: 'u1', c_int: 101 }])
  await t.rejects(knex('things').insert({ id: 'u2', c_int: 101 }), 'partial unique index above its threshold')
  await knex('things').insert([{ id: 'u3', c_int: 5 }, { id: 'u4', c_int: 5 }])

  await knex('owners').where({ id: ownerId }).update({ id: 500 })
  t.equal((await knex('things').where({ id: 't1' }).first()).owner_id, 500, 'ON UPDATE CASCADE')
  await knex('owners').where({ id: 500 }).delete()
  t.equal((await knex('things').where({ id: 't1' }).first()).owner_id, null, 'ON DELETE SET NULL')

  await knex('things').insert([{ id: 'b' }, { id: 'B' }, { id: 'a' }])
  t.same(await knex('things').whereIn('id', ['a', 'b', 'B']).orderBy('id').pluck('id'), ['B', 'a', 'b'], 'text sorts byte-wise on both dialects')

  const indexes = dialect === 'sqlite'
    ? await knex('sqlite_master').where({ type: 'index', tbl_name: 'things' }).pluck('name')
    : await knex('pg_indexes').where({ tablename: 'things' }).whereRaw('schemaname = current_schema()').pluck('indexname')
  t.same(indexes.filter((n: string) => n.startsWith('idx_')).sort(), ['idx_things_c_int', 'idx_things_c_text_c_integer', 'idx_things_owner'])
}))

t.test('constraint names', (t) => forEachDialect(t, 'constraint names', async (t, dialect) => {
  const knex = await syncedDatabase(t, dialect)
  t.equal(constraintName('owners', 'email', 'key'), 'owners_email_key')
  t.equal(constraintName('t'.repeat(40), 'c'.repeat(40), 'check').length, 63, 'names are cut like PostgreSQL cuts them')
  if (dialect === 'postgres') {
    const names = await knex('pg_constraint').whereRaw('connamespace = current_schema()::regnamespace').pluck('conname')
    for (const name of ['owners_email_key', 'owners_age_check', 'things_owner_id_fkey', 'things_c_select_check']) {
      t.ok(names.includes(name), `constraint ${name}`)
    }
  }
  await knex('owners').insert({ email: 'a@example.com' })
  const failure = async (query: Knex.QueryBuilder) => {
    try {
      await query
    } catch (err) {
      return err as Error & { constraint?: string }
    }
    throw new Error('query did not fail')
  }
  const unique = await failure(knex('owners').insert({ email: 'a@example.com' }))
  const check = await failure(knex('owners').insert({ email: 'c@example.com', age: -1 }))
  const fk = await failure(knex('things').insert({ id: 'x', owner_id: 999 }))
  if (dialect === 'postgres') {
    t.equal(unique.constraint, 'owners_email_key')
    t.equal(check.constraint, 'owners_age_check')
    t.equal(fk.constraint, 'things_owner_id_fkey')
  } else {
    t.match(unique.message, 'UNIQUE constraint failed: owners.email')
    t.match(check.message, 'CHECK constraint failed: owners_age_check', 'SQLite names the check constraint too')
    t.match(fk.message, 'FOREIGN KEY constraint failed')
  }
}))

// ---- schema sync ----

t.test('schema sync on start', (t) => forEachDialect(t, 'schema sync', async (t, dialect) => {
  const { knex } = await openTestDatabase(t, dialect)
  const first = await syncSchema(knex, dialect, config)
  t.same(first.created, [...BOOKKEEPING, 'owners', 'things', 'audit'])
  t.same(first.applied.map((m) => m.name), [INITIAL_MIGRATION])
  t.same(first.pending, [])
  for (const table of ['owners', 'things', 'audit']) t.ok(await knex.schema.hasTable(table), `${table} exists`)
  const { migrations } = await migrationStatus(target(knex, dialect), config.tables)
  t.equal(migrations.length, 1)
  t.equal(migrations[0].name, INITIAL_MIGRATION)
  t.match(migrations[0].sql, 'CREATE TABLE "owners"')
  t.match(migrations[0].applied_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.ok(Math.abs(Date.parse(migrations[0].applied_at) - Date.now()) < 60_000, 'applied_at is now, in UTC')

  t.same(await syncSchema(knex, dialect, config), { applied: [], pending: [], created: [] }, 'the second sync is a no-op')
  t.equal(Number((await knex(MIGRATIONS_TABLE).count({ n: '*' }))[0]!.n), 1)

  const extra: TableData = { name: 'extra', fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true }] }
  const later = await syncSchema(knex, dialect, settings([...config.tables, extra]))
  t.same([later.created, later.applied.map((m) => m.name)], [['extra'], ['00001_create_table_extra']], 'a new table is appended as a migration')
  t.same(await knex(MIGRATIONS_TABLE).orderBy('id').pluck('name'), [INITIAL_MIGRATION, '00001_create_table_extra'])
}))

t.test('schema sync records the initial schema on a fresh database with no tables', (t) => forEachDialect(t, 'empty config', async (t, dialect) => {
  const { knex } = await openTestDatabase(t, dialect)
  const result = await syncSchema(knex, dialect, settings([]))
  t.same([result.created, result.applied.map((m) => m.name)], [BOOKKEEPING, [INITIAL_MIGRATION]])
}))

t.test('schema sync leaves a failed sync without a trace', (t) => forEachDialect(t, 'failed sync rolls back', async (t, dialect) => {
  const { knex } = await openTestDatabase(t, dialect)
  const broken: TableData = { name: 'broken', fields: [{ name: 'x', type: 'text', sqlType: 'text', default: { q: 'this is not sql' } }] }
  await t.rejects(syncSchema(knex, dialect, settings([owners, broken])))
  t.notOk(await knex.schema.hasTable('owners'), 'no table was created')
  t.notOk(await knex.schema.hasTable(MIGRATIONS_TABLE), 'nothing was recorded')
}))

// Two instances starting at once. In one process two better-sqlite3 connections would block each
// other's thread, so on SQLite each sync runs in its own child process.
t.test('concurrent syncs', (t) => forEachDialect(t, 'concurrent syncs on one database', async (t, dialect) => {
  const url = sharedDatabase(t, dialect)
  const syncs = dialect === 'postgres'
    ? [syncIn(t, url), syncIn(t, url), syncIn(t, url)]
    : await startTogether([childSync(url), childSync(url)])
  const results = await Promise.all(syncs)
  t.same(results.map((r) => r.created.includes('owners')).sort(), [...syncs.slice(1).map(() => false), true], 'exactly one sync created the tables')
  const { knex } = connect(url, '')
  t.teardown(() => knex.destroy())
  t.same(await knex(MIGRATIONS_TABLE).pluck('name'), [INITIAL_MIGRATION])
}))

async function syncIn (t: Test, url: string) {
  const connection = connect(url, '')
  t.teardown(connection.close)
  await connection.prepare()
  return syncSchema(connection.knex, connection.dialectName, config)
}

function moduleUrl (path: string): string {
  return JSON.stringify(pathToFileURL(resolve(path)).href)
}

interface ChildSync {
  ready: Promise<void>
  go(): void
  /** Ends the child: one that failed to start leaves the others waiting for `go`. */
  kill(): void
  result: Promise<{ created: string[] }>
}

/**
 * syncSchema in a fresh node process (with tap's TypeScript loader). The child loads its modules
 * and connects, says `ready`, and syncs when told `go`, so that several children sync at once.
 */
function childSync (url: string): ChildSync {
  const code = `
    import { connect, schemaDialect } from ${moduleUrl('lib/dialects/index.ts')}
    import { migrate } from ${moduleUrl('lib/db/migrations.ts')}
    const { knex } = connect(${JSON.stringify(url)}, '')
    await knex.raw('SELECT 1')
    process.stdout.write('ready\\n')
    await new Promise((resolve) => process.stdin.once('data', resolve))
    const log = { info () {}, warn () {} }
    const result = await migrate({ knex, ddl: schemaDialect('sqlite'), dialect: 'sqlite', log }, ${JSON.stringify(config.tables)}, { mode: 'start' })
    await knex.destroy()
    process.stdout.write(JSON.stringify(result))
    process.stdin.destroy()
  `
  const loader = process.execArgv.filter((arg) => arg.includes('@tapjs/typescript'))
  const child = spawn(process.execPath, [...loader, '--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      out += d
      if (out.startsWith('ready\n')) resolve()
    })
  })
  const result = new Promise<{ created: string[] }>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => (code === 0
      ? resolve(JSON.parse(out.slice('ready\n'.length)))
      : reject(new Error(`child sync failed (${code}): ${err}`))))
  })
  return { ready: Promise.race([ready, result.then(() => {})]), go: () => child.stdin.write('go\n'), kill: () => child.kill(), result }
}

async function startTogether (children: ChildSync[]) {
  try {
    await Promise.all(children.map((c) => c.ready))
  } catch (err) {
    for (const c of children) c.kill()
    throw err
  }
  for (const c of children) c.go()
  return children.map((c) => c.result)
}

// ---- connections ----

t.test('a statement prepared before a schema change still runs after it', (t) => forEachDialect(t, 'stale prepared statements', async (t, dialect) => {
  const { knex, direct } = await openTestDatabase(t, dialect)
  await knex.raw('CREATE TABLE "stale" ("id" INTEGER PRIMARY KEY, "n" INTEGER)')
  await knex('stale').insert({ id: 1, n: 2 })
  const statement = { sql: 'SELECT * FROM "stale" WHERE "id" = ?', native: dialect === 'postgres' ? 'SELECT * FROM "stale" WHERE "id" = $1' : 'SELECT * FROM "stale" WHERE "id" = ?' }
  const read = async () => (await direct.read(statement, [1]))?.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v])))
  t.same(await read(), [{ id: 1, n: 2 }])
  // What a migration does: the result type of `SELECT *` changes (PostgreSQL refuses the old plan).
  await knex.raw('ALTER TABLE "stale" ADD COLUMN "label" TEXT')
  t.same(await read(), [{ id: 1, n: 2, label: null }], 'prepared again, with the new column')
}))

t.test('connection settings', (t) => forEachDialect(t, 'connection settings', async (t, dialect) => {
  const { knex, databaseUrl } = await openTestDatabase(t, dialect)
  if (dialect === 'sqlite') {
    const pragma = async (name: string) => Object.values((await knex.raw(`PRAGMA ${name}`))[0])[0]
    t.equal(await pragma('journal_mode'), 'wal')
    t.equal(await pragma('foreign_keys'), 1)
    t.equal(await pragma('synchronous'), 1, 'NORMAL')
    t.equal(await pragma('busy_timeout'), 5000)
    t.equal((knex.client.config.pool as { max: number }).max, 1, 'one writer connection')
  } else {
    const { rows } = await knex.raw(`SELECT count(*) AS n, 12345678901::bigint AS big, 1.25::numeric AS num,
      ARRAY[1, 2]::bigint[] AS ints, now() AS ts, current_schema() AS schema`)
    t.same(rows[0].n, 1, 'counts are numbers')
    t.equal(rows[0].big, 12345678901)
    t.equal(rows[0].num, 1.25)
    t.same(rows[0].ints, [1, 2])
    t.type(rows[0].ts, Date, 'timestamptz stays a Date')
    t.equal(rows[0].schema, new URL(databaseUrl).searchParams.get('schema'), '?schema= sets the search path')
    t.equal(pg.types.getTypeParser(20)('1'), '1', 'the global pg type parsers are untouched')
  }
}))

t.test('FASTBASE_SQLITE_BUSY_TIMEOUT', async (t) => {
  const previous = process.env.FASTBASE_SQLITE_BUSY_TIMEOUT
  process.env.FASTBASE_SQLITE_BUSY_TIMEOUT = '1234'
  t.teardown(() => {
    if (previous === undefined) delete process.env.FASTBASE_SQLITE_BUSY_TIMEOUT
    else process.env.FASTBASE_SQLITE_BUSY_TIMEOUT = previous
  })
  const { knex } = connect('sqlite::memory:', '')
  t.teardown(() => knex.destroy())
  t.same(await knex.raw('PRAGMA busy_timeout'), [{ timeout: 1234 }])
})

// ---- the plugin ----

t.test('kernel database', (t) => forEachDialect(t, 'kernel database', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const life = new Lifecycle()
  // Only what the database step reads of the loaded config.
  const loaded = { config, limits: resolveLimits(config), options: { databaseUrl, dataDir: freshDir(t), exposeErrors: true, origins: [] } }
  const { connection, dialect: opened, schema } = await openDatabase(loaded, Fastify().log, life)
  t.equal(opened.name, dialect)
  const knex = connection.knex
  t.notOk(await knex.schema.hasTable('things'), 'connecting changes nothing: the kernel migrates once the config is compiled')
  t.same((await schema.migrate('start')).applied.map((m) => m.name), [INITIAL_MIGRATION])
  t.ok(await knex.schema.hasTable('things'), 'the schema service created the tables')
  await life.close()
  await t.rejects(knex.raw('SELECT 1'), 'knex is destroyed on close')
}))

// ---- the test harness itself ----

const notes: TableData = {
  name: 'notes',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
    { name: 'body', type: 'text', sqlType: 'text', notNull: true }
  ]
}

t.test('buildApp and sharedDatabase', (t) => forEachDialect(t, 'buildApp and sharedDatabase', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const first = await buildApp(t, settings([notes]), { dialect, databaseUrl })
  t.equal(first.fastbase.dialect.name, dialect)
  t.equal((await first.inject('/api/v1/health')).statusCode, 200)
  await first.fastbase.db('notes').insert({ body: 'shared' })
  // Started after the first one, as sharedDatabase asks.
  const second = await buildApp(t, settings([notes]), { dialect, databaseUrl })
  t.same(await second.fastbase.db('notes').pluck('body'), ['shared'], 'both apps see one database')
  t.same(await second.fastbase.db(MIGRATIONS_TABLE).pluck('name'), [INITIAL_MIGRATION], 'the second start created nothing')
  const own = await buildApp(t, settings([notes]), { dialect })
  t.same(await own.fastbase.db('notes').pluck('body'), [], 'without databaseUrl each app gets a fresh database')
}))

t.test('buildApp rejects when the schema cannot be created', (t) => forEachDialect(t, 'buildApp failure', async (t, dialect) => {
  const broken: TableData = { name: 'broken', fields: [{ name: 'x', type: 'text', sqlType: 'text', default: { q: 'this is not sql' } }] }
  await t.rejects(buildApp(t, settings([broken]), { dialect }))
}))
