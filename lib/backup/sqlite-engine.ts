// SQLite backups: the snapshot is `VACUUM INTO` in a worker thread (lib/backup/sqlite-snapshot-thread.ts);
// a restore checks the archive's database read-only, makes a new database from the config next to
// the database file (so putting it in place is a rename), loads the archive's rows into it as data
// (sqlite-load.ts, decision D86), moves the database and its WAL aside as
// `<file>.before-restore-<time>`, and renames the new one in.
import { existsSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import knexFactory from 'knex'
import { sqliteFilename } from '../dialects/sqlite-connection.js'
import { envInt } from '../dialects/connection.js'
import { FastbaseError, errors } from '../errors.js'
import { errorMessage } from '../thrown.js'
import { triggerName, triggersOf } from '../dialects/ddl.js'
import { makeSchema, type DatabaseEngine, type Snapshot } from './database-engine.js'
import { factsMismatch } from './copy-plan.js'
import type { Manifest } from './manifest.js'
import { integrityProblems, sqliteFacts } from './sqlite-inspect.js'
import { loadSqliteRows } from './sqlite-load.js'
import { holdLockFile } from './lock-file.js'
import { uniqueStamp } from './time-stamp.js'
import type { SnapshotAnswer, SnapshotData } from './sqlite-snapshot-thread.js'

const THREAD_FILE = new URL(`./sqlite-snapshot-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url)
/** The database's WAL and shared-memory files move with it: together they are its state. */
const COMPANIONS = ['', '-wal', '-shm']

export const sqliteEngine: DatabaseEngine = {
  entry: 'database.sqlite',

  async snapshot (target, file) {
    const source = sqliteFilename(target.databaseUrl)
    if (source === ':memory:') throw new Error('an in-memory SQLite database cannot be backed up')
    return await new Promise<Snapshot>((resolve, reject) => {
      const workerData: SnapshotData = { source, target: file, busyTimeout: envInt('FASTBASE_SQLITE_BUSY_TIMEOUT', 5000) }
      const worker = new Worker(THREAD_FILE, { workerData })
      let settled = false
      worker.once('message', (message: SnapshotAnswer) => {
        settled = true
        if ('error' in message) reject(new Error(`SQLite snapshot failed: ${message.error}`))
        else resolve(message.facts)
      })
      worker.once('error', (err) => { settled = true; reject(err) })
      worker.once('exit', (code) => { if (!settled) reject(new Error(`the SQLite snapshot thread exited (${code})`)) })
    })
  },

  async restore (target, file, manifest, schema) {
    const path = sqliteFilename(target.databaseUrl)
    if (path === ':memory:') throw errors.restoreRefused('DATABASE_URL names an in-memory SQLite database')
    checkArchive(file, manifest)
    // Next to the database, so the swap is a rename on one file system.
    const staged = `${path}.restore-${uniqueStamp()}`
    const discard = async (): Promise<void> => { for (const suffix of COMPANIONS) await rm(staged + suffix, { force: true }) }
    try {
      const knex = knexFactory({ client: 'better-sqlite3', connection: { filename: staged }, useNullAsDefault: true })
      try {
        await makeSchema(knex, 'sqlite', schema)
      } finally {
        await knex.destroy()
      }
      const triggers = new Set(schema.tables.flatMap((t) => triggersOf(t, 'sqlite').map((trigger) => triggerName(t.name, trigger))))
      const loaded = loadOrRefuse(() => loadSqliteRows(staged, file, schema.tables.map((t) => t.name), triggers))
      const db = new Database(staged, { readonly: true, fileMustExist: true })
      try {
        const mismatch = factsMismatch({ ...sqliteFacts(db), tables: loaded }, manifest, Object.keys(loaded))
        if (mismatch.length > 0) throw errors.badArchive(`the loaded database is not the one its manifest describes: ${mismatch.join('; ')}`)
      } finally {
        db.close()
      }
    } catch (err) {
      await discard()
      throw err
    }
    // The target's connection must not hold the file while it moves.
    await target.knex.destroy()
    const keptAt = existsSync(path) ? `${path}.before-restore-${uniqueStamp()}` : undefined
    /** The files moved aside, as [where they were, where they are]. */
    const moved: Array<[string, string]> = []
    const putBack = async (): Promise<void> => {
      for (const [from, to] of moved) await rename(to, from)
    }
    try {
      if (keptAt !== undefined) {
        for (const suffix of COMPANIONS) {
          if (!existsSync(path + suffix)) continue
          await rename(path + suffix, keptAt + suffix)
          moved.push([path + suffix, keptAt + suffix])
        }
      }
      await rename(staged, path)
    } catch (err) {
      await putBack()
      await discard()
      throw err
    }
    return {
      keptAt,
      rollback: async () => {
        for (const suffix of COMPANIONS) await rm(path + suffix, { force: true })
        await putBack()
      }
    }
  },

  async lock (target) {
    const path = sqliteFilename(target.databaseUrl)
    if (path === ':memory:') return async () => {}
    return await holdLockFile(`${path}.restore-lock`, 'a restore of this database')
  }
}

/** The rows loaded; a row the config's tables refuse (a NOT NULL column the archive lacks, a CHECK) refuses the archive. */
function loadOrRefuse (load: () => Record<string, number>): Record<string, number> {
  try {
    return load()
  } catch (err) {
    if (err instanceof FastbaseError) throw err
    throw errors.badArchive(`its rows do not load into the tables of this config (${errorMessage(err)})`)
  }
}

/** The archive's database as a whole, opened read-only with its schema distrusted: sound, and as its manifest describes it. */
function checkArchive (file: string, manifest: Manifest): void {
  let db: Database.Database | undefined
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
    db.pragma('trusted_schema = OFF')
    const problems = integrityProblems(db)
    if (problems.length > 0) throw errors.badArchive(`the database fails PRAGMA integrity_check: ${problems.join('; ')}`)
    const mismatch = factsMismatch(sqliteFacts(db), manifest)
    if (mismatch.length > 0) throw errors.badArchive(`the database is not the one its manifest describes: ${mismatch.join('; ')}`)
  } catch (err) {
    if (err instanceof FastbaseError) throw err
    throw errors.badArchive(`its database cannot be read (${errorMessage(err)})`)
  } finally {
    db?.close()
  }
}
