// Runs `job` at the times of a cron expression (croner). Each run is told the time it was scheduled
// for (its slot), the same on every instance of a fleet whatever their clocks, so instances can agree
// which one runs it (lib/backup/jobs.ts). A run still going when the next is due makes that one skip.
import { Cron } from 'croner'

export interface Schedule {
  /** When the next run is due (undefined when the expression has no future time). */
  next: () => Date | undefined
  stop: () => void
}

export function schedule (pattern: string, job: (slot: Date) => Promise<void>): Schedule {
  let planned: Date | null = null
  const cron = new Cron(pattern, { protect: true, paused: true }, async () => {
    const slot = planned ?? new Date()
    planned = cron.nextRun()
    await job(slot)
  })
  planned = cron.nextRun()
  cron.resume()
  return {
    next: () => cron.nextRun() ?? undefined,
    stop: () => { cron.stop() }
  }
}
