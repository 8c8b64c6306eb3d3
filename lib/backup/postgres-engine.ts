// PostgreSQL backups with PostgreSQL's own tools. The snapshot: a read-only REPEATABLE READ
// transaction exports its snapshot, counts the rows in it, and pg_dump (custom format, the schema
// only) dumps exactly that snapshot, so the manifest's counts are the dump's. A restore renames the
// current schema aside (`<schema>_pre_restore_<time>`: instant, nothing copied or dropped), lets
// pg_restore recreate the schema, checks it, and on any failure drops the new schema and renames the
// old one back.
import type { Knex } from 'knex'
import { errors } from '../errors.js'
import { MIGRATIONS_TABLE } from '../db/migrations.js'
import type { DatabaseEngine } from './database-engine.js'
import { factsMismatch } from './database-engine.js'
import type { DatabaseFacts } from './sqlite-inspect.js'
import { INSTANCES_TABLE } from '../internal/tables.js'
import { pgEnvironment, runPgTool } from './pg-tools.js'
import { timeStamp } from './time-stamp.js'

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`
/** The rows of a raw query, typed by the query that selects them (pg answers raw() with its result object). */
async function rowsOf<T> (db: Knex | Knex.Transaction, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<T[]> {
  return (await db.raw<{ rows: T[] }>(sql, bindings)).rows
}

async function currentSchema (db: Knex | Knex.Transaction): Promise<string> {
  return (await rowsOf<{ schema: string }>(db, 'SELECT current_schema() AS schema'))[0].schema
}

async function schemaExists (db: Knex, schema: string): Promise<boolean> {
  return (await rowsOf(db, 'SELECT 1 FROM pg_namespace WHERE nspname = ?', [schema])).length > 0
}

async function facts (db: Knex | Knex.Transaction, schema: string): Promise<DatabaseFacts> {
  const names = (await rowsOf<{ name: string }>(db, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name", [schema])).map((r) => r.name)
  const tables: Record<string, number> = {}
  for (const name of names) tables[name] = Number((await rowsOf<{ n: string }>(db, `SELECT count(*) AS n FROM ${ident(schema)}.${ident(name)}`))[0].n)
  if (!names.includes(MIGRATIONS_TABLE)) return { schema: { migrations: 0, last: null }, tables }
  const row = (await rowsOf<{ migrations: string, last: string | null }>(db, `SELECT count(*) AS migrations, (SELECT name FROM ${ident(schema)}.${ident(MIGRATIONS_TABLE)} ORDER BY id DESC LIMIT 1) AS last FROM ${ident(schema)}.${ident(MIGRATIONS_TABLE)}`))[0]
  return { schema: { migrations: Number(row.migrations), last: row.last }, tables }
}

/** A name for the schema kept aside, within PostgreSQL's 63 bytes. */
function asideName (schema: string): string {
  return `${schema.slice(0, 30)}_pre_restore_${timeStamp().toLowerCase()}`
}

export const postgresEngine: DatabaseEngine = {
  entry: 'database.pgdump',

  async snapshot (target, file) {
    return await target.knex.transaction(async (trx) => {
      await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
      await trx.raw('SET LOCAL statement_timeout = 0')
      const snapshotId = (await rowsOf<{ id: string }>(trx, 'SELECT pg_export_snapshot() AS id'))[0].id
      const schema = await currentSchema(trx)
      const counted = await facts(trx, schema)
      await runPgTool('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--snapshot=${snapshotId}`, `--schema=${schema}`, `--file=${file}`], pgEnvironment(target.databaseUrl))
      return { ...counted, schemaName: schema }
    })
  },

  async restore (target, file, manifest, verify) {
    const { knex } = target
    const schema = await currentSchema(knex)
    const dumped = manifest.database.schemaName ?? schema
    if (dumped !== schema && await schemaExists(knex, dumped)) {
      throw errors.restoreRefused(`the dump holds schema "${dumped}", which exists in this database besides the target "${schema}"; restore it into a database without "${dumped}"`)
    }
    const aside = await schemaExists(knex, schema) ? asideName(schema) : undefined
    if (aside !== undefined) await knex.raw(`ALTER SCHEMA ${ident(schema)} RENAME TO ${ident(aside)}`)
    const rollback = async (): Promise<void> => {
      await knex.raw(`DROP SCHEMA IF EXISTS ${ident(dumped)} CASCADE`)
      if (dumped !== schema) await knex.raw(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
      if (aside !== undefined) await knex.raw(`ALTER SCHEMA ${ident(aside)} RENAME TO ${ident(schema)}`)
    }
    try {
      const env = pgEnvironment(target.databaseUrl)
      // Without --dbname pg_restore prints SQL instead of restoring; the name alone, the rest is in env.
      await runPgTool('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${env.PGDATABASE ?? env.PGUSER ?? 'postgres'}`, file], env)
      if (dumped !== schema) await knex.raw(`ALTER SCHEMA ${ident(dumped)} RENAME TO ${ident(schema)}`)
      const mismatch = factsMismatch(await facts(knex, schema), manifest)
      if (mismatch.length > 0) throw errors.badArchive(`the restored database is not the one its manifest describes: ${mismatch.join('; ')}`)
      if (manifest.tables[INSTANCES_TABLE] !== undefined) await knex.raw(`DELETE FROM ${ident(schema)}.${ident(INSTANCES_TABLE)}`)
      await verify(knex)
    } catch (err) {
      await rollback()
      throw err
    }
    return { keptAt: aside === undefined ? undefined : `schema ${aside}`, rollback }
  }
}
