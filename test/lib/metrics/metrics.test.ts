// Prometheus metrics (plugins/metrics.ts, lib/metrics/registry.ts) on both dialects: off by default
// (no route, no hook, no listener); on, behind a token, with requests by route and status, statement
// time by operation, pool use, plan-cache hits and misses, realtime, rate-limit refusals and the age
// of the last backup. Config checks: a short token, a bad path.
import t from 'tap'
import { adminToken, buildApp, forEachDialect } from '../../helper.js'
import { createMetrics, operationOf } from '../../../lib/metrics/registry.js'
import { EventEmitter } from 'node:events'
import type { Knex } from 'knex'
import { validateConfig } from '../../../lib/config/validate.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const TOKEN = 'metrics-token-0123456789abcdef'
const base: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'x',
  rateLimit: { max: 2, timeWindow: 60_000 },
  admin: { viewerPassword: 'viewer-password-value' },
  tables: [{
    name: 'notes',
    fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'body', type: 'text', sqlType: 'text' }],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
  }]
}

/** The value of one sample line `name{labels} value`, or undefined. */
function sample (text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

forEachDialect(t, 'off by default: no route, no hook, no listener', async (t, dialect) => {
  const app = await buildApp(t, base, { dialect })
  t.equal((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 404)
  t.equal(app.fastbase.db.listenerCount('query'), 0, 'no statement timing')
  const off = await buildApp(t, { ...base, metrics: { enabled: false, token: TOKEN } }, { dialect })
  t.equal((await off.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 404, 'enabled: false')
  t.equal(off.fastbase.db.listenerCount('query'), 0)
})

forEachDialect(t, 'on: behind the token, every family', async (t, dialect) => {
  const app = await buildApp(t, { ...base, metrics: { token: TOKEN, path: '/ops/metrics' } }, { dialect })
  const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => await app.inject({ method: 'GET', url: '/ops/metrics', headers })
  t.equal((await scrape({})).statusCode, 401, 'no token')
  t.equal((await scrape({ authorization: 'Bearer wrong-token-0123456789' })).statusCode, 401, 'a wrong token')
  t.equal((await scrape({ authorization: `Bearer ${adminToken}` })).statusCode, 401, 'the service token is not the metrics token')
  t.notMatch((await scrape({})).body, /fastbase_/, 'nothing of the metrics without it')

  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { id: 1, body: 'a' } } })).statusCode, 200)
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'GET', url: '/api/v1/table/notes/list' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/no/such/route' })).statusCode, 404)
  for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { password: 'wrong' } })
  t.notMatch((await scrape()).body, /^fastbase_backup_last_success_age_seconds /m, 'no backup yet: the age is absent, not 0 (an age alert must not read "fresh")')
  await app.fastbase.backups.create()

  const res = await scrape()
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.equal(sample(text, 'fastbase_http_requests_total', 'route="/api/v1/table/notes/list",method="GET",status="200"'), 3, 'requests by route and status')
  t.equal(sample(text, 'fastbase_http_requests_total', 'route="unmatched",status="404"'), 1, 'unknown paths share one label')
  t.equal(sample(text, 'fastbase_http_request_duration_seconds_count', 'route="/api/v1/table/notes/list"'), 3, 'latency histogram')
  t.ok((sample(text, 'fastbase_db_statement_duration_seconds_count', 'operation="select"') ?? 0) >= 3, 'statement time by operation')
  t.ok((sample(text, 'fastbase_db_statement_duration_seconds_count', 'operation="insert"') ?? 0) >= 1)
  t.ok(sample(text, 'fastbase_db_pool_connections', 'state="max"')! >= 1, 'pool use')
  t.equal(sample(text, 'fastbase_db_pool_connections', 'state="used"'), 0, 'no connection in use between requests')
  t.ok((sample(text, 'fastbase_read_plan_cache_total', 'result="hit"') ?? 0) >= 2, 'plan cache hits')
  t.ok((sample(text, 'fastbase_read_plan_cache_total', 'result="miss"') ?? 0) >= 1, 'and misses')
  t.ok((sample(text, 'fastbase_list_total_cache_total', 'result="hit"') ?? 0) >= 2, 'list totals kept: the same list asked again')
  t.ok((sample(text, 'fastbase_list_total_cache_total', 'result="miss"') ?? 0) >= 1, 'and counted')
  t.equal(sample(text, 'fastbase_realtime', 'measure="streams"'), 0, 'realtime streams')
  t.equal(sample(text, 'fastbase_rate_limit_refusals_total', 'route="/api/v1/admin/login"'), 1, 'the third login was refused')
  const age = Number(/^fastbase_backup_last_success_age_seconds (\S+)$/m.exec(text)?.[1])
  t.ok(age >= 0 && age < 60, `the last backup's age (${age} s)`)
  t.match(text, /^process_cpu_user_seconds_total /m, 'the process metrics')
  t.notMatch(text, /notes.*body|jwtSecret|wrong/, 'no data, no secret')
})

t.test('statement operations', async (t) => {
  t.equal(operationOf('select 1'), 'select')
  t.equal(operationOf('  INSERT INTO "t" VALUES (?)'), 'insert')
  t.equal(operationOf('with x as (select 1) update t set a = 1'), 'update')
  t.equal(operationOf('WITH x AS (SELECT 1) SELECT * FROM x'), 'select')
  t.equal(operationOf('(select 1) union (select 2)'), 'select')
  t.equal(operationOf('BEGIN'), 'other')
  t.equal(operationOf('PRAGMA foreign_keys = ON'), 'other')
  t.equal(operationOf(''), 'other')
})

t.test('config checks', async (t) => {
  const problems = (extra: object): string[] => { const result = validateConfig({ ...base, ...extra }); return 'problems' in result ? result.problems : [] }
  t.match(problems({ metrics: { token: 'short' } }), [/metrics\.token: at least 16 characters/])
  t.match(problems({ metrics: { token: TOKEN, path: 'metrics' } }).join('\n'), /metrics\.path/)
  t.match(problems({ metrics: {} }).join('\n'), /metrics\.token/)
  t.match(problems({ backups: { schedule: 'every day' } }), [/backups\.schedule: not a cron expression croner accepts .*e\.g\. "0 3 \* \* \*"/])
  t.match(problems({ backups: { keep: 0 } }).join('\n'), /backups\.keep/)
  t.match(problems({ backups: { storage: { driver: 's3', bucket: 'b', accessKeyId: 'k' } } }), [/backups\.storage: accessKeyId and secretAccessKey must be given together/])
  t.same(problems({ backups: { schedule: '0 3 * * *', keep: 3 }, metrics: { token: TOKEN } }), [])
})

t.test('the pool gauge counts what the direct runner holds: its idle connections as free, its waiting statements as pending', async (t) => {
  const pool = { numUsed: () => 5, numFree: () => 1, numPendingAcquires: () => 1, max: 10 }
  // A Knex stand-in: the gauge reads its pool, the statement timer listens to its events.
  const knex = Object.assign(new EventEmitter(), { client: { pool } }) as unknown as Knex
  const metrics = createMetrics({ knex, held: () => ({ idle: 2, waiting: 3 }), lastBackup: async () => undefined })
  const text = await metrics.registry.metrics()
  t.equal(sample(text, 'fastbase_db_pool_connections', 'state="used"'), 3, 'five lent by the pool, two of them idle on the stack')
  t.equal(sample(text, 'fastbase_db_pool_connections', 'state="free"'), 3)
  t.equal(sample(text, 'fastbase_db_pool_connections', 'state="pending"'), 4, 'one waiting on the pool, three on the stack')
  t.equal(sample(text, 'fastbase_db_pool_connections', 'state="max"'), 10)
})
