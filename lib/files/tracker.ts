// What a request did to stored files, so storage follows the database (DECISIONS 20): files uploaded
// by a write that fails are removed; after a successful write, uploaded files no row references
// (a rule filtered the row, IGNORE skipped it) and files a row no longer references (replaced,
// cleared, deleted) are removed, only once the database change has committed.
import type { Knex } from 'knex'
import type { TableDescriptor } from '../table.js'

export interface FileStorage { delete: (keys: string[]) => Promise<void> }
export interface FileLog { error: (obj: object, msg: string) => void }

interface Entry { table: TableDescriptor, name: string }

/** Storage key of a file field value: `<r2Base or table>/<name>`. */
export function fileKey (table: TableDescriptor, name: string): string {
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

  markUploaded (table: TableDescriptor, name: string): void {
    this.uploaded.push({ table, name })
  }

  isUploaded (table: TableDescriptor, name: string): boolean {
    return this.uploaded.some((e) => e.table === table && e.name === name)
  }

  /** File names a write replaced or removed (still referenced elsewhere? settle() checks). */
  release (table: TableDescriptor, names: unknown[]): void {
    for (const name of names) if (typeof name === 'string' && name !== '') this.released.push({ table, name })
  }

  /** Call once the request's database work is final. `ok` false: every upload is removed. */
  async settle (db: Knex, ok: boolean): Promise<void> {
    if (this.settled) return
    this.settled = true
    const candidates = ok ? [...this.uploaded, ...this.released] : this.uploaded
    const orphans: string[] = []
    for (const table of new Set(candidates.map((c) => c.table))) {
      const names = [...new Set(candidates.filter((c) => c.table === table).map((c) => c.name))]
      const referenced = ok ? await stillReferenced(db, table, names) : new Set<string>()
      orphans.push(...names.filter((n) => !referenced.has(n)).map((n) => fileKey(table, n)))
    }
    if (orphans.length === 0) return
    try {
      await this.storage.delete(orphans)
    } catch (error) {
      // The database answer stands; a file that could not be removed is logged for cleanup, not thrown.
      this.log?.error({ err: error, keys: orphans }, 'could not delete orphaned files')
    }
  }
}

async function stillReferenced (db: Knex, table: TableDescriptor, names: string[]): Promise<Set<string>> {
  const found = new Set<string>()
  for (const field of fileFields(table)) {
    const rows: Array<Record<string, unknown>> = await db(table.name).whereIn(field.name, names).select({ v: field.name })
    for (const row of rows) found.add(row.v as string)
  }
  return found
}
