// When the purge of expired auth rows runs: once shortly after start, then every ten minutes, never two
// runs at once. The jitter spreads instances started together; the timers never keep the process alive.
import type { Knex } from 'knex'
import { purgeExpired } from './purge.js'

const FIRST_RUN_MS = 30_000
const EVERY_MS = 10 * 60_000
const JITTER_MS = 60_000

const jitter = (): number => Math.floor(Math.random() * JITTER_MS)

/** Starts the schedule; the returned function stops it and waits for a run in progress. */
export function schedulePurge (knex: Knex, onError: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined
  const run = (): void => {
    if (running !== undefined) return
    running = purgeExpired(knex).then(() => {}, onError).finally(() => { running = undefined })
  }
  const first = setTimeout(run, FIRST_RUN_MS + jitter()).unref()
  const every = setInterval(run, EVERY_MS + jitter()).unref()
  return async () => {
    clearTimeout(first)
    clearInterval(every)
    await running
  }
}
