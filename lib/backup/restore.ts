// Restoring a backup archive into the database (and local files folder) a config uses. In order:
// hold off any other restore of the database; check the archive's headers and manifest, then unpack
// only what the manifest lists and check it (archive.ts, decision D87); refuse while an instance runs
// on the database (lib/backup/liveness.ts); let the engine make a new database from the config, load
// the archive's rows into it as data (decision D86) and swap it in, keeping the old one aside; swap
// the files folder the same way. Nothing is deleted: the replaced database and folder stay next to
// the new ones for the operator to remove once satisfied.
import { cp, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { DatabaseSettings } from '../../schemas/config.js'
import { connect, dialectFor, dialectOfUrl, type DialectName } from '../dialects/index.js'
import { internalTablesFor } from '../internal/internal-tables.js'
import { projectOf } from '../db/migrations.js'
import { errors } from '../errors.js'
import { readArchive } from './archive.js'
import { engineFor } from './engine.js'
import { describeLive, liveInstances } from './liveness.js'
import { FILES_FOLDER, type Manifest } from './manifest.js'
import { stagingRoot } from './create.js'
import { uniqueStamp } from './time-stamp.js'
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
}

/** Checks `archiveFile` and restores it into `target`; throws (with nothing changed and nothing left behind) when any check fails. */
export async function restoreBackup (archiveFile: string, target: RestoreTarget): Promise<RestoreReport> {
  const dialect = dialectOfUrl(target.databaseUrl)
  const engine = engineFor(dialect)
  const root = stagingRoot(target.dataDir)
  const connection = connect(target.databaseUrl, target.dataDir)
  let staging: string | undefined
  try {
    await connection.prepare()
    const engineTarget = { knex: connection.knex, databaseUrl: target.databaseUrl }
    const unlock = await engine.lock(engineTarget)
    try {
      await mkdir(root, { recursive: true })
      staging = await mkdtemp(join(root, 'restore-'))
      const manifest = await readArchive(archiveFile, staging, (m) => { acceptable(m, dialect, engine.entry) })
      const live = await liveInstances(connection.knex)
      if (live.length > 0) throw errors.restoreRefused(describeLive(live))
      const schema = { tables: [...internalTablesFor(target.config, dialect), ...target.config.tables], project: projectOf(target.config) }
      const restored = await engine.restore(engineTarget, join(staging, manifest.database.entry), manifest, schema)
      let files: RestoreReport['files']
      try {
        files = await restoreFiles(manifest, join(staging, FILES_FOLDER), target.filesRoot)
      } catch (err) {
        await restored.rollback()
        throw err
      }
      return { manifest, databaseKeptAt: restored.keptAt, files }
    } finally {
      await unlock()
    }
  } finally {
    await connection.close()
    if (staging !== undefined) await rm(staging, { recursive: true, force: true })
  }
}

/** Refuses, before anything is unpacked, an archive of another dialect or one whose database a restore would have to run. */
function acceptable (manifest: Manifest, dialect: DialectName, entry: string): void {
  if (manifest.dialect !== dialect) {
    throw errors.restoreRefused(`the archive holds a ${dialectFor(manifest.dialect).label} database and DATABASE_URL names a ${dialectFor(dialect).label} one`)
  }
  if (manifest.database.entry !== entry) {
    throw errors.badArchive(manifest.version < 2 && dialect === 'postgres'
      ? 'it is a PostgreSQL backup of archive format 1, a pg_dump: restoring one runs whatever SQL it holds, so fastbase no longer does (decision D86). Restore it by hand with pg_restore only if you trust where it came from, then take a new backup'
      : `its database is ${manifest.database.entry}; a ${dialectFor(dialect).label} archive holds ${entry}`)
  }
}

async function restoreFiles (manifest: Manifest, unpacked: string, filesRoot: string | undefined): Promise<RestoreReport['files']> {
  if (!manifest.files.included) return { restored: false, note: 'the archive holds no files (they were in a bucket, or backups.files was false)' }
  if (filesRoot === undefined) return { restored: false, note: 'the archive holds files, but this config keeps files in a bucket: they were left in the archive' }
  // Next to the folder, so both moves are renames on one file system.
  const staged = `${filesRoot}.restore-${uniqueStamp()}`
  const found = await stat(unpacked).catch(() => undefined)
  // The archive was checked to hold files only under files/; a plain file there would leave a server that cannot start.
  if (found !== undefined && !found.isDirectory()) throw errors.badArchive(`its ${FILES_FOLDER} is not a folder`)
  if (found === undefined) await mkdir(staged, { recursive: true })
  else await moveFolder(unpacked, staged)
  const keptAt = await stat(filesRoot).catch(() => undefined) === undefined ? undefined : `${filesRoot}.before-restore-${uniqueStamp()}`
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
