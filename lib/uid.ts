import { randomBytes } from 'node:crypto'

/** 22 url-safe characters from 16 random bytes: 128 bits of randomness (decision D10). */
export function newUid (): string {
  return randomBytes(16).toString('base64url')
}
