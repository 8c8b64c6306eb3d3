// fastbase's own tables for running in production: which instances are alive (a restore refuses
// while one is) and which scheduled job ran when (one instance of a fleet claims each run). Times are
// epoch seconds of the writer's clock.
import type { TableData } from '../../schemas/config.js'

export const INSTANCES_TABLE = '_fastbase_instances'
export const JOBS_TABLE = '_fastbase_jobs'

const text = (name: string, extra: object = {}) => ({ name, type: 'text' as const, sqlType: 'text' as const, ...extra })
const epoch = (name: string, notNull = true) => ({ name, type: 'integer' as const, sqlType: 'integer' as const, notNull })

export const operationsTables: TableData[] = [
  {
    // One row per running instance, refreshed every few seconds and removed on a clean stop.
    name: INSTANCES_TABLE,
    fields: [text('id', { primary: true, notNull: true }), text('host', { notNull: true }), epoch('pid'), epoch('started_at'), epoch('seen_at')]
  },
  {
    // One row per job: the last schedule slot an instance claimed, and when the job last succeeded.
    name: JOBS_TABLE,
    fields: [text('name', { primary: true, notNull: true }), text('slot', { notNull: true }), text('instance', { notNull: true }), epoch('claimed_at'), epoch('succeeded_at', false)]
  }
]
