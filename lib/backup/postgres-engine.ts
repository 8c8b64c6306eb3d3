// PostgreSQL backups without PostgreSQL's dump tools (decision D86). The snapshot: one read-only
// REPEATABLE READ transaction writes every table of the schema as JSON lines (postgres-rows.ts), so
// the manifest's counts are the file's. A restore makes a new schema beside the current one from the
// config, loads the rows into it as data, checks them, and only then renames the current schema aside
// (`<schema>_pre_restore_<time>`: instant, nothing copied or dropped) and the new one into its place,
// in one transaction.
import type { Knex } from 'knex'
import { connect } from '../dialects/index.js'
import { LIFT_STATEMENT_TIMEOUT } from '../dialects/postgres-ddl.js'
import { FastbaseError, errors } from '../errors.js'
import { errorMessage } from '../thrown.js'
import { MIGRATIONS_TABLE } from '../db/migrations.js'
import { makeSchema, type DatabaseEngine } from './database-engine.js'
import { factsMismatch } from './copy-plan.js'
import type { DatabaseFacts } from './sqlite-inspect.js'
import { ident, loadRows, rowsOf, writeRows } from './postgres-rows.js'
import { uniqueStamp } from './time-stamp.js'

/** Advisory lock class of restores ('fbrs'); the second key is the schema restored. */
const RESTORE_LOCK_CLASS = 0x66627273

async function currentSchema (db: Knex | Knex.Transaction): Promise<string> {
  return (await rowsOf<{ schema: string }>(db, 'SELECT current_schema() AS schema'))[0].schema
}

async function schemaExists (db: Knex, schema: string): Promise<boolean> {
  return (await rowsOf(db, 'SELECT 1 FROM pg_namespace WHERE nspname = ?', [schema])).length > 0
}

/** The migrations `schema` records and the last of them. */
async function schemaVersion (db: Knex | Knex.Transaction, schema: string): Promise<DatabaseFacts['schema']> {
  if ((await rowsOf(db, 'SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?', [schema, MIGRATIONS_TABLE])).length === 0) return { migrations: 0, last: null }
  const table = `${ident(schema)}.${ident(MIGRATIONS_TABLE)}`
  const row = (await rowsOf<{ migrations: string, last: string | null }>(db, `SELECT count(*) AS migrations, (SELECT name FROM ${table} ORDER BY id DESC LIMIT 1) AS last FROM ${table}`))[0]
  return { migrations: Number(row.migrations), last: row.last }
}

/** A name beside `schema` for a restore's schemas, within PostgreSQL's 63 bytes. */
function besideName (schema: string, role: string): string {
  return `${schema.slice(0, 27)}_${role}_${uniqueStamp().toLowerCase()}`
}

export const postgresEngine: DatabaseEngine = {
  entry: 'database.jsonl',

  async snapshot (target, file) {
    return await target.knex.transaction(async (trx) => {
      await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
      await trx.raw('SET LOCAL statement_timeout = 0')
      const schema = await currentSchema(trx)
      const tables = await writeRows(trx, schema, file)
      return { schema: await schemaVersion(trx, schema), tables, schemaName: schema }
    })
  },

  async restore (target, file, manifest, schema) {
    const { knex } = target
    const current = await currentSchema(knex)
    const made = besideName(current, 'restore')
    const url = new URL(target.databaseUrl)
    url.searchParams.set('schema', made)
    try {
      const connection = connect(url.toString(), '')
      try {
        await connection.prepare()
        await makeSchema(connection.knex, 'postgres', schema)
        await connection.knex.transaction(async (trx) => {
          await trx.raw(LIFT_STATEMENT_TIMEOUT)
          const tables = await loadRows(trx, made, file, manifest, schema.tables.map((t) => t.name))
          const mismatch = factsMismatch({ schema: await schemaVersion(trx, made), tables }, manifest)
          if (mismatch.length > 0) throw errors.badArchive(`the loaded database is not the one its manifest describes: ${mismatch.join('; ')}`)
        })
      } finally {
        await connection.close()
      }
    } catch (err) {
      await knex.raw(`DROP SCHEMA IF EXISTS ${ident(made)} CASCADE`)
      if (err instanceof FastbaseError) throw err
      throw errors.badArchive(`its rows do not load into the tables of this config (${errorMessage(err)})`)
    }
    const aside = await schemaExists(knex, current) ? besideName(current, 'pre_restore') : undefined
    await knex.transaction(async (trx) => {
      if (aside !== undefined) await trx.raw(`ALTER SCHEMA ${ident(current)} RENAME TO ${ident(aside)}`)
      await trx.raw(`ALTER SCHEMA ${ident(made)} RENAME TO ${ident(current)}`)
    })
    return {
      keptAt: aside === undefined ? undefined : `schema ${aside}`,
      rollback: async () => {
        await knex.transaction(async (trx) => {
          await trx.raw(`DROP SCHEMA ${ident(current)} CASCADE`)
          if (aside !== undefined) await trx.raw(`ALTER SCHEMA ${ident(aside)} RENAME TO ${ident(current)}`)
        })
      }
    }
  },

  async lock (target) {
    // Held by a transaction of its own until the restore ends; released with it if the process dies.
    const trx = await target.knex.transaction()
    const schema = await currentSchema(trx)
    const held = (await rowsOf<{ held: boolean }>(trx, `SELECT pg_try_advisory_xact_lock(${RESTORE_LOCK_CLASS}, hashtext(?)) AS held`, [schema]))[0].held
    if (!held) {
      await trx.commit()
      throw errors.restoreRefused(`a restore of schema "${schema}" is running already; wait for it to end`)
    }
    return async () => { await trx.commit() }
  }
}
