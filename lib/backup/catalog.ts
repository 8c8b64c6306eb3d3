// The backups a storage holds: listed by their records (`<name>.json`), each checked against its
// archive; retention keeps the newest and removes the rest, and cleans what a crash left behind.
import type { Storage } from '../files/storage/types.js'
import { errors } from '../errors.js'
import { archiveKey, isBackupName, parseRecord, recordKey, type BackupRecord } from './manifest.js'

/** An archive without its record this old was cut short by a crash (storing the record takes milliseconds). */
export const ORPHAN_AFTER_MS = 3600_000

const nameOf = (key: string, suffix: string): string | undefined => {
  if (key.includes('/') || !key.endsWith(suffix)) return undefined
  const name = key.slice(0, -suffix.length)
  return isBackupName(name) ? name : undefined
}

async function readText (storage: Storage, key: string): Promise<string> {
  const chunks: Buffer[] = []
  const stream: AsyncIterable<Buffer | string> = await storage.read(key)
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/** Complete backups, newest first: a record whose archive is stored with the size it names. */
export async function listBackups (storage: Storage): Promise<BackupRecord[]> {
  const objects = await storage.list('')
  const archives = new Map(objects.flatMap((o) => { const name = nameOf(o.key, '.tar.gz'); return name === undefined ? [] : [[name, o.size] as const] }))
  const records: BackupRecord[] = []
  for (const object of objects) {
    const name = nameOf(object.key, '.json')
    if (name === undefined || archives.get(name) === undefined) continue
    const record = parseRecord(await readText(storage, object.key).catch(() => ''))
    if (record !== undefined && record.name === name && record.archive.size === archives.get(name)) records.push(record)
  }
  return records.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0))
}

/** The record of one complete backup, or FB_ERR_BACKUP_NOT_FOUND. */
export async function getBackup (storage: Storage, name: string): Promise<BackupRecord> {
  if (!isBackupName(name)) throw errors.backupNotFound(name.slice(0, 100))
  const [archive, text] = await Promise.all([storage.stat(archiveKey(name)), readText(storage, recordKey(name)).catch(() => undefined)])
  const record = text === undefined ? undefined : parseRecord(text)
  if (archive === undefined || record === undefined || record.name !== name || record.archive.size !== archive.size) throw errors.backupNotFound(name)
  return record
}

/** Removes a backup: its record first, so it is never listed without its archive. */
export async function deleteBackup (storage: Storage, name: string): Promise<void> {
  await getBackup(storage, name)
  await storage.delete([recordKey(name)])
  await storage.delete([archiveKey(name)])
}

/**
 * Keeps the newest `keep` complete backups and deletes the others; deletes archives without a
 * record older than ORPHAN_AFTER_MS and records without an archive. Answers the names deleted.
 */
export async function pruneBackups (storage: Storage, keep: number, now = Date.now()): Promise<string[]> {
  const complete = await listBackups(storage)
  const kept = new Set(complete.slice(0, keep).map((r) => r.name))
  const removed: string[] = []
  for (const record of complete.slice(keep)) {
    await storage.delete([recordKey(record.name)])
    await storage.delete([archiveKey(record.name)])
    removed.push(record.name)
  }
  const listed = new Set(complete.map((r) => r.name))
  for (const object of await storage.list('')) {
    const archive = nameOf(object.key, '.tar.gz')
    const record = nameOf(object.key, '.json')
    const name = archive ?? record
    if (name === undefined || kept.has(name) || listed.has(name)) continue
    if (now - object.lastModified.getTime() < ORPHAN_AFTER_MS) continue
    await storage.delete([object.key])
    removed.push(name)
  }
  return removed
}
