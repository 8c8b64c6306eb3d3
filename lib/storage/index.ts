// Picks the storage driver from the config's `storage` section (decision D20).
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
  if (config === undefined || config.driver === 'local') {
    const root = config?.root
    return createLocalStorage(root === undefined ? join(dataDir, 'files') : isAbsolute(root) ? root : join(dataDir, root))
  }
  const { driver: _driver, ...options } = config
  const { createS3Storage } = await import('./s3.js')
  return createS3Storage(options)
}
