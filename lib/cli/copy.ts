// `fastbase copy [config] --to <database url> [--files-to <storage>]`: the project's database (found
// as the server finds it) into another, empty one, SQLite and PostgreSQL either way, then verified
// table by table (lib/copy/, decision D101).
import { resolve } from 'node:path'
import { connect, dialectOfUrl } from '../dialects/index.js'
import { nonEmpty, safeDatabaseUrl } from '../config/locations.js'
import { createStorage, localStorageRoot } from '../files/storage/index.js'
import type { StorageConfig } from '../../schemas/config.js'
import { copyDatabase, type Progress } from '../copy/database.js'
import { copyFiles } from '../copy/files.js'
import { tablesToCopy } from '../copy/copied-tables.js'
import { LOCATION_HELP, loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, UsageError, atMost, err, out, parse, type Command } from './io.js'

export const copy: Command = {
  summary: 'copy the database (and files) into another, empty database: SQLite <-> PostgreSQL',
  help: `Usage: fastbase copy [config] (--to <database url> | --to-env-file <file>) [--files-to <storage>] [--env-file <file>]

Copies the project's database (the one the server would open: DATABASE_URL, else
<data dir>/fastbase.sqlite) into another, empty database: the target gets the schema a start
would make, then every table of the config and fastbase's own auth state (sessions, refresh
tokens, one-time tokens, provider links), values converted between the dialects. Each table is
then read back on both sides: the copy is done only when every row count and checksum match.
Stop the server (or its writes) first. Interrupted, the same command goes on where it stopped.

${LOCATION_HELP}
  --to <url>          the target: postgres://user@host:5432/db[?schema=name], or sqlite:<file>.
                      It must be empty (a copy under way there is continued)
  --to-env-file <file>
                      the target's own .env (the one the server will start with there): its
                      DATABASE_URL is the target unless --to names one, and when the config's
                      storage, read with it, is not the source's (another bucket, another data
                      folder), the files the rows name are copied there too
  --files-to <where>  also copy the stored files the rows name, from the config's storage to a
                      folder, or to s3://bucket[/prefix][?endpoint=<url>&region=<r>&forcePathStyle=true]
                      (credentials from the AWS SDK's environment: AWS_ACCESS_KEY_ID, ...)
  --batch <rows>      rows per insert (default 500)

Progress (rows/s) goes to stderr on a terminal, not in CI.
Environment: DATABASE_URL, FASTBASE_DATA_DIR (the source, as the server reads them), the config's
$NAME secrets.
Exit codes: 0 copied and verified, 1 config problems, target not empty, or the copy failed or did
not verify, 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { to: { type: 'string' }, 'to-env-file': { type: 'string' }, 'files-to': { type: 'string' }, batch: { type: 'string' }, 'env-file': { type: 'string' } })
    atMost(positionals, 1)
    const toEnvFile = nonEmpty(values['to-env-file'])
    if (nonEmpty(values.to) === undefined && toEnvFile === undefined) throw new UsageError('--to <database url> (or --to-env-file <the target\'s .env>) is required')
    const batch = values.batch === undefined ? undefined : Number(values.batch)
    if (batch !== undefined && (!Number.isInteger(batch) || batch < 1 || batch > 10_000)) throw new UsageError('--batch takes a whole number of rows from 1 to 10000')
    const filesTo = nonEmpty(values['files-to'])
    const { file, env, databaseUrl, dataDir, result } = await loadCheckedConfig(positionals[0], values['env-file'])
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const given = filesTo === undefined ? undefined : storageOf(filesTo)
    const destination = given !== undefined
      ? { files: { storage: given }, dataDir, named: given.driver === 'local' ? given.root : filesTo, databaseUrl: undefined }
      : toEnvFile === undefined ? undefined : await targetStorage(positionals[0], toEnvFile, result.config.storage, dataDir)
    if (destination === null) return EXIT.failed
    const to = nonEmpty(values.to) ?? destination?.databaseUrl
    if (to === undefined) throw new UsageError('--to <database url> is required')
    if (sameDatabase(databaseUrl, to)) throw new UsageError(`--to names the project's own database (${safeDatabaseUrl(to)})`)
    const config = result.config
    const tables = tablesToCopy(config)
    const progress = progressReporter(env)
    err(`copying ${safeDatabaseUrl(databaseUrl)} (${dialectOfUrl(databaseUrl)}) into ${safeDatabaseUrl(to)} (${dialectOfUrl(to)})`)
    const source = connect(databaseUrl, dataDir)
    const target = connect(to, dataDir)
    try {
      await source.prepare()
      await target.prepare()
      const reports = await copyDatabase(source, target, config, tables, { batch, progress })
      progress?.end()
      for (const report of reports) out(`${report.name}: ${report.rows} row${report.rows === 1 ? '' : 's'}, checksum ${report.digest.slice(0, 16)}${report.resumedAt !== undefined ? ` (went on after row ${report.resumedAt})` : ''}`)
      out(`copied and verified ${reports.length} tables into ${safeDatabaseUrl(to)}`)
      if (destination?.files !== undefined) {
        const from = await createStorage(config.storage, dataDir)
        const into = await createStorage(destination.files.storage, destination.dataDir)
        try {
          const files = await copyFiles(source.knex, tables, from, into, progress)
          progress?.end()
          out(`copied ${files.files} file${files.files === 1 ? '' : 's'} (${files.bytes} bytes)${files.skipped > 0 ? `, ${files.skipped} already there` : ''} to ${destination.named}`)
          if (files.missing.length > 0) err(`warning: rows name files the source storage does not hold (not copied): ${files.missing.join(', ')}`)
        } finally {
          await from.close()
          await into.close()
        }
      }
      if (destination !== undefined && destination.files === undefined) out(`files: the target's storage is the source's (${destination.named}): nothing to copy`)
      return EXIT.ok
    } finally {
      await source.close()
      await target.close()
    }
  }
}

/** Where the target's server will find its database and files: the config read with the target's
 * .env. Its storage is copied to only when it is not the source's (the same bucket or folder needs
 * no copy); null when the config has problems there. */
async function targetStorage (config: string | undefined, envFile: string, sourceStorage: StorageConfig | undefined, sourceDataDir: string): Promise<{ databaseUrl: string, files?: { storage: StorageConfig | undefined }, dataDir: string, named: string } | null> {
  const target = await loadCheckedConfig(config, envFile)
  if (!reportProblems(target.file, target.result) || target.result.config === undefined) return null
  const storage = target.result.config.storage
  const root = localStorageRoot(storage, target.dataDir)
  const sourceRoot = localStorageRoot(sourceStorage, sourceDataDir)
  const same = root !== undefined || sourceRoot !== undefined ? root === sourceRoot : JSON.stringify(storage) === JSON.stringify(sourceStorage)
  const named = root ?? (storage?.driver === 's3' ? `s3://${storage.bucket}${storage.prefix !== undefined ? `/${storage.prefix}` : ''}` : envFile)
  return { databaseUrl: target.databaseUrl, ...(same ? {} : { files: { storage } }), dataDir: target.dataDir, named }
}

/** The same database named twice (the same SQLite file, or the same PostgreSQL URL). */
function sameDatabase (a: string, b: string): boolean {
  const strip = (url: string): string => url.replace(/^sqlite:/i, '').replace(/^file:/i, '')
  return strip(a) === strip(b)
}

/** `--files-to`: a folder (from the current directory, as a path on a command line is, not from the
 * data directory a config's `storage.root` starts at), or `s3://bucket[/prefix]` with the driver's
 * options as query parameters. */
export function storageOf (where: string): StorageConfig {
  if (!/^s3:\/\//i.test(where)) return { driver: 'local', root: resolve(where) }
  let url: URL
  try { url = new URL(where) } catch { throw new UsageError(`--files-to ${where}: not a valid s3:// URL`) }
  if (url.hostname === '') throw new UsageError('--files-to s3:// needs a bucket: s3://bucket[/prefix]')
  const prefix = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ''))
  const known = new Set(['endpoint', 'region', 'forcePathStyle'])
  for (const key of url.searchParams.keys()) if (!known.has(key)) throw new UsageError(`--files-to: unknown parameter ${key} (endpoint, region, forcePathStyle)`)
  return {
    driver: 's3',
    bucket: url.hostname,
    ...(prefix !== '' ? { prefix } : {}),
    ...(url.searchParams.has('endpoint') ? { endpoint: url.searchParams.get('endpoint') ?? '' } : {}),
    ...(url.searchParams.has('region') ? { region: url.searchParams.get('region') ?? '' } : {}),
    ...(url.searchParams.get('forcePathStyle') === 'true' ? { forcePathStyle: true } : {}),
    ...(process.env.AWS_ACCESS_KEY_ID !== undefined && process.env.AWS_SECRET_ACCESS_KEY !== undefined ? { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY } : {})
  }
}

/** Where progress goes: stderr, or what a test hands in. */
export interface ProgressStream { isTTY?: boolean, write: (text: string) => unknown }

/** Rows per second on `stream` (stderr), at most once a second per table, on a terminal outside CI; nothing otherwise. */
export function progressReporter (env: NodeJS.ProcessEnv, stream: ProgressStream = process.stderr): (Progress & { end: () => void }) | undefined {
  if (stream.isTTY !== true || nonEmpty(env.CI) !== undefined) return undefined
  let shown = 0
  let started = Date.now()
  let current = ''
  let line = false
  return {
    rows: (table, copied, total) => {
      const now = Date.now()
      if (table !== current) { current = table; started = now }
      if (now - shown < 1000 && copied < total) return
      shown = now
      const rate = Math.round(copied / Math.max(0.001, (now - started) / 1000))
      stream.write(`\r${table}: ${copied}/${total} rows (${rate} rows/s)\x1b[K`)
      line = true
    },
    end: () => { if (line) stream.write('\n'); line = false }
  }
}
