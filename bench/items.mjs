// The items scenario set (decision D111): the most common public read and write of a small project, the
// way an outside harness measures it. One table `items` in teenybase shape, every rule 'true',
// anonymous callers, 10,000 small rows seeded through the API; fastbase started exactly as
// `npm start` starts it (package.json's start script, NODE_ENV=production, the config in the working
// directory, nothing else set); the ceiling (bench/items-ceiling.mjs) the same routes by hand on bare
// Fastify with prepared statements. Answers are compared byte for byte first, then the two servers
// take turns in short slices (0.5 s each, A B A B), so load from other jobs hits both alike.
//
// Per scenario it reports req/s, p99 over every response, and CPU time per request: of each server's
// Node process (every thread's time on a CPU, from /proc/<pid>/task/*/schedstat, nanoseconds: the
// figure process.cpuUsage() gives inside it, read from outside since `npm start` has no channel to
// ask) and, on PostgreSQL, of the database backends serving that server's connections (found through
// the server's sockets and pg_stat_activity.client_port). Then a steady-load check that the heap
// after each scavenge stays level (nothing a request allocates outlives it), read from --trace-gc.
import { execFileSync, spawn, fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { freePort } from './free-port.mjs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import pg from 'pg'
import { itemsConfig } from './project.mjs'
import segmentsFile from './segments-file.cjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
export const ITEM_COUNT = 10_000
const SEED_BATCH = 500
const EDITED_ID = 5000
const SLICE_SECONDS = 0.5
const HEALTHY_WITHIN_MS = 60_000
/** Bytes per request the heap may keep over the run before the check fails: D84's leak kept ~600. */
const RETAINED_BYTES_LIMIT = 256
/** Fewer scavenges than this in the heap check's run say nothing about a trend. */
const MIN_SCAVENGES = 10
const PREFIX = '/api/v1/table/items'
const json = { 'content-type': 'application/json' }

/** The scenarios, in the order they run: reads first (writes change what they answer). `--only` names them with or without `items-`. */
export function itemScenarios () {
  const insertBody = JSON.stringify({ values: { title: 'A new item', body: 'Inserted by the bench.', n: 7, created: '2026-01-01 00:00:00' }, returning: '*' })
  return [
    // select 20 rows, list 20 rows + total, view by id, insert one row returning *, edit one row by id.
    { name: 'items-select', request: { method: 'GET', path: `${PREFIX}/select?limit=20&order=-id` } },
    { name: 'items-list', request: { method: 'GET', path: `${PREFIX}/list?limit=20&order=-id` } },
    { name: 'items-view', request: { method: 'GET', path: `${PREFIX}/view/${EDITED_ID}` } },
    { name: 'items-insert', write: true, request: { method: 'POST', path: `${PREFIX}/insert`, headers: json, body: insertBody } },
    { name: 'items-edit', write: true, request: { method: 'POST', path: `${PREFIX}/edit/${EDITED_ID}`, headers: json, body: JSON.stringify({ n: 0 }) } }
  ]
}

// ------------------------------------------------------------------ servers

/** package.json's start script as words: `node <flags> scripts/start.mjs <arguments>`. */
function startCommand () {
  const start = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start
  const words = start.trim().split(/\s+/)
  if (words[0] !== 'node' || !words.includes('scripts/start.mjs')) throw new Error(`bench: cannot read package.json's start script: ${start}`)
  return words.slice(1)
}

/**
 * fastbase as `npm start` runs it, in a folder of its own holding the config (fastbase.config.json)
 * and links to the built package: the start script's command and flags, NODE_ENV=production, the
 * database as DATABASE_URL, the port as PORT. `extraFlags` are more Node flags (the heap check's).
 */
export async function startFastbase (dir, databaseUrl, { extraFlags = [], onStdout } = {}) {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'fastbase.config.json'), JSON.stringify(itemsConfig(), null, 2))
  for (const name of ['package.json', 'dist', 'node_modules', 'scripts']) symlinkSync(join(root, name), join(dir, name))
  const port = await freePort()
  const [nodeFlags, rest] = ((words) => { const i = words.indexOf('scripts/start.mjs'); return [words.slice(0, i), words.slice(i)] })(startCommand())
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', PORT: String(port), FASTIFY_ADDRESS: '127.0.0.1', DATABASE_URL: databaseUrl }
  const child = spawn(process.execPath, [...nodeFlags, ...extraFlags, ...rest], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { if (onStdout !== undefined) onStdout(d.toString()); else if (output.length < 100_000) output += d })
  child.stderr.on('data', (d) => { if (output.length < 100_000) output += d })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + HEALTHY_WITHIN_MS
  for (;;) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`fastbase (npm start) did not become healthy:\n${output}`)
    }
    try { if ((await fetch(`${url}/api/v1/health`)).ok) break } catch {}
    await sleep(50)
  }
  return {
    name: 'fastbase',
    url,
    pid: child.pid,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null) return
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000)
      child.kill('SIGTERM')
      await once(child, 'exit')
      clearTimeout(kill)
    }
  }
}

/** The ceiling in a forked process (bench/child.mjs's channel), with Node's default flags and `nodeFlags` (a profile's). */
async function startCeiling (databaseUrl, nodeFlags = []) {
  const child = fork(join(here, 'items-ceiling.mjs'), [JSON.stringify({ databaseUrl })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: nodeFlags })
  const ready = await new Promise((resolve, reject) => {
    const early = (code) => reject(new Error(`the items ceiling exited (code ${code}) before it was ready`))
    child.once('exit', early)
    child.once('message', (message) => { child.off('exit', early); resolve(message) })
  })
  return {
    name: 'ceiling',
    url: `http://127.0.0.1:${ready.port}`,
    pid: child.pid,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null) return
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.disconnect()
      await once(child, 'exit')
      clearTimeout(kill)
    }
  }
}

// ------------------------------------------------------------------ where each process runs

/**
 * Both servers on one CPU and the load (this process, autocannon's connections) on another, where
 * Linux has `taskset` and two CPUs (decision D145). Left to the scheduler, a server that lands on the
 * load's CPU serves fewer requests per turn of its event loop and costs up to half again as much CPU
 * per request, for the life of the process: two starts of one build measured 40 and 63 µs per view.
 * Pinned, each server has a CPU to itself for its slices, as on a machine that serves. Only on SQLite
 * (bench/run.mjs): PostgreSQL's backends run on both CPUs whatever is pinned, and a server confined
 * to one of them waits for it behind them. Returns how the run was placed, for the report; `false`
 * when unpinned (asked for, or not possible here).
 */
export function pinApart (serverPids, pin) {
  if (!pin || cpus().length < 2) return false
  try {
    for (const pid of serverPids) execFileSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' })
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
    return 'servers on CPU 0, the load on CPU 1'
  } catch {
    return false
  }
}

/**
 * Lets this process run on every CPU again once the servers are measured: the machine's CPUs, not
 * availableParallelism(), which counts only those this process may run on, one while it is pinned
 * (so the next pair of a --pairs run, and what a full run measures after the set, ran on one CPU).
 */
export function unpin (placed) {
  if (placed === false) return
  execFileSync('taskset', ['-a', '-p', '-c', `0-${cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' })
}

// ------------------------------------------------------------------ CPU time from /proc

/** Nanoseconds every live thread of `pid` has run on a CPU (the first field of schedstat). */
function cpuNanos (pid) {
  let total = 0
  let tasks
  try { tasks = readdirSync(`/proc/${pid}/task`) } catch { return 0 }
  for (const task of tasks) {
    try { total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) } catch {}
  }
  return total
}

/** Local ports of `pid`'s TCP connections to port `remotePort` (from its socket inodes and /proc/net/tcp*). */
function connectedPorts (pid, remotePort) {
  const inodes = new Set()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`)
      if (link.startsWith('socket:[')) inodes.add(link.slice(8, -1))
    } catch {}
  }
  const ports = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = ''
    try { text = readFileSync(table, 'utf8') } catch { continue }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 10 || !inodes.has(cols[9])) continue
      if (parseInt(cols[2].split(':')[1], 16) === remotePort) ports.push(parseInt(cols[1].split(':')[1], 16))
    }
  }
  return ports
}

/** What measures the PostgreSQL backends serving a server: their pids, found again before each slice. */
function backendMeter (adminUrl) {
  if (adminUrl === undefined) return undefined
  const client = new pg.Client({ connectionString: adminUrl })
  const connected = client.connect()
  const port = Number(new URL(adminUrl).port || 5432)
  return {
    async pidsOf (server) {
      await connected
      const ports = connectedPorts(server.pid, port)
      if (ports.length === 0) return []
      const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [ports])
      return rows.map((r) => r.pid)
    },
    cpu: (pids) => pids.reduce((sum, pid) => sum + cpuNanos(pid), 0),
    close: async () => { await connected; await client.end() }
  }
}

// ------------------------------------------------------------------ seeding and checking

/** 10,000 rows through fastbase's own insert route, as an anonymous caller (createRule 'true'). */
export async function seedItems (url) {
  for (let i = 0; i < ITEM_COUNT; i += SEED_BATCH) {
    const values = Array.from({ length: Math.min(SEED_BATCH, ITEM_COUNT - i) }, (_, j) => ({ title: `Item ${i + j + 1}`, body: `The body of item ${i + j + 1}: a short text.`, n: i + j + 1 }))
    const res = await fetch(`${url}${PREFIX}/insert`, { method: 'POST', headers: json, body: JSON.stringify({ values, returning: 'id' }) })
    if (res.status !== 200) throw new Error(`seeding items: ${res.status} ${await res.text()}`)
  }
}

async function send (server, request) {
  const res = await fetch(server.url + request.path, { method: request.method, headers: request.headers, body: request.body })
  return { status: res.status, body: await res.text() }
}

/** Byte-equal answers: reads as they are, an insert's with its new id masked (each server's row has its own). */
async function verify (servers, list) {
  for (const scenario of list) {
    const [a, b] = await Promise.all(servers.map((server) => send(server, scenario.request)))
    const comparable = (text) => scenario.name === 'items-insert' ? text.replace(/"id":\d+/g, '"id":0') : text
    if (a.status !== 200 || b.status !== 200 || comparable(a.body) !== comparable(b.body)) {
      throw new Error(`${scenario.name}: the servers answer differently\n  fastbase ${a.status}: ${a.body.slice(0, 600)}\n  ceiling  ${b.status}: ${b.body.slice(0, 600)}`)
    }
  }
}

// ------------------------------------------------------------------ measuring

async function slice (server, scenario, seconds, connections, backends) {
  const { path, ...request } = scenario.request
  const pids = backends === undefined ? [] : await backends.pidsOf(server)
  const latencies = []
  const cpuBefore = cpuNanos(server.pid)
  const dbBefore = backends?.cpu(pids) ?? 0
  const run = autocannon({ url: server.url + path, ...request, connections, duration: seconds })
  run.on('response', (_client, _status, _bytes, ms) => { latencies.push(ms) })
  const result = await run
  const cpu = cpuNanos(server.pid) - cpuBefore
  const db = (backends?.cpu(pids) ?? 0) - dbBefore
  if (!server.alive()) throw new Error(`the ${server.name} server died during ${scenario.name}`)
  return { requests: result.requests.total, seconds: result.duration, latencies, cpuNanos: cpu, dbNanos: db, failures: result.non2xx + result.errors + result.timeouts }
}

const percentile = (sorted, share) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]

function summary (slices) {
  const requests = slices.reduce((n, s) => n + s.requests, 0)
  const seconds = slices.reduce((n, s) => n + s.seconds, 0)
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b)
  const per = (field) => requests === 0 ? 0 : slices.reduce((n, s) => n + s[field], 0) / requests / 1000
  return {
    requests,
    reqPerSec: requests / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMicrosPerRequest: per('cpuNanos'),
    dbMicrosPerRequest: per('dbNanos'),
    failures: slices.reduce((n, s) => n + s.failures, 0)
  }
}

/**
 * The heap after each collection under steady load: `--trace-gc` lines of a fastbase started for
 * this alone. Level means the heap after the last collection of the run is where it was after the
 * first (per request, close to 0): what requests leave behind for good. Promoted is what the heap
 * grew by between two scavenges with no full collection between them, what the young generation
 * promoted: objects alive across a scavenge (a request waiting on the database), which a full
 * collection frees when they were garbage. It grows with the time requests take (a loaded machine,
 * PostgreSQL's round trips), so it is reported, and the check reads the level.
 */
async function heapLevel (dir, databaseUrl, scenario, seconds, connections) {
  const lines = []
  let pending = ''
  const server = await startFastbase(dir, databaseUrl, {
    extraFlags: ['--trace-gc'],
    onStdout: (text) => {
      pending += text
      const parts = pending.split('\n')
      pending = parts.pop()
      lines.push(...parts.filter((l) => l.includes('Scavenge') || l.includes('Mark-Compact')))
    }
  })
  try {
    const { path, ...request } = scenario.request
    await autocannon({ url: server.url + path, ...request, connections, duration: 2 })
    const from = lines.length
    const result = await autocannon({ url: server.url + path, ...request, connections, duration: seconds })
    const events = lines.slice(from).map((line) => {
      const m = /(Scavenge|Mark-Compact)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/.exec(line)
      return m === null ? undefined : { kind: m[1], after: Number(m[4]) * 1024 * 1024 }
    }).filter((e) => e !== undefined)
    return { scenario: scenario.name, requests: result.requests.total, ...heapLevelOf(events, result.requests.total) }
  } finally {
    await server.stop()
  }
}

/**
 * The heap's level over a run, from its collections (`{ kind: 'Scavenge' | 'Mark-Compact', after:
 * bytes }`, in order): what it kept per request, between the first collection and the last of the
 * same kind. Full collections, where the run had two or more, since only they leave nothing but live
 * objects: between them, scavenges promote what requests in flight hold (PostgreSQL's requests wait
 * across several), which the next full collection frees, so a level read after the last scavenge
 * swings by up to the old generation's growth allowance either way. Else the scavenges' (SQLite's
 * runs usually have no full collection).
 */
export function heapLevelOf (events, requests) {
  let grown = 0
  let scavenges = 0
  let fullCollections = 0
  for (let i = 1; i < events.length; i++) {
    if (events[i].kind !== 'Scavenge') { fullCollections++; continue }
    scavenges++
    if (events[i - 1].kind === 'Scavenge') grown += events[i].after - events[i - 1].after
  }
  const full = events.filter((e) => e.kind !== 'Scavenge')
  const afters = (full.length >= 2 ? full : events).map((e) => e.after)
  const perRequest = (bytes) => requests === 0 ? 0 : bytes / requests
  return {
    scavenges,
    fullCollections,
    levelFrom: full.length >= 2 ? 'full collections' : 'collections',
    firstAfterMiB: (afters[0] ?? 0) / 1024 / 1024,
    lastAfterMiB: (afters.at(-1) ?? 0) / 1024 / 1024,
    retainedBytesPerRequest: perRequest((afters.at(-1) ?? 0) - (afters[0] ?? 0)),
    promotedBytesPerRequest: perRequest(grown)
  }
}

/**
 * The whole set on `databaseUrl` (a fresh database), in `work`. `adminUrl`: a PostgreSQL URL to ask
 * pg_stat_activity through (PostgreSQL only). Returns the results and the problems seen.
 */
export async function measureItems ({ databaseUrl, adminUrl, work, connections, seconds, warmup, heapSeconds, only, pin = true, segments = false, heap: checkHeap = true, extraFlags = [], ceilingFlags = [], log = console.log }) {
  const load = () => loadavg().map((n) => n.toFixed(2)).join(' ')
  const timers = segments ? ['-r', SEGMENT_TIMERS] : []
  const fastbase = await startFastbase(join(work, 'items-fastbase'), databaseUrl, { extraFlags: [...extraFlags, ...timers] })
  let ceiling
  const backends = backendMeter(adminUrl)
  const loadBefore = load()
  let placed = false
  let placement = 'unpinned'
  try {
    log(`Seeding ${ITEM_COUNT} items through the API...`)
    await seedItems(fastbase.url)
    ceiling = await startCeiling(databaseUrl, [...ceilingFlags, ...timers])
    const servers = [fastbase, ceiling]
    const list = itemScenarios().filter((s) => only === undefined || only.some((name) => s.name === name || s.name === `items-${name}`))
    await verify(servers, list)
    placed = pinApart([fastbase.pid, ceiling.pid], pin)
    placement = placed || 'unpinned'
    log(`Both servers answer every items scenario with the same bytes. Measuring (${placement}):`)
    const slices = Math.max(1, Math.round(seconds / SLICE_SECONDS))
    const results = []
    for (const scenario of list) {
      const runs = { fastbase: [], ceiling: [] }
      for (const server of servers) await slice(server, scenario, warmup, connections, undefined)
      const timedBefore = segments ? await Promise.all(servers.map(segmentTotals)) : undefined
      for (let i = 0; i < slices; i++) {
        for (const server of servers) runs[server.name].push(await slice(server, scenario, SLICE_SECONDS, connections, backends))
      }
      const f = summary(runs.fastbase)
      const c = summary(runs.ceiling)
      const result = { scenario: scenario.name, fastbase: f, ceiling: c, ratio: { reqPerSec: f.reqPerSec / c.reqPerSec, p99: f.p99 / c.p99, cpu: f.cpuMicrosPerRequest / c.cpuMicrosPerRequest }, loadAverage: load() }
      if (timedBefore !== undefined) {
        const timedAfter = await Promise.all(servers.map(segmentTotals))
        result.segments = { fastbase: segmentsPerRequest(timedBefore[0], timedAfter[0]), ceiling: segmentsPerRequest(timedBefore[1], timedAfter[1]) }
      }
      results.push(result)
      log(`  ${scenario.name}: ratio ${result.ratio.reqPerSec.toFixed(2)}, p99 ratio ${result.ratio.p99.toFixed(2)}, CPU/request ${f.cpuMicrosPerRequest.toFixed(0)} / ${c.cpuMicrosPerRequest.toFixed(0)} µs` +
        (backends === undefined ? '' : `, database ${f.dbMicrosPerRequest.toFixed(0)} / ${c.dbMicrosPerRequest.toFixed(0)} µs`) + ` (load ${result.loadAverage})`)
    }
    await fastbase.stop()
    await ceiling.stop()
    unpin(placed)
    placed = false
    const heap = []
    for (const scenario of checkHeap ? list.filter((s) => s.write !== true) : []) {
      const h = await heapLevel(join(work, `items-heap-${heap.length}`), databaseUrl, scenario, heapSeconds, connections)
      heap.push(h)
      log(`  heap under steady load, ${scenario.name}: ${h.retainedBytesPerRequest.toFixed(1)} bytes left per request over ${h.requests} requests (after ${h.levelFrom}: ${h.firstAfterMiB.toFixed(1)} -> ${h.lastAfterMiB.toFixed(1)} MiB; ${h.scavenges} scavenges promoting ${h.promotedBytesPerRequest.toFixed(1)} bytes per request, ${h.fullCollections} full collections)`)
    }
    const problems = [
      ...results.flatMap((r) => ['fastbase', 'ceiling'].flatMap((name) => r[name].failures === 0 ? [] : [`${r.scenario}, ${name}: ${r[name].failures} failed requests`])),
      ...heap.flatMap((h) => h.scavenges < MIN_SCAVENGES
        ? [`${h.scenario}: ${h.scavenges} scavenges are too few to judge the heap (at least ${MIN_SCAVENGES}: a less loaded machine, or a longer --duration)`]
        : h.retainedBytesPerRequest <= RETAINED_BYTES_LIMIT ? [] : [`${h.scenario}: the heap grew by ${h.retainedBytesPerRequest.toFixed(0)} bytes per request over the run (limit ${RETAINED_BYTES_LIMIT})`])
    ]
    return { connections, sliceSeconds: SLICE_SECONDS, slices, placement, loadAverage: { before: loadBefore, after: load() }, results, heap, problems }
  } finally {
    unpin(placed)
    await fastbase.stop()
    await ceiling?.stop()
    await backends?.close()
    for (const server of [fastbase, ceiling]) if (segments && server !== undefined) rmSync(segmentsFile.segmentsFile(server.pid), { force: true })
  }
}

// ------------------------------------------------------------------ timed segments (--segments)

const SEGMENT_TIMERS = join(here, 'segments.cjs')
const SEGMENT_NAMES = ['head', 'body', 'write', 'finish']

/** A server's segment totals so far (bench/segments.cjs writes them when signalled). */
async function segmentTotals (server) {
  const file = segmentsFile.segmentsFile(server.pid)
  const read = () => { try { return JSON.parse(readFileSync(file, 'utf8')) } catch { return undefined } }
  const seen = read()?.seq ?? 0
  process.kill(server.pid, 'SIGWINCH')
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(10)) {
    const totals = read()
    if (totals !== undefined && totals.seq > seen) return totals
  }
  throw new Error(`the ${server.name} server did not report its segment times (bench/segments.cjs)`)
}

/** µs per request in each segment between two reports. */
function segmentsPerRequest (before, after) {
  const requests = after.requests - before.requests
  return Object.fromEntries(SEGMENT_NAMES.map((name) => [name, requests === 0 ? 0 : (after.ms[name] - before.ms[name]) * 1000 / requests]))
}

/** The report's table of segments, when they were timed. */
function segmentsReport (m) {
  const timed = m.results.filter((r) => r.segments !== undefined)
  if (timed.length === 0) return ''
  // A handler that answers at once sends from inside head or body, one that awaits from a later
  // microtask: the segments nest differently in the two servers. The CPU besides the answer's write
  // compares them whatever the nesting.
  const besides = (r, name) => (r[name].cpuMicrosPerRequest - r.segments[name].write).toFixed(2)
  const rows = [['scenario', 'CPU besides write fastbase / ceiling', ...SEGMENT_NAMES.map((name) => `${name} fastbase / ceiling`)]]
  for (const r of timed) rows.push([r.scenario, `${besides(r, 'fastbase')} / ${besides(r, 'ceiling')}`, ...SEGMENT_NAMES.map((name) => `${r.segments.fastbase[name].toFixed(2)} / ${r.segments.ceiling[name].toFixed(2)}`)])
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return '\nµs per request in each timed segment (bench/segments.cjs; the timers are in both servers, and so in the numbers above):\n' +
    rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n') + '\n'
}

/** The report's table. */
export function itemsReport (dialect, m) {
  const rows = [['scenario', 'req/s ratio', 'p99 ratio', 'fastbase p99', 'ceiling p99', 'CPU µs/req fastbase', 'ceiling', ...(m.results.some((r) => r.fastbase.dbMicrosPerRequest > 0) ? ['DB µs/req fastbase', 'ceiling'] : []), 'load']]
  for (const r of m.results) {
    rows.push([
      r.scenario, r.ratio.reqPerSec.toFixed(2), r.ratio.p99.toFixed(2), `${r.fastbase.p99.toFixed(2)} ms`, `${r.ceiling.p99.toFixed(2)} ms`,
      r.fastbase.cpuMicrosPerRequest.toFixed(1), r.ceiling.cpuMicrosPerRequest.toFixed(1),
      ...(rows[0].length > 8 ? [r.fastbase.dbMicrosPerRequest.toFixed(1), r.ceiling.dbMicrosPerRequest.toFixed(1)] : []),
      r.loadAverage
    ])
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  const text = rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n')
  return `\nitems scenarios on ${dialect} (fastbase by npm start, NODE_ENV=production; ${m.connections} connections; ${m.slices} × ${m.sliceSeconds} s slices per server, alternating; ${m.placement}; load average ${m.loadAverage.before} before, ${m.loadAverage.after} after):\n${text}\n` + segmentsReport(m) +
    m.problems.map((p) => `FAILED: ${p}\n`).join('')
}

// ------------------------------------------------------------------ pairs (--pairs N)

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const spread = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) })

/**
 * What several pairs of fresh processes measured (`--pairs N`, each pair a measureItems run): per
 * scenario, the median and range of the req/s ratio, the p99 ratio and each server's CPU µs per
 * request. One pair's ratio is a draw: two starts of the same build differ by several per cent for
 * the life of their processes (docs/benchmarks.md), more than the changes the set is used to judge.
 */
export function pairsSummary (runs) {
  const names = runs[0].results.map((r) => r.scenario)
  return names.map((scenario) => {
    const of = runs.map((run) => run.results.find((r) => r.scenario === scenario)).filter((r) => r !== undefined)
    return {
      scenario,
      pairs: of.length,
      reqPerSec: spread(of.map((r) => r.ratio.reqPerSec)),
      p99: spread(of.map((r) => r.ratio.p99)),
      fastbaseCpu: spread(of.map((r) => r.fastbase.cpuMicrosPerRequest)),
      ceilingCpu: spread(of.map((r) => r.ceiling.cpuMicrosPerRequest))
    }
  })
}

export function pairsReport (dialect, summary) {
  const range = (s, digits) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`
  const rows = [['scenario', 'req/s ratio', 'p99 ratio', 'CPU µs/req fastbase', 'ceiling']]
  for (const s of summary) rows.push([s.scenario, range(s.reqPerSec, 2), range(s.p99, 2), range(s.fastbaseCpu, 1), range(s.ceilingCpu, 1)])
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  const text = rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n')
  return `\nitems scenarios on ${dialect}, ${summary[0]?.pairs ?? 0} pairs of fresh processes: median (lowest–highest)\n${text}\n`
}
