// Cross-field check of `storage` and `backups.storage`: S3 keys come as a pair. One key alone is a
// mistake that would otherwise let the AWS SDK's default chain pick up whatever other credentials the
// machine has.
import { isObject } from '../../plain.js'
import type { Check } from './common.js'

export const checkStorage: Check = (config) => [
  ...keyPairProblems(config.storage, 'storage'),
  ...keyPairProblems(isObject(config.backups) ? config.backups.storage : undefined, 'backups.storage')
]

function keyPairProblems (storage: unknown, path: string): string[] {
  if (!isObject(storage) || storage.driver !== 's3') return []
  return (storage.accessKeyId === undefined) !== (storage.secretAccessKey === undefined)
    ? [`${path}: accessKeyId and secretAccessKey must be given together (without both, the AWS SDK's default credentials apply)`]
    : []
}
