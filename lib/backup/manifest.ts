// What a backup archive holds and how it is named. The manifest is the archive's last entry (a
// reader that finds it found a whole archive); without its per-entry checksums and with the
// archive's own size and checksum, it is the record stored beside it (`<name>.json`, written after
// the archive: a backup is listed only once both are stored, so one cut short by a crash is never
// taken for complete).
import { randomBytes } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { errors } from '../errors.js'

export const ARCHIVE_FORMAT = 'fastbase-backup'
/** 2: PostgreSQL's rows as JSON lines (`database.jsonl`) instead of a pg_dump; SQLite unchanged (decision D86). */
export const ARCHIVE_VERSION = 2
export const MANIFEST_ENTRY = 'manifest.json'
/** Where the local storage driver's files go inside the archive. */
export const FILES_FOLDER = 'files'

const NAME = /^fastbase-\d{8}T\d{9}Z-[0-9a-f]{6}$/

const EntrySchema = Type.Object({
  path: Type.String({ minLength: 1, maxLength: 2048 }),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' })
})

export const ManifestSchema = Type.Object({
  format: Type.Literal(ARCHIVE_FORMAT),
  version: Type.Integer({ minimum: 1 }),
  name: Type.String({ pattern: NAME.source }),
  createdAt: Type.String({ format: 'date-time', description: 'When the database snapshot was taken' }),
  fastbaseVersion: Type.String(),
  appName: Type.String(),
  dialect: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  database: Type.Object({
    entry: Type.String({ description: 'The database inside the archive: a SQLite file, or PostgreSQL\'s rows as JSON lines' }),
    schemaName: Type.Optional(Type.String({ description: 'PostgreSQL: the schema the rows were read from' }))
  }),
  schema: Type.Object({
    migrations: Type.Integer({ minimum: 0, description: 'Schema migrations the database had applied' }),
    last: Type.Union([Type.String(), Type.Null()], { description: 'The last of them' })
  }),
  tables: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Rows per table in the snapshot' }),
  files: Type.Object({
    included: Type.Boolean({ description: 'The local storage driver\'s files are in the archive (not for S3 storage, nor with `backups.files: false`)' }),
    count: Type.Integer({ minimum: 0, description: 'Stored files (uploads); their metadata sidecars are in the archive but not counted' }),
    bytes: Type.Integer({ minimum: 0, description: 'The stored files\' bytes' })
  }),
  entries: Type.Array(EntrySchema)
})

/** The stored record and the API's answer: the manifest without its per-entry checksums (those stay in the archive), and the archive's own. */
export const BackupRecordSchema = Type.Composite([Type.Omit(ManifestSchema, ['entries']), Type.Object({
  archive: Type.Object({ key: Type.String(), size: Type.Integer({ minimum: 0 }), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) })
})])

export type Manifest = Static<typeof ManifestSchema>
export type ArchiveEntry = Static<typeof EntrySchema>
export type BackupRecord = Static<typeof BackupRecordSchema>

/** A new backup's name: its time (sortable) and a random tail (two at one millisecond never collide). */
export function backupName (at: Date): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '')
  return `fastbase-${stamp}-${randomBytes(3).toString('hex')}`
}

export function isBackupName (name: string): boolean {
  return NAME.test(name)
}

export const archiveKey = (name: string): string => `${name}.tar.gz`
export const recordKey = (name: string): string => `${name}.json`

/** The manifest of an archive, or FB_ERR_BAD_ARCHIVE saying what is wrong with it. */
export function parseManifest (text: string): Manifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw errors.badArchive(`${MANIFEST_ENTRY} is not JSON`)
  }
  if (typeof value === 'object' && value !== null) {
    if (!('format' in value) || value.format !== ARCHIVE_FORMAT) throw errors.badArchive(`${MANIFEST_ENTRY} is not a fastbase backup manifest`)
    if ('version' in value && typeof value.version === 'number' && value.version > ARCHIVE_VERSION) {
      throw errors.badArchive(`it was written in archive format ${value.version} by a newer fastbase; this one reads format ${ARCHIVE_VERSION}`)
    }
  }
  if (Value.Check(ManifestSchema, value)) return value
  const problem = Value.Errors(ManifestSchema, value).First()
  throw errors.badArchive(`${MANIFEST_ENTRY}: ${problem?.path || '/'} ${problem?.message ?? 'does not match the manifest schema'}`)
}

/** Why `path` may not be an entry of an archive whose database is `databaseEntry` (undefined: it may). */
export function entryPathProblem (path: string, databaseEntry: string): string | undefined {
  if (path === databaseEntry || path === MANIFEST_ENTRY) return undefined
  if (!isPlainPath(path)) return `an entry path that leaves the archive's folder: ${path}`
  const segments = path.split('/')
  if (segments[0] !== FILES_FOLDER || segments.length < 2) return `an entry that is neither the database nor under ${FILES_FOLDER}/: ${path}`
  return undefined
}

/** A relative path of plain parts: none empty (an absolute path's first is), `.` or `..`, no backslash or NUL. */
export function isPlainPath (path: string): boolean {
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !/[\\\0]/.test(s))
}

/**
 * Problems of the manifest's entry list as a whole: each path once, allowed (entryPathProblem), the
 * database listed, and no path that is also another's folder (a file cannot be both).
 */
export function entriesProblem (manifest: Manifest): string | undefined {
  const paths = new Set<string>()
  for (const entry of manifest.entries) {
    if (entry.path === MANIFEST_ENTRY) return `the manifest lists itself`
    const problem = entryPathProblem(entry.path, manifest.database.entry)
    if (problem !== undefined) return problem
    if (paths.has(entry.path)) return `the manifest lists ${entry.path} more than once`
    paths.add(entry.path)
  }
  if (!paths.has(manifest.database.entry)) return `the manifest names no ${manifest.database.entry}`
  for (const path of paths) {
    for (let cut = path.indexOf('/'); cut !== -1; cut = path.indexOf('/', cut + 1)) {
      if (paths.has(path.slice(0, cut))) return `${path.slice(0, cut)} is listed as a file and as a folder`
    }
  }
  return undefined
}

/** A stored record, or undefined when it is not one (a foreign object beside the backups). */
export function parseRecord (text: string): BackupRecord | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return Value.Check(BackupRecordSchema, value) ? value : undefined
  } catch {
    return undefined
  }
}
