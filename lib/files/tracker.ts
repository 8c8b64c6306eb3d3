// What a request did to stored files, so storage follows the database (decision D20): files uploaded
// by a write that fails are removed; after a successful write, uploaded files no row references
// (a rule filtered the row, IGNORE skipped it) and files a row no longer references (replaced,
// cleared, deleted) are removed, only once the database change has committed. What it kept and
// removed is reported (the x-uploaded-files / x-deleted-files headers), within what the caller sees.
import type { Knex } from 'knex'
import type { TableDescriptor } from '../table/descriptor.js'

export interface FileStorage { delete: (keys: string[]) => Promise<void> }
export interface FileLog { error: (obj: object, msg: string) => void }

interface Entry {
  table: TableDescriptor
  name: string
  /** An upload: the file name it was sent under. */
  original?: string
  /** A released file: may the caller know it (a field it sees, of a row its viewRule shows)? */
  shown?: boolean
}

/** A file's stored name and whether the caller may know it, as a write found it in a row. */
export interface ReleasedFile { name: unknown, shown: boolean }

/** What a request did to storage: stored keys with the names they were sent under, and removed keys. */
export interface FileReport { uploaded: Record<string, string>, deleted: string[] }

// A reported original name is the caller's own text: bounded, as the header that carries it.
const MAX_REPORTED_NAME = 255

/** Storage key of a file field value: `<r2Base or table>/<name>`. */
export function fileKey (table: Pick<TableDescriptor, 'name' | 'data'>, name: string): string {
  return `${table.data.r2Base ?? table.name}/${name}`
}

export function fileFields (table: TableDescriptor) {
  return table.fieldList.filter((f) => f.type === 'file')
}

export class FileTracker {
  private readonly uploaded: Entry[] = []
  private readonly released: Entry[] = []
  settled = false

  constructor (private readonly storage: FileStorage, private readonly log?: FileLog) {}

  markUploaded (table: TableDescriptor, name: string, original = ''): void {
    this.uploaded.push({ table, name, original: original.slice(0, MAX_REPORTED_NAME) })
  }

  isUploaded (table: TableDescriptor, name: string): boolean {
    return this.uploaded.some((e) => e.table === table && e.name === name)
  }

  /** Files a write replaced or removed (still referenced elsewhere? settle() checks). */
  release (table: TableDescriptor, files: ReleasedFile[]): void {
    for (const { name, shown } of files) if (typeof name === 'string' && name !== '') this.released.push({ table, name, shown })
  }

  /**
   * Call once the request's database work is final. `ok` false: every upload is removed. Answers
   * the uploads kept and the released files removed that the caller may know of (an upload
   * removed again is in neither); undefined when already settled.
   */
  async settle (db: Knex, ok: boolean): Promise<FileReport | undefined> {
    if (this.settled) return undefined
    this.settled = true
    const candidates = ok ? [...this.uploaded, ...this.released] : this.uploaded
    const orphans = new Set<string>()
    for (const table of new Set(candidates.map((c) => c.table))) {
      const names = [...new Set(candidates.filter((c) => c.table === table).map((c) => c.name))]
      const referenced = ok ? await stillReferenced(db, table, names) : new Set<string>()
      for (const name of names) if (!referenced.has(name)) orphans.add(fileKey(table, name))
    }
    const uploadedKeys = new Set(this.uploaded.map((e) => fileKey(e.table, e.name)))
    const report: FileReport = {
      uploaded: Object.fromEntries(this.uploaded.map((e) => [fileKey(e.table, e.name), e.original ?? '']).filter(([key]) => !orphans.has(key))),
      deleted: [...new Set(this.released.filter((e) => e.shown === true).map((e) => fileKey(e.table, e.name)))].filter((key) => orphans.has(key) && !uploadedKeys.has(key))
    }
    if (orphans.size === 0) return report
    try {
      await this.storage.delete([...orphans])
    } catch (error) {
      // The database answer stands; a file that could not be removed is logged for cleanup, not thrown.
      this.log?.error({ err: error, keys: [...orphans] }, 'could not delete orphaned files')
      report.deleted = []
    }
    return report
  }
}

async function stillReferenced (db: Knex, table: TableDescriptor, names: string[]): Promise<Set<string>> {
  const found = new Set<string>()
  for (const field of fileFields(table)) {
    // A file field holds its file's name (text).
    const rows: Array<{ v: string }> = await db(table.name).whereIn(field.name, names).select({ v: field.name })
    for (const row of rows) found.add(row.v)
  }
  return found
}
