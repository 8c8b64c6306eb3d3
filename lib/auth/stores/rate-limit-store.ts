// Rate-limit counters in PostgreSQL, as a `store` for @fastify/rate-limit: every instance sharing the
// database counts the same hits, so `max` holds for the whole fleet instead of per process.
// One atomic upsert per hit, timed by the database clock, so instances whose clocks differ still agree.
import type { Knex } from 'knex'
import type { TableData } from '../../../schemas/config.js'
import { type FastbaseError, errors } from '../../errors.js'
import { text } from '../../db/internal-columns.js'

export const RATE_LIMITS = '_fastbase_rate_limits'

/**
 * Rate-limit counters (a database-clock timestamp), one row per route and caller (the store below). PostgreSQL only:
 * a SQLite file has one process, which counts in memory. Created by plugins/auth.ts, whether or not a
 * table has the auth extension (admin sign-in is limited too).
 */
export const rateLimitTable: TableData = {
  name: RATE_LIMITS,
  fields: [
    text('key', { primary: true, notNull: true }),
    { name: 'hits', type: 'integer', sqlType: 'integer', notNull: true },
    { name: 'reset_at', type: 'date', sqlType: 'timestamp', notNull: true }
  ],
  indexes: [{ fields: ['reset_at'] }]
}

export interface Hits { current: number, ttl: number }
export type HitsCallback = (error: Error | null, result?: Hits) => void

/** What @fastify/rate-limit passes to `child()`: the route's merged limit settings, the route under `routeInfo`. */
export interface RouteLimit { routeInfo: { method: string | string[], url: string } }

// A row whose window has passed starts a new one; SET expressions all read the row as it was, so both
// CASEs see the old reset_at. Concurrent hits on one key queue on its row lock: none is lost.
const HIT = `INSERT INTO "${RATE_LIMITS}" AS r ("key", "hits", "reset_at")
VALUES (?, 1, now() + CAST(? AS double precision) * interval '1 millisecond')
ON CONFLICT ("key") DO UPDATE SET
  "hits" = CASE WHEN r."reset_at" <= now() THEN 1 ELSE r."hits" + 1 END,
  "reset_at" = CASE WHEN r."reset_at" <= now() THEN excluded."reset_at" ELSE r."reset_at" END
RETURNING "hits", CAST(ceil(extract(epoch FROM "reset_at" - now()) * 1000) AS bigint) AS "ttl"`

/** The answer when the counters cannot be read: fail closed, the request is not let through unlimited. */
const unavailable = (cause: unknown): FastbaseError => {
  const error = errors.rateLimitUnavailable()
  error.cause = cause
  return error
}

/**
 * Fixed windows, like the plugin's own LocalStore. `continueExceeding` and `exponentialBackoff` are not
 * supported: fastbase's limit settings are `max` and `timeWindow` only.
 */
export class DatabaseRateLimitStore {
  constructor (
    private readonly knex: Knex,
    private readonly onError: (error: unknown) => void,
    /** Per route: the same caller on two routes has two counters. */
    private readonly prefix = ''
  ) {}

  incr (key: string, callback: HitsCallback, timeWindow = 0): void {
    // Two-argument then: an exception in the callback must not call it a second time with an error.
    this.knex.raw(HIT, [this.prefix + key, timeWindow]).then(
      (result: { rows: Array<{ hits: number, ttl: number }> }) => {
        const [row] = result.rows
        callback(null, { current: row.hits, ttl: row.ttl })
      },
      (error: unknown) => {
        this.onError(error)
        callback(unavailable(error))
      }
    )
  }

  child (route: RouteLimit): DatabaseRateLimitStore {
    return new DatabaseRateLimitStore(this.knex, this.onError, `${this.prefix}${String(route.routeInfo.method)} ${route.routeInfo.url} `)
  }
}

/** The store class to pass as the plugin's `store` (it constructs the store itself). */
export function databaseRateLimitStore (knex: Knex, onError: (error: unknown) => void): new () => DatabaseRateLimitStore {
  return class extends DatabaseRateLimitStore {
    constructor () {
      super(knex, onError)
    }
  }
}
