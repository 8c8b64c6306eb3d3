// Expand cost, measured by `npm run bench` (bench/run.mjs): the most expensive relation expand an
// anonymous caller may send within the default limits, on a 10,000-row table whose rows all
// reference one another (every level of every expansion finds a row and builds its object).
//
// The request: as many three-level expansions as `limits.relations` allows (`parent(parent(parent(
// id)))` is three subqueries for one column), a full page (maxLimit rows) with its count (`list`),
// and the shapes that could make the database build objects for rows it does not return: an
// `order` on a column without an index (a sort), the last page (an offset). `distinct` and ordering
// by a relation are refused. Requests are sent one at a time through app.inject, so a latency is the
// request's own cost (routing, plan, statement, serialization), not queueing; the target is p99 ≤
// 100 ms on both dialects.
import { DEFAULT_LIMITS } from '../dist/lib/limits.js'
import { openFastbase } from './project.mjs'

export const EXPAND_ROWS = 10_000
export const EXPAND_TARGET_MS = 100
const INSERT_BATCH = 100

/** `nodes`: every row has a parent, and the listRule reads a column, as a real one would. */
export function expandConfig (limits = {}) {
  return {
    appName: 'fastbase expand bench',
    appUrl: 'http://127.0.0.1',
    jwtSecret: 'fastbase-bench-expand-secret',
    rateLimit: false,
    limits,
    tables: [{
      name: 'nodes',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'parent', type: 'relation', sqlType: 'integer', foreignKey: { table: 'nodes', column: 'id' } }
      ],
      extensions: [{ name: 'rules', listRule: 'published == true', viewRule: 'published == true', createRule: null, updateRule: null, deleteRule: null }]
    }]
  }
}

/** The worst select list `relations` subqueries allow: three-level chains, then a shorter tail. */
export function worstSelect (relations) {
  const items = []
  for (let left = relations; left > 0; left -= 3) {
    const depth = Math.min(3, left)
    items.push(`${'parent('.repeat(depth)}id${')'.repeat(depth)} as p${items.length}`)
  }
  return items.join(', ')
}

function requestsOf (relations) {
  const select = encodeURIComponent(worstSelect(relations))
  const base = `/api/v1/table/nodes`
  return {
    'list, primary-key order': `${base}/list?select=${select}`,
    'list, order on an unindexed column': `${base}/list?select=${select}&order=-title`,
    'list, last page (offset)': `${base}/list?select=${select}&offset=${EXPAND_ROWS - 1000}`
  }
}

async function seed (app) {
  const db = app.fastbase.db
  for (let start = 1; start <= EXPAND_ROWS; start += INSERT_BATCH) {
    const rows = []
    // Parents point back to earlier rows (the first to the last): every chain is full and all published.
    for (let id = start; id < start + INSERT_BATCH && id <= EXPAND_ROWS; id++) rows.push({ id, title: `node ${(id * 7919) % EXPAND_ROWS}`, published: true, parent: null })
    await db('nodes').insert(rows)
  }
  await db.raw('UPDATE nodes SET parent = CASE WHEN id = 1 THEN ? ELSE id - 1 END', [EXPAND_ROWS])
  if (app.fastbase.dialect.name === 'postgres') await db.raw('ANALYZE nodes')
}

function percentile (sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))]
}

/**
 * Seeds `databaseUrl` (a fresh database) and times each worst request `samples` times after a
 * warm-up. Answers `{ relations, rows, scenarios: [{ name, p50, p99, rows }], worstP99, target }`.
 */
export async function measureExpand (databaseUrl, dataDir, { samples = 50, warmup = 5, relations = DEFAULT_LIMITS.relations } = {}) {
  const app = await openFastbase(expandConfig(), databaseUrl, dataDir)
  try {
    await seed(app)
    const scenarios = []
    for (const [name, url] of Object.entries(requestsOf(relations))) {
      const times = []
      let rows = 0
      for (let i = 0; i < warmup + samples; i++) {
        const started = performance.now()
        const res = await app.inject({ method: 'GET', url })
        const ms = performance.now() - started
        if (res.statusCode !== 200) throw new Error(`expand bench: ${name} answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
        if (i === 0) rows = res.json().items.length
        if (i >= warmup) times.push(ms)
      }
      times.sort((a, b) => a - b)
      scenarios.push({ name, rows, p50: percentile(times, 50), p99: percentile(times, 99) })
    }
    return { relations, tableRows: EXPAND_ROWS, samples, scenarios, worstP99: Math.max(...scenarios.map((s) => s.p99)), targetMs: EXPAND_TARGET_MS }
  } finally {
    await app.close()
  }
}

/** The report's lines. */
export function expandReport (dialect, result) {
  const lines = [`\nExpand on ${dialect}: ${result.relations} relation subqueries (limits.relations) in three-level chains, anonymous, ` +
    `${result.tableRows} rows, ${result.samples} requests one at a time per shape; target p99 ≤ ${result.targetMs} ms`]
  for (const s of result.scenarios) lines.push(`  ${s.name.padEnd(36)} ${String(s.rows).padStart(5)} rows  p50 ${s.p50.toFixed(1).padStart(6)} ms  p99 ${s.p99.toFixed(1).padStart(6)} ms`)
  lines.push(`  worst p99 ${result.worstP99.toFixed(1)} ms: ${result.worstP99 <= result.targetMs ? 'within' : 'OVER'} the target`)
  return lines.join('\n')
}
