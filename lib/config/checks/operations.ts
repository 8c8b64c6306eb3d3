// Cross-field checks of what running in production configures: the backup schedule is a cron
// expression croner accepts (the scheduler's own parser, so a start never fails later on it), and
// the metrics token is long enough not to be guessed.
import { Cron } from 'croner'
import { isObject } from '../../plain.js'
import type { Check } from './common.js'
import { errorMessage } from '../../thrown.js'

export const MIN_METRICS_TOKEN = 16

export const checkOperations: Check = (config) => {
  const problems: string[] = []
  const backups: unknown = config.backups
  if (isObject(backups) && typeof backups.schedule === 'string') {
    const problem = cronProblem(backups.schedule)
    if (problem !== undefined) problems.push(`backups.schedule: ${problem}`)
  }
  const metrics: unknown = config.metrics
  // An unresolved `$NAME` is reported by the secrets step; its text says nothing of the token's length.
  if (isObject(metrics) && typeof metrics.token === 'string' && !metrics.token.startsWith('$') && metrics.token.length < MIN_METRICS_TOKEN) {
    problems.push(`metrics.token: at least ${MIN_METRICS_TOKEN} characters (a scraper sends it as a bearer token; e.g. \`openssl rand -hex 24\`)`)
  }
  return problems
}

/** undefined when croner accepts `pattern`, else its reason. */
export function cronProblem (pattern: string): string | undefined {
  try {
    // paused: parsing only, nothing is scheduled.
    new Cron(pattern, { paused: true }).stop()
    return undefined
  } catch (err) {
    return `not a cron expression croner accepts (${errorMessage(err)}); e.g. "0 3 * * *" for 03:00 every day`
  }
}
