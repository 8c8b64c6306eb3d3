// `npm run bench`: fastbase against the physical ceiling (bench/ceiling.mjs, the same routes written
// by hand on bare Fastify with prepared statements), on the same data, machine and run.
//
//   npm run bench                          SQLite, 10 s per run after a 2 s warm-up, 2 rounds
//   npm run bench -- --dialect postgres    PostgreSQL at FASTBASE_BENCH_PG_URL (a fresh schema, dropped afterwards)
//   npm run bench -- --quick               smoke run: 1 s, 1 round; reports, never fails on what it sees
//   npm run bench -- --search-only         only the search measure (bench/search.mjs, 100,000 rows)
//   npm run bench -- --worst-only          only the worst requests the limits accept (bench/search.mjs, same table)
//   npm run bench -- --expand-only         only the expand scenario (bench/expand.mjs), on its own data
//   npm run bench -- --relations-only      only the relation-path scenario (bench/relations.mjs), on its own data
//   npm run bench -- --items-only          only the items scenario set (bench/items.mjs: npm start, trivial rules, anonymous, small rows)
//   npm run bench -- --realtime-only       only the realtime measures; --filters-only: only the many-filters one
//   npm run bench -- --only view,insert    only these scenarios (and the memory scenario), no extra measures
//   npm run bench -- --requests 20000      each measured run sends this many requests instead of running --duration
//   npm run bench -- --fastbase-node-option=--cpu-prof   one more Node flag for fastbase's servers (repeatable; they already get npm start's)
//   npm run bench -- --items-only --ceiling-node-option=--cpu-prof   the same for the items set's ceiling (Node's default flags otherwise)
//   npm run bench -- --items-only --segments   also where each server's time per request goes (bench/segments.cjs)
//   npm run bench -- --items-only --pairs 5    five pairs of fresh processes (each its own database), median and range per scenario
//   options: --duration <s> --warmup <s> --rounds <n> --connections <n> --mixed <s>
//
// Beside req/s each run reports the server's CPU time per request (user + system time of its
// process over the run, divided by the requests it answered): on a machine other jobs load, req/s
// moves with them while CPU time per request barely does. The memory scenario runs a mix of every
// scenario for --mixed seconds (60 by default) and reports the resident set, heap and external memory after it.
//
// Each server runs in its own child process and autocannon drives them from this one, so the load
// generator never shares an event loop with a server (it still shares the CPUs: the numbers are for
// comparing the two servers with each other, not for capacity planning). Per scenario the servers
// take turns, A B A B, so drift on a noisy machine hits both. Before measuring, both servers must
// answer every read scenario with deep-equal bodies, or the run stops. A full run writes every
// round's numbers to bench/results/<date>-<dialect>.json (latencies in ms, memory in bytes) and
// exits 1 if any request failed; --quick only prints.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { POST_COUNT, USER_COUNT, USERS_JWT_KEY, seed } from './project.mjs'
import { CURVE_LIMITS } from './curve.mjs'
import { measureRealtime, measureRealtimeFilters } from './realtime.mjs'
import { SEARCH_RUNS, measureSearch, measureWorstAccepted, reportSearch, reportWorstAccepted, seedSearch } from './search.mjs'
import { measureExpand, expandReport } from './expand.mjs'
import { measureRelations, relationsReport } from './relations.mjs'
import { startNodeFlags } from './start-flags.mjs'
import { measureItems, itemsReport, pairsReport, pairsSummary } from './items.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
const RSS_SAMPLE_MS = 250
const MIXED_SECONDS = 60
const STARTUP_RUNS = 3
const MiB = 1024 * 1024

// ------------------------------------------------------------------ options

const { values: flags } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    requests: { type: 'string' },
    mixed: { type: 'string' },
    only: { type: 'string' },
    pairs: { type: 'string' },
    // Node flags for fastbase's server processes (not the ceiling's, nor this one's), to measure what
    // a flag of `npm start` costs under load.
    'fastbase-node-option': { type: 'string', multiple: true, default: [] },
    'ceiling-node-option': { type: 'string', multiple: true, default: [] },
    quick: { type: 'boolean', default: false },
    // Only the realtime measure (bench/realtime.mjs), not the comparison with the ceiling.
    'realtime-only': { type: 'boolean', default: false },
    // Only the search measure (bench/search.mjs).
    'search-only': { type: 'boolean', default: false },
    // Only the worst requests the limits accept (bench/search.mjs#measureWorstAccepted).
    'worst-only': { type: 'boolean', default: false },
    // Only the expand scenario (bench/expand.mjs).
    'expand-only': { type: 'boolean', default: false },
    // Only the many-filters measure (bench/realtime.mjs#measureRealtimeFilters).
    'filters-only': { type: 'boolean', default: false },
    // Only the relation-path scenario (bench/relations.mjs).
    'relations-only': { type: 'boolean', default: false },
    // Only the items scenario set (bench/items.mjs).
    'items-only': { type: 'boolean', default: false },
    // The items set on SQLite with every process where the scheduler puts it (bench/items.mjs#pinApart;
    // PostgreSQL's runs always are).
    unpinned: { type: 'boolean', default: false },
    segments: { type: 'boolean', default: false }
  }
})

function positive (name, fallback) {
  const value = Number(flags[name] ?? fallback)
  if (!(value > 0)) throw new Error(`--${name} must be a positive number, got ${flags[name]}`)
  return value
}

if (flags.dialect !== 'sqlite' && flags.dialect !== 'postgres') throw new Error(`--dialect must be sqlite or postgres, got ${flags.dialect}`)
const quick = flags.quick
const options = {
  dialect: flags.dialect,
  duration: positive('duration', quick ? 1 : 10),
  warmup: positive('warmup', quick ? 1 : 2),
  rounds: Math.round(positive('rounds', quick ? 1 : 2)),
  connections: Math.round(positive('connections', 16)),
  requests: flags.requests === undefined ? undefined : Math.round(positive('requests')),
  mixed: positive('mixed', quick ? 5 : MIXED_SECONDS),
  only: flags.only?.split(',').map((name) => name.trim()).filter((name) => name !== ''),
  fastbaseNodeOptions: [...startNodeFlags(), ...flags['fastbase-node-option']]
}
// Pairs of fresh processes the items set measures (--pairs, items set only).
const itemPairs = Math.round(positive('pairs', 1))

// ------------------------------------------------------------------ database and servers

/** A fresh database: a file in `work`, or a new schema, with what removes it. */
function freshDatabase (work, name = 'bench') {
  if (options.dialect === 'sqlite') return { url: `sqlite:${join(work, `${name}.sqlite`)}`, drop: async () => {} }
  const base = process.env.FASTBASE_BENCH_PG_URL || DEFAULT_PG_URL
  const schema = `fastbase_bench_${randomBytes(4).toString('hex')}`
  const url = new URL(base)
  url.searchParams.set('schema', schema)
  return {
    url: url.toString(),
    async drop () {
      const client = new pg.Client({ connectionString: base })
      await client.connect()
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await client.end()
      }
    }
  }
}

/** Forks a server (see child.mjs) and waits until it listens. */
async function startServer (name, file, serverOptions) {
  const execArgv = file === 'fastbase-server.mjs' ? [...process.execArgv, ...options.fastbaseNodeOptions] : process.execArgv
  const child = fork(join(here, file), [JSON.stringify(serverOptions)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv })
  const ready = await new Promise((resolve, reject) => {
    const early = (code) => reject(new Error(`${name} server exited (code ${code}) before it was ready`))
    child.once('exit', early)
    child.once('message', (message) => {
      child.off('exit', early)
      resolve(message)
    })
  })
  let stopping = false
  let nextId = 0
  const waiting = new Map()
  child.on('message', (message) => {
    if (message.type !== 'usage') return
    waiting.get(message.id)?.(message.usage)
    waiting.delete(message.id)
  })
  return {
    name,
    url: `http://127.0.0.1:${ready.port}`,
    startupMs: ready.startupMs,
    idleRss: ready.rss,
    alive: () => child.exitCode === null && child.signalCode === null,
    /** The server's memory and CPU time so far (bench/child.mjs#usage). */
    usage: () => new Promise((resolve) => {
      // A dead server has nothing to report (load() then says it died).
      if (!child.connected) return resolve({ rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, cpuMicros: 0, gcMicros: 0 })
      const id = nextId++
      waiting.set(id, resolve)
      child.send({ type: 'usage', id })
    }),
    stop () {
      if (stopping || !this.alive()) return Promise.resolve()
      stopping = true
      return new Promise((resolve) => {
        // A server stuck closing must not hang the run.
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
        child.once('exit', () => { clearTimeout(kill); resolve() })
        child.disconnect()
      })
    }
  }
}

// ------------------------------------------------------------------ scenarios

/**
 * `requestAt(i)` is the i-th request of a run. Scenarios acting as a user go round the 100 users
 * (and their posts), so the session lookups and row writes are spread as real traffic spreads them;
 * both servers get the same sequence. Reads come first: the writes add rows and change views.
 */
function scenarios (fx) {
  const json = { 'content-type': 'application/json' }
  const bearer = (token) => ({ authorization: `Bearer ${token}` })
  const listPath = `/api/v1/table/posts/list?where=${encodeURIComponent('views > 100')}&order=-views&limit=20`
  const user = (i) => fx.users[i % fx.users.length]
  return [
    { name: 'list', requestAt: () => ({ method: 'GET', path: listPath }) },
    { name: 'list-auth', rotates: true, requestAt: (i) => ({ method: 'GET', path: listPath, headers: bearer(user(i).token) }) },
    { name: 'view', requestAt: () => ({ method: 'GET', path: `/api/v1/table/posts/view/${fx.publishedPostId}` }) },
    // The cost curve: the same select returning 1, 20, 200 and 1,000 rows.
    ...CURVE_LIMITS.map((n) => ({ name: `select-${n}`, requestAt: () => ({ method: 'GET', path: `/api/v1/table/posts/select?order=-views&limit=${n}` }) })),
    {
      name: 'insert',
      write: true,
      rotates: true,
      requestAt: (i) => ({
        method: 'POST',
        path: '/api/v1/table/posts/insert',
        headers: { ...json, ...bearer(user(i).token) },
        body: JSON.stringify({ values: { author_id: user(i).id, title: `Bench post ${i}`, views: 0, published: true, tags: ['bench', 'new'] }, returning: 'id' })
      })
    },
    {
      name: 'edit',
      write: true,
      rotates: true,
      requestAt: (i) => {
        const { token, postId } = fx.own[i % fx.own.length]
        return { method: 'POST', path: `/api/v1/table/posts/edit/${postId}`, headers: { ...json, ...bearer(token) }, body: JSON.stringify({ title: `Edited ${i}` }) }
      }
    },
    {
      name: 'action',
      write: true,
      rotates: true,
      requestAt: (i) => ({ method: 'POST', path: '/api/v1/action/bump_views', headers: json, body: JSON.stringify({ id: fx.postIds[i % fx.postIds.length] }) })
    }
  ]
}

async function send (server, request) {
  const res = await fetch(server.url + request.path, { method: request.method, headers: request.headers, body: request.body })
  return { status: res.status, body: await res.json() }
}

/** Types in place of values: two inserts return different ids, but the same shape. */
function shape (value) {
  if (Array.isArray(value)) return value.map(shape)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]))
  return value === null ? 'null' : typeof value
}

/**
 * Both servers must give the same answers before their speed is compared: deep-equal bodies for
 * reads (user 3's requests: that user's posts are all drafts, so the rule's author branch shows),
 * the same status and shape for writes, and the same 401 for a forged token.
 */
async function verify (servers, list) {
  const forged = { method: 'GET', path: list[0].requestAt(0).path, headers: { authorization: 'Bearer e30.e30.AAAA' } }
  const checks = [...list.map((s) => ({ name: s.name, request: s.requestAt(3), exact: s.write !== true })), { name: 'forged token', request: forged, exact: true }]
  for (const check of checks) {
    const [a, b] = await Promise.all(servers.map((server) => send(server, check.request)))
    const same = a.status === b.status && (check.exact ? isDeepStrictEqual(a.body, b.body) : isDeepStrictEqual(shape(a.body), shape(b.body)))
    const expected = check.name === 'forged token' ? 401 : 200
    if (!same || a.status !== expected) {
      throw new Error(`${check.name}: the servers disagree (expected status ${expected})\n` +
        `  fastbase ${a.status}: ${JSON.stringify(a.body)}\n  ceiling  ${b.status}: ${JSON.stringify(b.body)}`)
    }
  }
}

/**
 * One autocannon run of `seconds` (or, measured, of `--requests` requests when given); measured, the
 * server's peak resident set size while it ran and its CPU time per request.
 */
async function load (server, scenario, seconds, measured) {
  const target = scenario.rotates === true
    ? { url: server.url, requests: [{ setupRequest: ((i) => (req) => ({ ...req, ...scenario.requestAt(i++) }))(0) }] }
    : (({ path, ...request }) => ({ url: server.url + path, ...request }))(scenario.requestAt(0))
  let peakRss = 0
  const sampler = measured ? setInterval(() => server.usage().then(({ rss }) => { peakRss = Math.max(peakRss, rss) }), RSS_SAMPLE_MS) : undefined
  const length = measured && options.requests !== undefined ? { amount: options.requests } : { duration: seconds }
  const before = await server.usage()
  // Every response's time as autocannon measured it (process.hrtime, fractions of a millisecond):
  // its own percentiles are whole milliseconds, too coarse beside a ceiling answering in under one.
  const latencies = []
  let result
  try {
    const run = autocannon({ ...target, connections: options.connections, ...length })
    run.on('response', (_client, _status, _bytes, milliseconds) => { latencies.push(milliseconds) })
    result = await run
  } finally {
    clearInterval(sampler)
  }
  latencies.sort((a, b) => a - b)
  const after = await server.usage()
  if (!server.alive()) throw new Error(`the ${server.name} server died during ${scenario.name}`)
  return {
    reqPerSec: result.requests.average,
    // The IPC samples cost the server a little CPU too: ~4 per second, negligible beside thousands of requests.
    cpuMicrosPerRequest: result.requests.total === 0 ? 0 : (after.cpuMicros - before.cpuMicros) / result.requests.total,
    gcMicrosPerRequest: result.requests.total === 0 ? 0 : (after.gcMicros - before.gcMicros) / result.requests.total,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    peakRss
  }
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length
/** The value below which `share` of the sorted `values` lie (nearest rank); 0 for none. */
const percentile = (sorted, share) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function benchmark (servers, list) {
  const results = []
  for (const scenario of list) {
    const runs = Object.fromEntries(servers.map((s) => [s.name, []]))
    for (let round = 1; round <= options.rounds; round++) {
      for (const server of servers) {
        process.stdout.write(`  ${scenario.name}, round ${round}, ${server.name}... `)
        await load(server, scenario, options.warmup, false)
        const run = await load(server, scenario, options.duration, true)
        runs[server.name].push(run)
        console.log(`${Math.round(run.reqPerSec)} req/s, p99 ${run.p99.toFixed(2)} ms, ${run.cpuMicrosPerRequest.toFixed(0)} µs CPU/request (GC ${run.gcMicrosPerRequest.toFixed(1)})`)
      }
    }
    const summary = (name) => ({
      reqPerSec: mean(runs[name].map((r) => r.reqPerSec)),
      cpuMicrosPerRequest: mean(runs[name].map((r) => r.cpuMicrosPerRequest)),
      gcMicrosPerRequest: mean(runs[name].map((r) => r.gcMicrosPerRequest)),
      p99: mean(runs[name].map((r) => r.p99)),
      peakRss: Math.max(...runs[name].map((r) => r.peakRss)),
      rounds: runs[name]
    })
    const fastbase = summary('fastbase')
    const ceiling = summary('ceiling')
    results.push({
      scenario: scenario.name,
      fastbase,
      ceiling,
      ratio: { reqPerSec: fastbase.reqPerSec / ceiling.reqPerSec, p99: fastbase.p99 / ceiling.p99, cpu: fastbase.cpuMicrosPerRequest / ceiling.cpuMicrosPerRequest }
    })
  }
  return results
}

/**
 * The memory scenario: every scenario at once (each connection takes the next request of the next
 * scenario) for `--mixed` seconds, then the server's memory: resident set, V8 heap, and what lives
 * outside it (Buffers, better-sqlite3's and pg's native memory).
 */
async function mixedMemory (server, list) {
  const rotation = list.map((scenario) => ({ scenario, i: 0 }))
  let turn = 0
  const next = () => {
    const entry = rotation[turn++ % rotation.length]
    return entry.scenario.requestAt(entry.i++)
  }
  let peakRss = 0
  const sampler = setInterval(() => server.usage().then(({ rss }) => { peakRss = Math.max(peakRss, rss) }), RSS_SAMPLE_MS)
  let result
  try {
    result = await autocannon({ url: server.url, connections: options.connections, duration: options.mixed, requests: [{ setupRequest: (req) => ({ ...req, headers: {}, body: undefined, ...next() }) }] })
  } finally {
    clearInterval(sampler)
  }
  if (!server.alive()) throw new Error(`the ${server.name} server died during the memory scenario`)
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = await server.usage()
  return { seconds: options.mixed, requests: result.requests.total, non2xx: result.non2xx, errors: result.errors, peakRss, rss, heapUsed, heapTotal, external, arrayBuffers }
}

/** register + ready of a 100-table project on a fresh SQLite file, each time in a new process. */
async function measureStartup (work) {
  const samples = []
  for (let i = 0; i < STARTUP_RUNS; i++) {
    const dir = join(work, `startup-${i}`)
    const server = await startServer('fastbase (100 tables)', 'fastbase-server.mjs', { project: 'many-tables', databaseUrl: `sqlite:${join(dir, 'db.sqlite')}`, dataDir: dir })
    samples.push(server.startupMs)
    await server.stop()
  }
  return { medianMs: median(samples), samplesMs: samples }
}

/** 1,000 distinct filters on one table under 50 writes/s: typical filters, then the longest a caller may send. */
async function realtimeFilters (url, fx) {
  const seconds = Math.max(options.duration, 5)
  return {
    typical: await measureRealtimeFilters(url, fx, { seconds, terms: 2 }),
    longest: await measureRealtimeFilters(url, fx, { seconds, terms: 40 })
  }
}

// ------------------------------------------------------------------ report

function table (rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n')
}

function report (results, memory, startup, problems) {
  const mib = (bytes) => `${(bytes / MiB).toFixed(0)} MiB`
  const rows = [['scenario', 'fastbase req/s', 'ceiling req/s', 'req/s ratio', 'fastbase CPU/req', 'ceiling CPU/req', 'CPU ratio', 'GC/req (fastbase / ceiling)', 'fastbase p99', 'ceiling p99', 'p99 ratio', 'fastbase peak RSS']]
  for (const r of results) {
    rows.push([
      r.scenario,
      r.fastbase.reqPerSec.toFixed(0),
      r.ceiling.reqPerSec.toFixed(0),
      r.ratio.reqPerSec.toFixed(2),
      `${r.fastbase.cpuMicrosPerRequest.toFixed(0)} µs`,
      `${r.ceiling.cpuMicrosPerRequest.toFixed(0)} µs`,
      r.ratio.cpu.toFixed(2),
      `${r.fastbase.gcMicrosPerRequest.toFixed(1)} / ${r.ceiling.gcMicrosPerRequest.toFixed(1)} µs`,
      `${r.fastbase.p99.toFixed(2)} ms`,
      `${r.ceiling.p99.toFixed(2)} ms`,
      r.ratio.p99.toFixed(2),
      mib(r.fastbase.peakRss)
    ])
  }
  console.log(`\nfastbase vs ceiling on ${options.dialect}: ${options.connections} connections, ${options.rounds} × ${options.requests === undefined ? `${options.duration} s` : `${options.requests} requests`} per server ` +
    `after ${options.warmup} s warm-up; ratios are fastbase / ceiling (req/s: higher is better, p99: lower is better)\n`)
  console.log(table(rows))
  console.log(`\nResident memory: fastbase ${mib(memory.fastbase.idle)} idle, ${mib(memory.fastbase.peak)} peak under load` +
    ` (ceiling ${mib(memory.ceiling.idle)} idle, ${mib(memory.ceiling.peak)} peak)`)
  for (const name of ['fastbase', 'ceiling']) {
    const m = memory[name].mixed
    console.log(`After ${m.seconds} s of mixed load (${m.requests} requests), ${name}: RSS ${mib(m.rss)} (peak ${mib(m.peakRss)}), heap ${mib(m.heapUsed)} used of ${mib(m.heapTotal)}, external ${mib(m.external)} (array buffers ${mib(m.arrayBuffers)})`)
  }
  if (startup !== undefined) {
    console.log(`Start-up, 100-table config (register + ready on a fresh SQLite file): median ${startup.medianMs.toFixed(0)} ms` +
      ` of ${startup.samplesMs.map((ms) => ms.toFixed(0)).join(', ')}`)
  }
  for (const problem of problems) console.log(`${quick ? 'warning' : 'FAILED'}: ${problem}`)
}

// ------------------------------------------------------------------ main

/** The expand scenario on a database of its own (its table is not the bench project's). */
async function expandScenario () {
  const own = freshDatabase(work, 'expand')
  try {
    const result = await measureExpand(own.url, join(work, 'expand'), { samples: quick ? 10 : 100 })
    console.log(expandReport(options.dialect, result))
    return result
  } finally {
    await own.drop()
  }
}

/** The relation-path scenario on a database of its own. */
async function relationsScenario () {
  const own = freshDatabase(work, 'relations')
  try {
    const result = await measureRelations(own.url, join(work, 'relations'), quick ? { samples: 10, warmup: 2 } : {})
    console.log(relationsReport(options.dialect, result))
    return result
  } finally {
    await own.drop()
  }
}

/**
 * The items scenario set (decision D111) on a database of its own, fastbase started as `npm start`
 * starts it; with --pairs N, N times, each pair of processes fresh on a fresh database, and the
 * median and range of each figure (the heap check once, with the first pair: it is the build's).
 */
async function itemsScenario () {
  const runs = []
  for (let pair = 0; pair < itemPairs; pair++) {
    const own = freshDatabase(work, itemPairs === 1 ? 'items' : `items_${pair}`)
    try {
      const result = await measureItems({
        databaseUrl: own.url,
        adminUrl: options.dialect === 'postgres' ? (process.env.FASTBASE_BENCH_PG_URL || DEFAULT_PG_URL) : undefined,
        work: join(work, itemPairs === 1 ? 'items' : `items-${pair}`),
        connections: options.connections,
        seconds: options.duration,
        warmup: options.warmup,
        heapSeconds: quick ? 2 : Math.max(options.duration, 5),
        heap: pair === 0,
        // `--only view,list` narrows the set too (items-view or view); extra Node flags profile fastbase.
        only: options.only,
        pin: !flags.unpinned && options.dialect === 'sqlite',
        segments: flags.segments,
        extraFlags: flags['fastbase-node-option'],
        ceilingFlags: flags['ceiling-node-option']
      })
      console.log(itemsReport(options.dialect, result))
      runs.push(result)
    } finally {
      await own.drop()
    }
  }
  if (itemPairs === 1) return runs[0]
  const summary = pairsSummary(runs)
  console.log(pairsReport(options.dialect, summary))
  return { pairs: runs, summary, problems: runs.flatMap((run) => run.problems) }
}

const work = mkdtempSync(join(tmpdir(), 'fastbase-bench-'))
if (flags['items-only']) {
  try {
    const items = await itemsScenario()
    if (!quick) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}-items.json`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), options, machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }, items }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
      if (items.problems.length > 0) process.exitCode = 1
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  process.exit()
}
if (flags['relations-only']) {
  try {
    const relations = await relationsScenario()
    if (!quick) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}-relations.json`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }, relations }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  process.exit()
}
if (flags['expand-only']) {
  try {
    const expand = await expandScenario()
    if (!quick) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}-expand.json`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }, expand }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  process.exit()
}
const database = freshDatabase(work)
const servers = []
/** The search measure on its own table and server (seeding 100,000 rows takes a while). */
async function search ({ searches = true, worst = true } = {}) {
  console.log(`Seeding the search table on ${options.dialect}...`)
  await seedSearch(database.url, join(work, 'search-seed'))
  const server = await startServer('fastbase-search', 'fastbase-server.mjs', { project: 'search', databaseUrl: database.url, dataDir: join(work, 'search') })
  servers.push(server)
  const measure = { runs: quick ? 10 : SEARCH_RUNS, seconds: options.duration }
  const result = searches ? await measureSearch(server.url, measure) : {}
  // The worst requests the limits accept (decision D85), on the same table and server.
  if (worst) result.worstAccepted = await measureWorstAccepted(server.url, measure)
  await server.stop()
  if (searches) reportSearch(result)
  if (worst) reportWorstAccepted(result.worstAccepted)
  return result
}
if (flags['search-only'] || flags['worst-only']) {
  try {
    const result = await search({ searches: flags['search-only'], worst: true })
    if (!quick) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}-${flags['search-only'] ? 'search' : 'worst'}.json`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), options, machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }, search: result }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    await database.drop()
    rmSync(work, { recursive: true, force: true })
  }
} else try {
  console.log(`Seeding ${USER_COUNT} users and ${POST_COUNT} posts on ${options.dialect}...`)
  const fx = await seed(database.url, join(work, 'seed'))
  servers.push(await startServer('fastbase', 'fastbase-server.mjs', { project: 'bench', databaseUrl: database.url, dataDir: join(work, 'fastbase') }))
  servers.push(await startServer('ceiling', 'ceiling.mjs', { databaseUrl: database.url, jwtKey: USERS_JWT_KEY }))
  if (flags['realtime-only'] || flags['filters-only']) {
    const realtime = flags['filters-only'] ? {} : await measureRealtime(servers[0].url, fx, { seconds: options.duration, connections: options.connections })
    realtime.filters = await realtimeFilters(servers[0].url, fx)
    if (!quick) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}-realtime.json`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), options, machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }, realtime }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
    }
  } else {
    const every = scenarios(fx)
    const unknown = (options.only ?? []).filter((name) => !every.some((s) => s.name === name))
    if (unknown.length > 0) throw new Error(`--only: no scenario named ${unknown.join(', ')} (there are ${every.map((s) => s.name).join(', ')})`)
    const list = options.only === undefined ? every : every.filter((s) => options.only.includes(s.name))
    await verify(servers, list)
    console.log('Both servers answer every scenario alike. Measuring:')
    const results = await benchmark(servers, list)
    const memory = {}
    for (const s of servers) {
      process.stdout.write(`  memory scenario, ${s.name}: ${options.mixed} s of mixed load... `)
      const mixed = await mixedMemory(s, list)
      console.log(`RSS ${(mixed.rss / MiB).toFixed(0)} MiB`)
      memory[s.name] = { idle: s.idleRss, peak: Math.max(mixed.peakRss, ...results.map((r) => r[s.name].peakRss)), mixed }
    }
    // Realtime (decisions D47, D48): writes with 0 and 1,000 subscribers, and the fan-out to them.
    const realtime = options.only === undefined ? await measureRealtime(servers[0].url, fx, { seconds: options.duration, connections: options.connections }) : undefined
    if (realtime !== undefined) realtime.filters = await realtimeFilters(servers[0].url, fx)
    await Promise.all(servers.map((s) => s.stop()))
    // Search (decision D41): 100,000 texts, every kind of search, /health under the slowest.
    const searchCost = options.only === undefined ? await search() : undefined
    const startup = options.only === undefined ? await measureStartup(work) : undefined
    const expand = options.only === undefined ? await expandScenario() : undefined
    const relations = options.only === undefined ? await relationsScenario() : undefined
    const items = options.only === undefined ? await itemsScenario() : undefined

    const problems = [
      ...results.flatMap((r) => ['fastbase', 'ceiling'].flatMap((name) => r[name].rounds.flatMap((run, i) =>
        run.non2xx + run.errors + run.timeouts === 0 ? [] : [`${r.scenario}, ${name}, round ${i + 1}: ${run.non2xx} non-2xx answers, ${run.errors} errors, ${run.timeouts} timeouts`]))),
      ...Object.entries(memory).flatMap(([name, { mixed }]) => mixed.non2xx + mixed.errors === 0 ? [] : [`memory scenario, ${name}: ${mixed.non2xx} non-2xx answers, ${mixed.errors} errors`]),
      ...(items?.problems ?? [])
    ]
    report(results, memory, startup, problems)
    // A partial run (--only) is for comparing two builds by hand; it does not replace the day's results.
    if (!quick && options.only === undefined) {
      const file = join(here, 'results', `${new Date().toISOString().slice(0, 10)}-${options.dialect}.json`)
      mkdirSync(dirname(file), { recursive: true })
      const machine = { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model }
      writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), options, machine, data: { users: USER_COUNT, posts: POST_COUNT }, results, memory, startup, realtime, search: searchCost, expand, relations, items, problems }, null, 2) + '\n')
      console.log(`Results written to ${relative(process.cwd(), file)}`)
      if (problems.length > 0) process.exitCode = 1
    }
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()))
  await database.drop()
  rmSync(work, { recursive: true, force: true })
}
