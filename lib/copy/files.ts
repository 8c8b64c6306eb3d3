// `fastbase copy --files-to`: the stored files the copied rows name, from the project's storage to
// another (local folder or bucket, either way), under the same keys (decision D101). A file already
// at the destination with the same size is not sent again, so a rerun after an interruption goes on
// where it stopped; each file sent is checked by its size at the destination.
import type { Knex } from 'knex'
import { fileKey } from '../files/tracker.js'
import type { Storage } from '../files/storage/index.js'
import { batchSize, page, type Progress } from './database.js'
import { keyValue, type CopiedTable, type KeyValue } from './copied-tables.js'

export interface FilesReport { files: number, bytes: number, skipped: number, missing: string[] }

/** A file a row names that the source storage does not hold: reported, not copied. */
const MAX_REPORTED_MISSING = 20

export async function copyFiles (source: Knex, tables: CopiedTable[], from: Storage, to: Storage, progress?: Progress): Promise<FilesReport> {
  const report: FilesReport = { files: 0, bytes: 0, skipped: 0, missing: [] }
  for (const table of tables) {
    const fields = table.data.fields.filter((f) => f.type === 'file').map((f) => f.name)
    if (fields.length === 0) continue
    const name = table.data.name
    const size = batchSize(fields.length + 1)
    let after: KeyValue | undefined
    for (;;) {
      const rows = await page(source, table, after, size, [table.key.name, ...fields])
      for (const row of rows) {
        for (const field of fields) {
          const value = row[field]
          if (typeof value === 'string' && value !== '') await copyOne(fileKey({ name, data: table.data }, value), from, to, report)
        }
      }
      progress?.rows(`${name} files`, report.files + report.skipped, report.files + report.skipped)
      if (rows.length < size) break
      after = keyValue(rows[rows.length - 1], table)
    }
  }
  return report
}

async function copyOne (key: string, from: Storage, to: Storage, report: FilesReport): Promise<void> {
  const object = await from.stat(key)
  if (object === undefined) {
    if (report.missing.length < MAX_REPORTED_MISSING) report.missing.push(key)
    return
  }
  if ((await to.stat(key))?.size === object.size) {
    report.skipped++
    return
  }
  await to.put(key, await from.read(key), { contentType: object.contentType })
  const stored = await to.stat(key)
  if (stored?.size !== object.size) throw new Error(`file ${key}: ${object.size} bytes at the source, ${stored?.size ?? 'none'} at the destination`)
  report.files++
  report.bytes += object.size
}
