// The kernel's backups: this instance's liveness row (a restore refuses while it is fresh,
// lib/backup/liveness.ts) and the backup service (lib/backup/service.ts): on demand through the
// admin endpoints, on the config's schedule, into the backup storage. Built after the migrations:
// the tables it writes exist by then.
import type { Knex } from 'knex'
import type { DatabaseSettings } from '../../schemas/config.js'
import type { Dialect } from '../dialects/types.js'
import type { HoldableStorage } from '../files/storage/deletion-hold.js'
import { createStorage, localStorageRoot } from '../files/storage/index.js'
import { heartbeat as createHeartbeat } from '../backup/liveness.js'
import { backupSettings } from '../backup/settings.js'
import { createBackupService, type BackupService } from '../backup/service.js'
import type { Lifecycle } from './lifecycle.js'
import type { FastbaseRuntimeOptions, KernelLog } from './types.js'

interface BackupsInput {
  config: DatabaseSettings
  options: FastbaseRuntimeOptions
  db: Knex
  dialect: Dialect
  storage: HoldableStorage
  log: KernelLog
}

export async function backupService ({ config, options, db, dialect, storage, log }: BackupsInput, life: Lifecycle): Promise<BackupService> {
  const heartbeat = createHeartbeat(db, log)
  const settings = backupSettings(config.backups)
  const destination = await createStorage(settings.storage, options.dataDir)
  life.onClose(async () => { await destination.close() })
  const backups = createBackupService({
    source: {
      knex: db,
      dialect: dialect.name,
      databaseUrl: options.databaseUrl,
      dataDir: options.dataDir,
      appName: config.appName ?? '',
      filesRoot: settings.files ? localStorageRoot(config.storage, options.dataDir) : undefined,
      holdDeletions: storage.holdDeletions
    },
    destination,
    settings,
    instance: heartbeat.id,
    log
  })
  if (settings.schedule !== undefined) log.info({ schedule: settings.schedule, next: backups.nextScheduled()?.toISOString() }, 'fastbase: backups scheduled')
  // The row only once the app is ready: a start that fails later (a refused pooler URL, a host's
  // plugin) leaves nothing a restore or `migrate --apply` would take for a running server.
  life.onReady(heartbeat.start)
  // Before the connection closes: the database is still open for the running backup and the row's removal.
  life.onPreClose(async () => {
    await backups.close()
    await heartbeat.stop()
  })
  return backups
}
