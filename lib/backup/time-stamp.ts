import { randomBytes } from 'node:crypto'

/** `20261126T124300Z`: a compact UTC time for names of things kept aside. */
function timeStamp (at = new Date()): string {
  return at.toISOString().replace(/[-:]|\.\d+/g, '')
}

/** timeStamp() with a random tail: names of two restores in one second never collide. */
export function uniqueStamp (at = new Date()): string {
  return `${timeStamp(at)}-${randomBytes(3).toString('hex')}`
}
