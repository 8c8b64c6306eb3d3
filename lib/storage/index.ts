// Picks the storage driver from the config's `storage` section (DECISIONS 20).
import { isAbsolute, join } from 'node:path'
import type { StorageConfig } from '../../schemas/config.js'
import { createLocalStorage } from './local.js'
import { createS3Storage } from './s3.js'
import type { Storage } from './types.js'

export type { Storage, StoredObject } from './types.js'
export type { StorageErrorCode } from './keys.js'
export { assertValidKey } from './keys.js'
export { storedFileName } from './file-names.js'
export { createLocalStorage } from './local.js'
export { createS3Storage } from './s3.js'

/** No config: a local directory `<dataDir>/files`. A relative local `root` is taken under `dataDir`. */
export function createStorage (config: StorageConfig | undefined, dataDir: string): Storage {
  if (config === undefined || config.driver === 'local') {
    const root = config?.root
    return createLocalStorage(root === undefined ? join(dataDir, 'files') : isAbsolute(root) ? root : join(dataDir, root))
  }
  const { driver: _driver, ...options } = config
  return createS3Storage(options)
}
