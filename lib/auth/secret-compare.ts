// Constant-time comparison of secrets of any length: both are hashed first, which equalises the
// lengths timingSafeEqual needs, so neither the content nor the length leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto'

export const secretDigest = (s: string): Buffer => createHash('sha256').update(s).digest()

export function secretEquals (a: string, b: string): boolean {
  return timingSafeEqual(secretDigest(a), secretDigest(b))
}

/** Whether `secret` equals `digest` (a `secretDigest` computed once, e.g. of the service token). */
export function matchesDigest (secret: string, digest: Buffer): boolean {
  return timingSafeEqual(secretDigest(secret), digest)
}
