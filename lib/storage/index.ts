// Picks the storage driver from the config's `storage` section (DECISIONS 20).
import { isAbsolute, join } from 'node:path'
import type { StorageConfig } from '../../schemas/config.js'
import { createLocalStorage } from './local.js'
import type { Storage } from './types.js'

export type { Storage, StoredObject } from './types.js'
export type { StorageErrorCode } from './keys.js'
export { assertValidKey } from './keys.js'
export { storedFileName } from './file-names.js'
export { createLocalStorage } from './local.js'

/**
 * No config: a local directory `<dataDir>/files`. A relative local `root` is taken under `dataDir`.
 * The S3 driver is imported only when configured: the AWS SDK adds tens of MiB to every process otherwise.
 */
export async function createStorage (config: StorageConfig | undefined, dataDir: string): Promise<Storage> {
  const root = localStorageRoot(config, dataDir)
  if (root !== undefined) return createLocalStorage(root)
  const { driver: _driver, ...options } = config as Extract<StorageConfig, { driver: 's3' }>
  const { createS3Storage } = await import('./s3.js')
  return createS3Storage(options)
}

/** The folder of the local driver for `config` (absolute), or undefined for a bucket. */
export function localStorageRoot (config: StorageConfig | undefined, dataDir: string): string | undefined {
  if (config !== undefined && config.driver !== 'local') return undefined
  const root = config?.root
  return root === undefined ? join(dataDir, 'files') : isAbsolute(root) ? root : join(dataDir, root)
}
