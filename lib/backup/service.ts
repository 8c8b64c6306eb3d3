// Backups as the server offers them: on demand (one at a time per instance), on the configured
// schedule (one instance of a fleet per scheduled time), kept to the configured count, and listed,
// read and deleted from the backup storage.
import type { Knex } from 'knex'
import type { Storage } from '../files/storage/types.js'
import { errors } from '../errors.js'
import { createBackup, type BackupSource } from './create.js'
import { deleteBackup, getBackup, listBackups, pruneBackups } from './catalog.js'
import { claimSlot, lastSuccess, recordSuccess } from './jobs.js'
import { archiveKey, type BackupRecord } from './manifest.js'
import { schedule, type Schedule } from './schedule.js'
import type { BackupSettings } from './settings.js'

export const BACKUP_JOB = 'backup'

export interface BackupLog {
  info: (details: object, message: string) => void
  error: (details: object, message: string) => void
}

export interface BackupService {
  settings: BackupSettings
  list: () => Promise<BackupRecord[]>
  get: (name: string) => Promise<BackupRecord>
  /** The archive's bytes, after its record. */
  open: (name: string) => Promise<{ record: BackupRecord, stream: NodeJS.ReadableStream }>
  remove: (name: string) => Promise<void>
  /** Takes a backup now and applies the retention; FB_ERR_BACKUP_RUNNING while one runs here. */
  create: () => Promise<BackupRecord>
  /** Epoch seconds of the last successful backup of any instance on this database. */
  lastSuccess: () => Promise<number | undefined>
  /** When the schedule runs next (undefined without one). */
  nextScheduled: () => Date | undefined
  /** Stops the schedule and waits for a running backup. */
  close: () => Promise<void>
}

export interface BackupServiceOptions {
  source: BackupSource
  destination: Storage
  settings: BackupSettings
  /** This instance's id in the job claims. */
  instance: string
  log: BackupLog
}

export function createBackupService (options: BackupServiceOptions): BackupService {
  const { source, destination, settings, instance, log } = options
  const knex: Knex = source.knex
  let running: Promise<BackupRecord> | undefined

  const create = async (): Promise<BackupRecord> => {
    if (running !== undefined) throw errors.backupRunning()
    running = (async () => {
      const started = Date.now()
      const record = await createBackup(source, destination)
      await recordSuccess(knex, BACKUP_JOB, instance)
      const pruned = await pruneBackups(destination, settings.keep)
      log.info({ backup: record.name, bytes: record.archive.size, ms: Date.now() - started, pruned }, 'fastbase: backup stored')
      return record
    })()
    try {
      return await running
    } finally {
      running = undefined
    }
  }

  let scheduled: Schedule | undefined
  if (settings.schedule !== undefined) {
    scheduled = schedule(settings.schedule, async (slot) => {
      try {
        if (!await claimSlot(knex, BACKUP_JOB, slot.toISOString(), instance)) return
        await create()
      } catch (err) {
        log.error({ err }, 'fastbase: scheduled backup failed')
      }
    })
  }

  return {
    settings,
    list: async () => await listBackups(destination),
    get: async (name) => await getBackup(destination, name),
    open: async (name) => {
      const record = await getBackup(destination, name)
      return { record, stream: await destination.read(archiveKey(name)) }
    },
    remove: async (name) => { await deleteBackup(destination, name) },
    create,
    lastSuccess: async () => await lastSuccess(knex, BACKUP_JOB),
    nextScheduled: () => scheduled?.next(),
    close: async () => {
      scheduled?.stop()
      await running?.catch(() => {})
    }
  }
}
