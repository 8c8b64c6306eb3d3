// Picks the storage driver from the config's `storage` section (decision D20).
import { isAbsolute, join } from 'node:path'
import type { StorageConfig } from '../../../schemas/config.js'
import { ConfigError } from '../../errors.js'
import { createLocalStorage } from './local.js'
import type { Storage } from './types.js'

export type { Storage, StoredObject } from './types.js'
export type { StorageErrorCode } from './keys.js'
export { assertValidKey } from './keys.js'
export { storedFileName } from './file-names.js'
export { createLocalStorage } from './local.js'

/** The AWS SDK packages the S3 driver imports: optional dependencies of fastbase. */
export const S3_PACKAGES = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage']

/**
 * No config: a local directory `<dataDir>/files`. A relative local `root` is taken under `dataDir`.
 * The S3 driver is imported only when configured: the AWS SDK adds tens of MiB to every process
 * otherwise, and it is an optional dependency, so a project without S3 need not install it.
 */
export async function createStorage (config: StorageConfig | undefined, dataDir: string): Promise<Storage> {
  const root = localStorageRoot(config, dataDir)
  if (root !== undefined) return createLocalStorage(root)
  const { driver: _driver, ...options } = config as Extract<StorageConfig, { driver: 's3' }>
  const { createS3Storage } = await importS3Driver()
  return createS3Storage(options)
}

/** The folder of the local driver for `config` (absolute), or undefined for a bucket. */
export function localStorageRoot (config: StorageConfig | undefined, dataDir: string): string | undefined {
  if (config !== undefined && config.driver !== 'local') return undefined
  const root = config?.root
  return root === undefined ? join(dataDir, 'files') : isAbsolute(root) ? root : join(dataDir, root)
}

/** lib/files/storage/s3.ts, or a ConfigError naming what to install when the AWS SDK is missing. */
async function importS3Driver (): Promise<typeof import('./s3.js')> {
  try {
    return await import('./s3.js')
  } catch (err) {
    const missing = err instanceof Error && 'code' in err && err.code === 'ERR_MODULE_NOT_FOUND' && S3_PACKAGES.some((name) => err.message.includes(`'${name}'`))
    if (!missing) throw err
    throw new ConfigError([`storage.driver: 's3' needs the AWS SDK, which is not installed; run: npm install ${S3_PACKAGES.join(' ')}`])
  }
}
