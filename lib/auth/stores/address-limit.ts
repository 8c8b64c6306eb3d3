// Per-address limits of the email-code flows (decision D113): how often one address may be mailed a
// code, whatever client asks. Where instances share the database (PostgreSQL) the counters are the
// fleet's rate-limit store (lib/auth/stores/rate-limit-store.ts); a SQLite file has one process, which counts in memory.
import type { DatabaseRateLimitStore, Hits } from './rate-limit-store.js'

export interface AddressLimit {
  /** Counts a hit on `key`; false when it is past `max` in the current window. */
  hit: (key: string, max: number, windowMs: number) => Promise<boolean>
}

/** No limit: config `rateLimit: false` (decision D24). */
export const unlimited: AddressLimit = { hit: async () => true }

export function sharedAddressLimit (store: DatabaseRateLimitStore): AddressLimit {
  return {
    hit: async (key, max, windowMs) => await new Promise<boolean>((resolve, reject) => {
      store.incr(key, (error: Error | null, result?: Hits) => error !== null ? reject(error) : resolve((result?.current ?? Infinity) <= max), windowMs)
    })
  }
}

/** Fixed windows in memory, at most `capacity` keys (the oldest window goes first). */
export function memoryAddressLimit (capacity = 10_000): AddressLimit {
  const windows = new Map<string, { hits: number, resetAt: number }>()
  return {
    hit: async (key, max, windowMs) => {
      const now = Date.now()
      let window = windows.get(key)
      if (window === undefined || window.resetAt <= now) {
        windows.delete(key)
        const oldest = windows.size >= capacity ? windows.keys().next() : undefined
        if (oldest?.done === false) windows.delete(oldest.value)
        window = { hits: 0, resetAt: now + windowMs }
        windows.set(key, window)
      }
      window.hits++
      return window.hits <= max
    }
  }
}
