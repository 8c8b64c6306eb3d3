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
export const ARCHIVE_VERSION = 1
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
    entry: Type.String({ description: 'The database inside the archive: a SQLite file, or a pg_dump custom-format dump' }),
    schemaName: Type.Optional(Type.String({ description: 'PostgreSQL: the schema the dump holds' }))
  }),
  schema: Type.Object({
    migrations: Type.Integer({ minimum: 0, description: 'Schema migrations the database had applied' }),
    last: Type.Union([Type.String(), Type.Null()], { description: 'The last of them' })
  }),
  tables: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Rows per table in the snapshot' }),
  files: Type.Object({
    included: Type.Boolean({ description: 'The local storage driver\'s files are in the archive (not for S3 storage, nor with `backups.files: false`)' }),
    count: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0 })
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

/** A stored record, or undefined when it is not one (a foreign object beside the backups). */
export function parseRecord (text: string): BackupRecord | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return Value.Check(BackupRecordSchema, value) ? value : undefined
  } catch {
    return undefined
  }
}
