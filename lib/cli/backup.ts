// `fastbase backup [config]`: one backup now, as the server takes them (lib/backup/create.ts), into
// the config's backup storage, then the retention (`backups.keep`). Safe while the server runs.
import { randomBytes } from 'node:crypto'
import { connect, dialectOfUrl } from '../dialects/index.js'
import { createStorage, localStorageRoot } from '../files/storage/index.js'
import { createBackup } from '../backup/create.js'
import { pruneBackups } from '../backup/catalog.js'
import { recordSuccess } from '../backup/jobs.js'
import { BACKUP_JOB } from '../backup/service.js'
import { backupSettings } from '../backup/settings.js'
import { LOCATION_HELP, loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, atMost, counted, out, parse, type Command } from './io.js'

export const backup: Command = {
  summary: 'take a backup of the database (and local files) now, while the server may run',
  help: `Usage: fastbase backup [config] [--env-file <file>]

Takes a consistent snapshot of the database while it may be in use (SQLite: VACUUM INTO;
PostgreSQL: every table as JSON lines, read in one read-only transaction), archives it with the
files of the local storage driver, stores the archive in the config's backup storage (backups.storage, default
<data dir>/backups) and keeps the newest backups.keep (default 7). Prints the backup's name.
A running server also holds file deletions while it archives files; this command cannot, so a
file a request deletes meanwhile may be missing from its archive.

${LOCATION_HELP}

Environment: DATABASE_URL, FASTBASE_DATA_DIR (as the server reads them), the config's $NAME secrets.
Exit codes: 0 stored, 1 config problems or the backup failed, 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { 'env-file': { type: 'string' } })
    atMost(positionals, 1)
    const { file, databaseUrl, dataDir, result } = await loadCheckedConfig(positionals[0], values['env-file'])
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const config = result.config
    const settings = backupSettings(config.backups)
    const destination = await createStorage(settings.storage, dataDir)
    const connection = connect(databaseUrl, dataDir)
    try {
      await connection.prepare()
      const record = await createBackup({
        knex: connection.knex,
        dialect: dialectOfUrl(databaseUrl),
        databaseUrl,
        dataDir,
        appName: config.appName ?? '',
        filesRoot: settings.files ? localStorageRoot(config.storage, dataDir) : undefined
      }, destination)
      // A database the server never set up has no job table: the backup stands without the note.
      await recordSuccess(connection.knex, BACKUP_JOB, `cli-${randomBytes(6).toString('hex')}`).catch(() => {})
      const pruned = await pruneBackups(destination, settings.keep)
      out(`stored backup ${record.name} (${record.archive.size} bytes, ${counted(Object.keys(record.tables).length, 'table')}, ${counted(record.files.count, 'file')}) in ${where(settings.storage, dataDir)}`)
      if (pruned.length > 0) out(`removed ${pruned.length} older backup${pruned.length === 1 ? '' : 's'} (backups.keep = ${settings.keep}): ${pruned.join(', ')}`)
      return EXIT.ok
    } finally {
      await connection.close()
      await destination.close()
    }
  }
}

/** The backup storage, for the message: a folder, or a bucket (and prefix). */
export function where (storage: ReturnType<typeof backupSettings>['storage'], dataDir: string): string {
  return storage.driver === 's3' ? `bucket ${storage.bucket}${storage.prefix !== undefined ? `/${storage.prefix}` : ''}` : localStorageRoot(storage, dataDir) ?? dataDir
}
