// Restoring a backup archive into the database (and local files folder) a config uses. In order:
// unpack and check every entry against the manifest; refuse while an instance runs on the database
// (lib/backup/liveness.ts); let the engine check the database where it will live and swap it in,
// keeping the old one aside; check the schema against the config (an archive of another project is
// refused); swap the files folder the same way. Nothing is deleted: the replaced database and
// folder stay next to the new ones for the operator to remove once satisfied.
import { cp, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Knex } from 'knex'
import type { DatabaseSettings } from '../../schemas/config.js'
import { connect, dialectFor, dialectOfUrl, schemaDialect } from '../dialects/index.js'
import { internalTablesFor } from '../internal/tables.js'
import { migrationStatus, projectOf, type PendingMigration } from '../db/migrations.js'
import { errors } from '../errors.js'
import { readArchive } from './archive.js'
import { engineFor, type RestoredDatabase } from './engine.js'
import { describeLive, liveInstances } from './liveness.js'
import { FILES_FOLDER, type Manifest } from './manifest.js'
import { stagingRoot } from './create.js'
import { timeStamp } from './time-stamp.js'
import { errorCode } from '../thrown.js'

export interface RestoreTarget {
  databaseUrl: string
  dataDir: string
  config: DatabaseSettings
  /** The local storage driver's folder; undefined when files live in a bucket. */
  filesRoot: string | undefined
}

export interface RestoreReport {
  manifest: Manifest
  /** Where the replaced database is kept (a file or a PostgreSQL schema), if there was one. */
  databaseKeptAt: string | undefined
  files: { restored: boolean, keptAt?: string, note?: string }
  /** What the server will do at its next start: the safe steps apply, destructive ones wait. */
  pending: PendingMigration[]
}

/** Checks `archiveFile` and restores it into `target`; throws (with nothing changed) when any check fails. */
export async function restoreBackup (archiveFile: string, target: RestoreTarget): Promise<RestoreReport> {
  const dialect = dialectOfUrl(target.databaseUrl)
  const root = stagingRoot(target.dataDir)
  await mkdir(root, { recursive: true })
  const staging = await mkdtemp(join(root, 'restore-'))
  try {
    const manifest = await readArchive(archiveFile, staging)
    if (manifest.dialect !== dialect) {
      throw errors.restoreRefused(`the archive holds a ${dialectFor(manifest.dialect).label} database and DATABASE_URL names a ${dialectFor(dialect).label} one`)
    }
    const connection = connect(target.databaseUrl, target.dataDir)
    let pending: PendingMigration[] = []
    let restored: RestoredDatabase | undefined
    try {
      await connection.prepare()
      const live = await liveInstances(connection.knex)
      if (live.length > 0) throw errors.restoreRefused(describeLive(live))
      const verify = async (knex: Knex): Promise<void> => {
        const tables = [...internalTablesFor(target.config, dialect), ...target.config.tables]
        const status = await migrationStatus({ knex, ddl: schemaDialect(dialect), dialect, log: { info: () => {}, warn: () => {} } }, tables, projectOf(target.config))
        if (status.dropsEveryTable !== undefined) {
          throw errors.restoreRefused(`the archive's database has none of the tables this config recorded (${status.dropsEveryTable.slice(0, 5).join(', ')}): it is a backup of another project, or the config is the wrong one`)
        }
        pending = status.pending
      }
      restored = await engineFor(dialect).restore({ knex: connection.knex, databaseUrl: target.databaseUrl }, join(staging, manifest.database.entry), manifest, verify)
    } finally {
      await connection.close()
    }
    let files: RestoreReport['files']
    try {
      files = await restoreFiles(manifest, join(staging, FILES_FOLDER), target.filesRoot)
    } catch (err) {
      await restored.rollback()
      throw err
    }
    return { manifest, databaseKeptAt: restored.keptAt, files, pending }
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

async function restoreFiles (manifest: Manifest, unpacked: string, filesRoot: string | undefined): Promise<RestoreReport['files']> {
  if (!manifest.files.included) return { restored: false, note: 'the archive holds no files (they were in a bucket, or backups.files was false)' }
  if (filesRoot === undefined) return { restored: false, note: 'the archive holds files, but this config keeps files in a bucket: they were left in the archive' }
  // Next to the folder, so both moves are renames on one file system.
  const staged = `${filesRoot}.restore-${timeStamp()}`
  if (await stat(unpacked).catch(() => undefined) === undefined) await mkdir(staged, { recursive: true })
  else await moveFolder(unpacked, staged)
  const keptAt = await stat(filesRoot).catch(() => undefined) === undefined ? undefined : `${filesRoot}.before-restore-${timeStamp()}`
  if (keptAt !== undefined) await rename(filesRoot, keptAt)
  try {
    await rename(staged, filesRoot)
  } catch (err) {
    if (keptAt !== undefined) await rename(keptAt, filesRoot)
    await rm(staged, { recursive: true, force: true })
    throw err
  }
  return { restored: true, ...(keptAt !== undefined ? { keptAt } : {}) }
}

/** A rename, or a copy when the two are on different file systems. */
async function moveFolder (from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (err) {
    if (errorCode(err) !== 'EXDEV') throw err
    await cp(from, to, { recursive: true })
  }
}
