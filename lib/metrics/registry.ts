// fastbase's Prometheus metrics (prom-client), one registry per fastbase instance (several may live in
// one process). Everything here is created only when metrics are configured: with them off, nothing
// is timed, counted or hooked anywhere.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Knex } from 'knex'
import type { DirectRunner } from '../dialects/connection.js'
import { planCacheCounts } from '../crud/plan-cache.js'
import { totalCacheCounts } from '../crud/total-cache.js'

/** Seconds: from a cached read (well under a millisecond) to a slow request. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface MetricSources {
  knex: Knex
  /** What the direct runner holds beside the pool (lib/dialects/connection.ts DirectRunner#held). */
  held?: () => { idle: number, waiting: number }
  /** Realtime streams, classes and queued bytes, when realtime is on. */
  realtime?: () => { streams: number, classes: number, queuedBytes: number, pendingChanges: number }
  /** Epoch seconds of the last stored backup (of any instance on this database). */
  lastBackup: () => Promise<number | undefined>
}

export interface Metrics {
  registry: Registry
  /** One answered request: its route template ('unmatched' for none), method, status and seconds. */
  request: (method: string, route: string, status: number, seconds: number) => void
  /** The direct runner, each statement timed. */
  timedRunner: (runner: DirectRunner) => DirectRunner
}

/** `select`, `insert`, `update`, `delete`, or `other` (DDL, transactions, pragmas): a bounded label. */
export function operationOf (sql: string): string {
  const word = /^\s*\(?\s*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase()
  if (word === 'with') return /\b(insert|update|delete)\b/i.exec(sql)?.[1]?.toLowerCase() ?? 'select'
  return word === 'select' || word === 'insert' || word === 'update' || word === 'delete' ? word : 'other'
}

export function createMetrics (sources: MetricSources): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({ name: 'fastbase_http_requests_total', help: 'Requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] })
  const latency = new Histogram({ name: 'fastbase_http_request_duration_seconds', help: 'Time to answer, by route template and method', labelNames: ['route', 'method'], buckets: LATENCY_BUCKETS, registers: [registry] })
  const refusals = new Counter({ name: 'fastbase_rate_limit_refusals_total', help: 'Requests refused with 429 (rate limits, realtime connection limits), by route template', labelNames: ['route'], registers: [registry] })
  const statements = new Histogram({ name: 'fastbase_db_statement_duration_seconds', help: 'Time of database statements, by operation', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] })
  const pool = sources.knex.client.pool as { numUsed: () => number, numFree: () => number, numPendingAcquires: () => number, max: number } | undefined
  new Gauge({
    name: 'fastbase_db_pool_connections',
    help: 'Database pool connections by state (used, free, pending acquires, max)',
    labelNames: ['state'],
    registers: [registry],
    collect () {
      if (pool === undefined) return
      // Connections idle on the direct runner's stack are free, its waiting statements pending.
      const { idle, waiting } = sources.held?.() ?? { idle: 0, waiting: 0 }
      this.set({ state: 'used' }, pool.numUsed() - idle)
      this.set({ state: 'free' }, pool.numFree() + idle)
      this.set({ state: 'pending' }, pool.numPendingAcquires() + waiting)
      this.set({ state: 'max' }, pool.max)
    }
  })
  new Counter({
    name: 'fastbase_read_plan_cache_total',
    help: 'Read plan lookups, by result (hit: from the cache; miss: built), for every fastbase instance of the process',
    labelNames: ['result'],
    registers: [registry],
    collect () {
      this.reset()
      this.inc({ result: 'hit' }, planCacheCounts.hits)
      this.inc({ result: 'miss' }, planCacheCounts.misses)
    }
  })
  new Counter({
    name: 'fastbase_list_total_cache_total',
    help: 'List totals, by result (hit: kept from an earlier count, the data unchanged since; miss: counted), for every fastbase instance of the process',
    labelNames: ['result'],
    registers: [registry],
    collect () {
      this.reset()
      this.inc({ result: 'hit' }, totalCacheCounts.hits)
      this.inc({ result: 'miss' }, totalCacheCounts.misses)
      this.inc({ result: 'carried' }, totalCacheCounts.carried)
    }
  })
  if (sources.realtime !== undefined) {
    const load = sources.realtime
    new Gauge({
      name: 'fastbase_realtime',
      help: 'Realtime on this instance: open streams, subscriber classes, bytes written and not yet read by clients, changes waiting for delivery',
      labelNames: ['measure'],
      registers: [registry],
      collect () {
        const now = load()
        this.set({ measure: 'streams' }, now.streams)
        this.set({ measure: 'classes' }, now.classes)
        this.set({ measure: 'queued_bytes' }, now.queuedBytes)
        this.set({ measure: 'pending_changes' }, now.pendingChanges)
      }
    })
  }
  new Gauge({
    name: 'fastbase_backup_last_success_age_seconds',
    help: 'Seconds since the last backup stored by any instance of this database (absent before the first)',
    registers: [registry],
    async collect () {
      this.reset()
      const last = await sources.lastBackup().catch(() => undefined)
      // reset() leaves a label-less gauge at 0, which would read as "just backed up": drop the sample.
      if (last === undefined) this.remove()
      else this.set(Math.max(0, Date.now() / 1000 - last))
    }
  })

  // Statements through Knex (transactions, writes with conflicts, DDL): timed from its events.
  const started = new Map<string, bigint>()
  sources.knex.on('query', (query: { __knexQueryUid?: string }) => { if (query.__knexQueryUid !== undefined) started.set(query.__knexQueryUid, process.hrtime.bigint()) })
  const finished = (query: { __knexQueryUid?: string, sql?: string }): void => {
    const uid = query.__knexQueryUid
    if (uid === undefined) return
    const start = started.get(uid)
    if (start === undefined) return
    started.delete(uid)
    statements.observe({ operation: operationOf(query.sql ?? '') }, Number(process.hrtime.bigint() - start) / 1e9)
  }
  sources.knex.on('query-response', (_response: unknown, query: { __knexQueryUid?: string, sql?: string }) => finished(query))
  sources.knex.on('query-error', (_error: unknown, query: { __knexQueryUid?: string, sql?: string }) => finished(query))

  const timed = <T>(sql: string, run: () => T): T => {
    const start = process.hrtime.bigint()
    const observe = (): void => { statements.observe({ operation: operationOf(sql) }, Number(process.hrtime.bigint() - start) / 1e9) }
    const result = run()
    if (result instanceof Promise) void result.then(observe, observe)
    else if (result !== undefined) observe()
    return result
  }

  return {
    registry,
    request (method, route, status, seconds) {
      requests.inc({ route, method, status: String(status) })
      latency.observe({ route, method }, seconds)
      if (status === 429) refusals.inc({ route })
    },
    // The runner's other members (held, dataVersion) pass through as they are; its reads are timed.
    timedRunner: (runner) => ({
      ...runner,
      read: (statement, bindings) => timed(statement.native, () => runner.read(statement, bindings)),
      write: (sql, bindings, span) => timed(sql, () => runner.write(sql, bindings, span)),
      readVersioned: runner.readVersioned === undefined ? undefined : (statement, bindings) => timed(statement.native, () => runner.readVersioned?.(statement, bindings))
    })
  }
}
