// The `backups` config block with its defaults.
import type { BackupsConfig, StorageConfig } from '../../schemas/config.js'

export const BACKUP_DEFAULTS = { keep: 7, folder: 'backups' }

export interface BackupSettings {
  /** A cron expression; undefined: on demand only. */
  schedule: string | undefined
  keep: number
  /** Where archives are stored. */
  storage: StorageConfig
  /** Archive the local storage driver's files. */
  files: boolean
}

export function backupSettings (config: BackupsConfig | undefined): BackupSettings {
  return {
    schedule: config?.schedule,
    keep: config?.keep ?? BACKUP_DEFAULTS.keep,
    storage: config?.storage ?? { driver: 'local', root: BACKUP_DEFAULTS.folder },
    files: config?.files ?? true
  }
}

