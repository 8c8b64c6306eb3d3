// Taking one backup: the database snapshot (engine), the local files, one archive with the manifest
// last, stored as `<name>.tar.gz` and then `<name>.json`. Everything is staged in a private folder
// under the data directory and removed afterwards, whatever happens.
import { createReadStream } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { Knex } from 'knex'
import type { DialectName } from '../dialects/types.js'
import type { Storage } from '../files/storage/types.js'
import { TEMP_NAME } from '../files/storage/local.js'
import { SIDECAR_SUFFIX } from '../files/storage/keys.js'
import { packageVersion } from '../package.js'
import { engineFor } from './engine.js'
import { digestFile, walkFiles, writeArchive } from './archive.js'
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, FILES_FOLDER, MANIFEST_ENTRY, archiveKey, backupName, recordKey, type ArchiveEntry, type BackupRecord, type Manifest } from './manifest.js'

/** Staging folders older than this belong to a backup whose process died; the next backup removes them. */
const STALE_STAGING_MS = 24 * 3600_000

export interface BackupSource {
  knex: Knex
  dialect: DialectName
  databaseUrl: string
  dataDir: string
  appName: string
  /** The local storage driver's folder, when files are to be archived. */
  filesRoot: string | undefined
  /** Holds file deletions until the files are archived (the server's storage; a command has none). */
  holdDeletions?: () => () => Promise<void>
}

export function stagingRoot (dataDir: string): string {
  return join(dataDir, '.backup-staging')
}

/** Takes a backup of `source` and stores it in `destination`; answers its record. */
export async function createBackup (source: BackupSource, destination: Storage, now = new Date()): Promise<BackupRecord> {
  const root = stagingRoot(source.dataDir)
  await mkdir(root, { recursive: true })
  await sweepStaging(root)
  const name = backupName(now)
  const staging = await mkdtemp(join(root, `${name}-`))
  try {
    const contents = join(staging, 'contents')
    await mkdir(contents)
    const engine = engineFor(source.dialect)
    const release = source.holdDeletions?.()
    let manifest: Manifest
    try {
      const createdAt = new Date().toISOString()
      const snapshot = await engine.snapshot({ knex: source.knex, databaseUrl: source.databaseUrl }, join(contents, engine.entry))
      const entries: ArchiveEntry[] = [{ path: engine.entry, ...await digestFile(join(contents, engine.entry)) }]
      let files = { included: false, count: 0, bytes: 0 }
      if (source.filesRoot !== undefined) {
        // The files are read where they are, through a link: the archive takes them as they are now,
        // which includes every file the snapshot references (deletions are held meanwhile).
        await symlink(source.filesRoot, join(contents, FILES_FOLDER), 'dir')
        const paths = await walkFiles(source.filesRoot, (fileName) => !TEMP_NAME.test(fileName))
        for (const path of paths) entries.push({ path: `${FILES_FOLDER}/${path}`, ...await digestFile(join(source.filesRoot, path)) })
        // Counted as the user knows them: the local driver's metadata sidecars are archived, not counted.
        const uploaded = entries.slice(1).filter((e) => !e.path.endsWith(SIDECAR_SUFFIX))
        files = { included: true, count: uploaded.length, bytes: uploaded.reduce((sum, e) => sum + e.size, 0) }
      }
      manifest = {
        format: ARCHIVE_FORMAT,
        version: ARCHIVE_VERSION,
        name,
        createdAt,
        fastbaseVersion: packageVersion,
        appName: source.appName,
        dialect: source.dialect,
        database: { entry: engine.entry, ...(snapshot.schemaName !== undefined ? { schemaName: snapshot.schemaName } : {}) },
        schema: snapshot.schema,
        tables: snapshot.tables,
        files,
        entries
      }
      await writeFile(join(contents, MANIFEST_ENTRY), JSON.stringify(manifest, null, 2))
      await writeArchive(join(staging, 'archive.tar.gz'), contents, entries)
    } finally {
      await release?.()
    }
    const archive = join(staging, 'archive.tar.gz')
    const digest = await digestFile(archive)
    await destination.put(archiveKey(name), createReadStream(archive), { contentType: 'application/gzip' })
    const { entries: _entries, ...summary } = manifest
    const record: BackupRecord = { ...summary, archive: { key: archiveKey(name), size: digest.size, sha256: digest.sha256 } }
    // Last: from now on the backup is listed as complete.
    await destination.put(recordKey(name), Readable.from([Buffer.from(JSON.stringify(record, null, 2))]), { contentType: 'application/json' })
    return record
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

async function sweepStaging (root: string): Promise<void> {
  const now = Date.now()
  for (const entry of await readdir(root).catch((): string[] => [])) {
    const path = join(root, entry)
    const stats = await stat(path).catch(() => undefined)
    if (stats !== undefined && now - stats.mtimeMs > STALE_STAGING_MS) await rm(path, { recursive: true, force: true })
  }
}
