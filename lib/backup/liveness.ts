// The liveness marker a restore reads: every running instance keeps a row of `_fastbase_instances`
// fresh (every HEARTBEAT_SECONDS) from the moment it is ready and removes it when it stops cleanly.
// A row seen within STALE_AFTER_SECONDS means an instance may be using the database; a killed
// instance's row goes stale on its own. The clock is each instance's own: machines of one fleet keep theirs within a few
// seconds (NTP), far inside the margin between the two numbers.
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { INSTANCES_TABLE } from '../internal/internal-tables.js'

export const HEARTBEAT_SECONDS = 10
export const STALE_AFTER_SECONDS = 35

export interface LiveInstance { id: string, host: string, pid: number, seenSecondsAgo: number }
/** An instance's row (pid and epoch seconds come back as text from PostgreSQL bigints). */
interface InstanceRow { id: string, host: string, pid: number | string, seen_at: number | string }

export interface Heartbeat {
  id: string
  /** Writes this instance's row now and every HEARTBEAT_SECONDS (once the server is ready). */
  start: () => Promise<void>
  /** Removes this instance's row (a clean stop, or a start that failed after `start`). */
  stop: () => Promise<void>
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/**
 * This instance's heartbeat: its id now (the backup service's job claims name it), its row only
 * from `start` on, so a start that fails before then leaves no row for a restore to wait on.
 * A failed write is logged once per streak.
 */
export function heartbeat (knex: Knex, log: { warn: (details: object, message: string) => void }): Heartbeat {
  const id = randomBytes(9).toString('base64url')
  let timer: NodeJS.Timeout | undefined
  let failing = false
  const beat = async (row: object): Promise<void> => {
    try {
      await knex(INSTANCES_TABLE).insert({ ...row, seen_at: nowSeconds() }).onConflict('id').merge(['seen_at'])
      failing = false
    } catch (err) {
      if (!failing) log.warn({ err }, 'fastbase: could not refresh this instance\'s liveness row (a restore might not see that it runs)')
      failing = true
    }
  }
  return {
    id,
    start: async () => {
      const row = { id, host: hostname().slice(0, 200), pid: process.pid, started_at: nowSeconds() }
      await beat(row)
      timer = setInterval(() => { void beat(row) }, HEARTBEAT_SECONDS * 1000).unref()
    },
    stop: async () => {
      clearInterval(timer)
      await knex(INSTANCES_TABLE).where({ id }).delete().catch(() => {})
    }
  }
}

/** Instances seen within STALE_AFTER_SECONDS (none when the table does not exist yet). */
export async function liveInstances (knex: Knex, now = nowSeconds()): Promise<LiveInstance[]> {
  if (!await knex.schema.hasTable(INSTANCES_TABLE)) return []
  const rows = await knex<InstanceRow>(INSTANCES_TABLE).where('seen_at', '>', now - STALE_AFTER_SECONDS).select('id', 'host', 'pid', 'seen_at')
  return rows.map((r) => ({ id: r.id, host: r.host, pid: Number(r.pid), seenSecondsAgo: Math.max(0, now - Number(r.seen_at)) }))
}

/** The refusal's text: who was seen, and what to do. */
export function describeLive (instances: LiveInstance[]): string {
  const list = instances.slice(0, 5).map((i) => `${i.host} pid ${i.pid} (seen ${i.seenSecondsAgo} s ago)`).join(', ')
  return `${instances.length} fastbase instance${instances.length === 1 ? ' is' : 's are'} running on this database: ${list}. ` +
    `Stop ${instances.length === 1 ? 'it' : 'them'} first; a killed instance counts as running for ${STALE_AFTER_SECONDS} s after its last heartbeat`
}
