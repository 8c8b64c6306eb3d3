// `fastbase restore <archive> [config]`: puts a backup back (lib/backup/restore.ts). Refuses while an
// instance runs on the database; the replaced database and files folder are kept aside.
import { createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createStorage, localStorageRoot } from '../files/storage/index.js'
import { stagingRoot } from '../backup/create.js'
import { getBackup } from '../backup/catalog.js'
import { archiveKey, isBackupName } from '../backup/manifest.js'
import { restoreBackup } from '../backup/restore.js'
import { backupSettings } from '../backup/settings.js'
import { safeDatabaseUrl } from '../config/locations.js'
import { LOCATION_HELP, loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, UsageError, atMost, counted, out, parse, type Command } from './io.js'
import { where } from './backup.js'

export const restore: Command = {
  summary: 'restore a backup archive (every instance stopped); the current database is kept aside',
  help: `Usage: fastbase restore <archive> [config] [--env-file <file>]

<archive> is an archive file (from GET /api/v1/backups/<name> or the backup folder), or the name
of a backup in the config's backup storage (fastbase-<time>-<id>).

Checks the archive (its entries against its manifest before anything is unpacked, then their
checksums; SQLite: PRAGMA integrity_check), makes a new database from this config and loads the
archive's rows into it as data (nothing the archive holds is run: no trigger, function or SQL of
it), checks the schema version and rows per table against the manifest, then puts the database in
place and, when the archive has them and files are stored locally, the files folder. Nothing is
deleted: the replaced SQLite file (with its -wal) becomes <file>.before-restore-<time>, a replaced
PostgreSQL schema <schema>_pre_restore_<time>, the replaced files folder
<folder>.before-restore-<time>; remove them once you are satisfied. Refused while a fastbase
instance runs on the database (each refreshes a liveness row every 10 s; a killed one counts for
35 s), while another restore of it runs, and for a table or column this config does not make.

${LOCATION_HELP}

Environment: DATABASE_URL, FASTBASE_DATA_DIR (as the server reads them), the config's $NAME secrets.
Exit codes: 0 restored, 1 refused or failed (nothing changed), 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { 'env-file': { type: 'string' } })
    if (positionals.length === 0) throw new UsageError('name the archive to restore')
    atMost(positionals, 2)
    const [archive, configFile] = positionals
    const { file, databaseUrl, dataDir, result } = await loadCheckedConfig(configFile, values['env-file'])
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const config = result.config
    const fetched = await archiveFile(archive, backupSettings(config.backups).storage, dataDir)
    try {
      const report = await restoreBackup(fetched.file, { databaseUrl, dataDir, config, filesRoot: localStorageRoot(config.storage, dataDir) })
      const { manifest } = report
      out(`restored backup ${manifest.name} (taken ${manifest.createdAt}) into ${safeDatabaseUrl(databaseUrl)}: ${counted(Object.keys(manifest.tables).length, 'table')}, schema made from this config (the backup's was at ${manifest.schema.last ?? 'no migration'})`)
      out(report.databaseKeptAt === undefined ? 'there was no database before' : `the replaced database is kept as ${report.databaseKeptAt}`)
      out(report.files.restored ? `files restored (${manifest.files.count})${report.files.keptAt !== undefined ? `; the replaced folder is kept as ${report.files.keptAt}` : ''}` : `files: ${report.files.note ?? 'not restored'}`)
      return EXIT.ok
    } finally {
      await fetched.cleanup()
    }
  }
}

/** A local file as it is; a backup's name fetched from the backup storage into a private folder. */
async function archiveFile (archive: string, storageConfig: ReturnType<typeof backupSettings>['storage'], dataDir: string): Promise<{ file: string, cleanup: () => Promise<void> }> {
  if (await stat(archive).catch(() => undefined) !== undefined || !isBackupName(archive)) return { file: archive, cleanup: async () => {} }
  const storage = await createStorage(storageConfig, dataDir)
  const root = stagingRoot(dataDir)
  await mkdir(root, { recursive: true })
  const folder = await mkdtemp(join(root, 'download-'))
  try {
    await getBackup(storage, archive).catch(() => { throw new Error(`no file ${archive}, and no backup of that name in ${where(storageConfig, dataDir)}`) })
    const file = join(folder, archiveKey(archive))
    await pipeline(await storage.read(archiveKey(archive)), createWriteStream(file))
    return { file, cleanup: async () => { await rm(folder, { recursive: true, force: true }) } }
  } catch (error) {
    await rm(folder, { recursive: true, force: true })
    throw error
  } finally {
    await storage.close()
  }
}
