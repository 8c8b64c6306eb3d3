// Scheduled jobs across a fleet: every instance runs the same schedule, and the first to claim a
// slot (the time the schedule fired for) runs it; the others find the slot taken. One upsert, the
// same text on both dialects: it answers a row only to the instance whose claim moved the slot on.
import type { Knex } from 'knex'
import { JOBS_TABLE } from '../internal/internal-tables.js'

/** The columns of a job's row read here (epoch seconds: a number, or text from a PostgreSQL bigint). */
interface JobRow { name: string, succeeded_at: number | string | null }

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

const CLAIM = `INSERT INTO "${JOBS_TABLE}" ("name", "slot", "instance", "claimed_at") VALUES (?, ?, ?, ?)
ON CONFLICT ("name") DO UPDATE SET "slot" = excluded."slot", "instance" = excluded."instance", "claimed_at" = excluded."claimed_at"
WHERE "${JOBS_TABLE}"."slot" < excluded."slot"
RETURNING "instance"`

/** True when this instance won `slot` (an ISO time: later slots sort after earlier ones) of `job`. */
export async function claimSlot (knex: Knex, job: string, slot: string, instance: string): Promise<boolean> {
  const result = await knex.raw(CLAIM, [job, slot, instance, nowSeconds()])
  // SQLite answers raw() with the rows, PostgreSQL with its result object (raw() is typed `any`).
  const rows: unknown[] = Array.isArray(result) ? result : result.rows
  return rows.length > 0
}

/** Records a success of `job` (the claim's row is made when the job ran without one: on demand). */
export async function recordSuccess (knex: Knex, job: string, instance: string, at = nowSeconds()): Promise<void> {
  await knex(JOBS_TABLE).insert({ name: job, slot: '', instance, claimed_at: at, succeeded_at: at }).onConflict('name').merge(['succeeded_at'])
}

/** Epoch seconds of the last success of `job`, or undefined. */
export async function lastSuccess (knex: Knex, job: string): Promise<number | undefined> {
  const row = await knex<JobRow>(JOBS_TABLE).where({ name: job }).first('succeeded_at')
  return row?.succeeded_at === null || row?.succeeded_at === undefined ? undefined : Number(row.succeeded_at)
}
