// Storage key validation shared by both drivers, so a key accepted by one is accepted by the other
// and a bucket can move between drivers. Keys come from our own code (`<table>/<storedFileName>`),
// but a route path also reaches here, so anything that could escape a directory is refused.

import { errors, type FastbaseError } from '../../errors.js'

/** Error codes a driver throws (lib/errors.ts); routes map them to 400 / 404. */
export type StorageErrorCode = 'FB_ERR_BAD_KEY' | 'FB_ERR_NOT_FOUND' | 'FB_ERR_BAD_RANGE'

const STORAGE_ERRORS = { FB_ERR_BAD_KEY: errors.storageBadKey, FB_ERR_NOT_FOUND: errors.storageNotFound, FB_ERR_BAD_RANGE: errors.storageBadRange }

export function storageError (code: StorageErrorCode, message: string): FastbaseError {
  return STORAGE_ERRORS[code](message)
}

const KEY = /^[A-Za-z0-9_][A-Za-z0-9_.\-/+=#]*$/
// S3's limit is 1024 bytes; a segment also names a local file, and needs room for the
// `.meta.json` sidecar and temp suffixes within the usual 255-byte file-name limit.
const MAX_KEY = 1024
const MAX_SEGMENT = 200
// Reserved for the local driver's sidecar; refused everywhere so both drivers accept the same keys.
export const SIDECAR_SUFFIX = '.meta.json'

/** Throws `FB_ERR_BAD_KEY` unless `key` is a safe, canonical relative key. */
export function assertValidKey (key: string): void {
  const problem = keyProblem(key)
  if (problem !== undefined) throw storageError('FB_ERR_BAD_KEY', `Invalid storage key ${JSON.stringify(String(key).slice(0, 100))}: ${problem}`)
}

function keyProblem (key: string): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'empty'
  if (key.length > MAX_KEY) return `longer than ${MAX_KEY} characters`
  if (!KEY.test(key)) return 'unsupported characters'
  if (key.endsWith(SIDECAR_SUFFIX)) return `"${SIDECAR_SUFFIX}" is reserved`
  for (const segment of key.split('/')) {
    // Empty and "." segments would alias other keys once a path is normalised; ".." escapes.
    if (segment === '' || segment === '.' || segment === '..') return 'empty, "." or ".." path segment'
    if (segment.length > MAX_SEGMENT) return `path segment longer than ${MAX_SEGMENT} characters`
  }
  return undefined
}

/** Throws `FB_ERR_BAD_RANGE` unless start..end is a non-empty, non-negative integer range. */
export function assertValidRange (range: { start: number, end: number }): void {
  const { start, end } = range
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw storageError('FB_ERR_BAD_RANGE', `Invalid byte range ${String(start)}-${String(end)}`)
  }
}
