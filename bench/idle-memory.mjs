// Idle memory of `npm start` (the bundled example on SQLite), as docs/benchmarks.md reports it:
// the resident set of the server's node process 10 s after `/health` first answers (an idle server:
// by then it has given back the young generation its start grew, decision D144), median of N starts,
// one start at a time.
//
//   npm run build && node bench/idle-memory.mjs [--runs 5] [--settle 10] [--node-option=--flag ...]
//
// Each start runs the real `npm start` (so the flags and environment of package.json's script count)
// in a fresh temporary folder holding a copy of package.json and links to the built package: no
// config there, so the bundled example is served, with its database in that folder's `data/`. The
// figure read is VmRSS of the node process running scripts/start.mjs (not npm's, nor the shell's).
// A probe preloaded into it (bench/idle-memory-probe.mjs, through NODE_OPTIONS) answers SIGUSR2 with
// its V8 heap figures after VmRSS has been read; `--bare` leaves it out (RSS only).
// `--node-option` adds a Node flag to NODE_OPTIONS, to try one before putting it in package.json.
import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, existsSync } from 'node:fs'
import { freePort } from './free-port.mjs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const probe = join(root, 'bench', 'idle-memory-probe.mjs')
const MiB = 1024 * 1024
const HEALTHY_WITHIN_MS = 30_000

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    settle: { type: 'string', default: '10' },
    bare: { type: 'boolean', default: false },
    'node-option': { type: 'string', multiple: true, default: [] }
  }
})
const runs = Number(flags.runs)
const settleMs = Number(flags.settle) * 1000
if (!(runs > 0) || !(settleMs >= 0)) throw new Error('--runs must be positive and --settle not negative')
if (!existsSync(join(root, 'dist', 'app.js'))) throw new Error('dist/ not built: run npm run build')

/** A folder that `npm start` runs in as in the checkout, but whose working directory is its own. */
function packageCopy () {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-idle-'))
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
  for (const name of ['dist', 'node_modules', 'panel', 'example', 'scripts']) symlinkSync(join(root, name), join(dir, name))
  return dir
}

function children (pid) {
  const out = []
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
    if (list !== '') out.push(...list.split(/\s+/).map(Number))
  }
  return out
}

/** The descendant of `pid` that runs scripts/start.mjs. */
function serverPid (pid) {
  for (const child of children(pid)) {
    let cmdline = ''
    try { cmdline = readFileSync(`/proc/${child}/cmdline`, 'utf8') } catch { continue }
    if (cmdline.includes('scripts/start.mjs') && !cmdline.startsWith('sh\0') && !cmdline.startsWith('/bin/sh\0')) return child
    const deeper = serverPid(child)
    if (deeper !== undefined) return deeper
  }
  return undefined
}

/** VmRSS, and its parts: anonymous memory (heaps, stacks) and mapped files (mostly the node binary's code). */
function residentSet (pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const bytes = (field) => {
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)
    if (kib === null) throw new Error(`no ${field} for ${pid}`)
    return Number(kib[1]) * 1024
  }
  return { rss: bytes('VmRSS'), rssAnon: bytes('RssAnon'), rssFile: bytes('RssFile') }
}

async function heapOf (pid, out) {
  process.kill(pid, 'SIGUSR2')
  for (let i = 0; i < 50; i++) {
    await sleep(50)
    if (existsSync(out)) {
      try { return JSON.parse(readFileSync(out, 'utf8')) } catch {}
    }
  }
  throw new Error('the probe did not answer')
}

async function oneStart () {
  const dir = packageCopy()
  const port = await freePort()
  const out = join(dir, 'heap.json')
  const nodeOptions = [process.env.NODE_OPTIONS, ...flags['node-option'], flags.bare ? undefined : `--import=${probe}`].filter(Boolean).join(' ')
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), FASTIFY_ADDRESS: '127.0.0.1', NODE_OPTIONS: nodeOptions, FASTBASE_IDLE_PROBE_OUT: out },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  let output = ''
  npm.stdout.on('data', (d) => { output += d })
  npm.stderr.on('data', (d) => { output += d })
  try {
    const deadline = Date.now() + HEALTHY_WITHIN_MS
    for (;;) {
      if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not become healthy:\n${output}`)
      try { if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) break } catch {}
      await sleep(20)
    }
    await sleep(settleMs)
    const pid = serverPid(npm.pid)
    if (pid === undefined) throw new Error('no node process runs scripts/start.mjs under npm')
    const resident = residentSet(pid)
    return { ...resident, ...(flags.bare ? {} : await heapOf(pid, out)) }
  } finally {
    // npm, its shell and the server share the process group `detached` gave them.
    try { process.kill(-npm.pid, 'SIGTERM') } catch {}
    if (npm.exitCode === null) await once(npm, 'exit')
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const mib = (bytes) => (bytes / MiB).toFixed(1)

const samples = []
for (let i = 0; i < runs; i++) {
  const sample = await oneStart()
  samples.push(sample)
  const heap = sample.heapUsed === undefined ? '' : `, heap ${mib(sample.heapUsed)} used of ${mib(sample.heapTotal)} (new space ${mib(sample.newSpace)}), external ${mib(sample.external)}`
  console.log(`start ${i + 1}: RSS ${mib(sample.rss)} MiB (anonymous ${mib(sample.rssAnon)}, files ${mib(sample.rssFile)})${heap}`)
}
const medianOf = (field) => mib(median(samples.map((s) => s[field])))
const line = [`RSS median ${medianOf('rss')} MiB of ${samples.map((s) => mib(s.rss)).join(', ')} (anonymous ${medianOf('rssAnon')}, files ${medianOf('rssFile')})`]
if (!flags.bare) line.push(`heap used ${medianOf('heapUsed')} of ${medianOf('heapTotal')} MiB (medians)`)
console.log(`${line.join('; ')}${flags['node-option'].length > 0 ? ` with ${flags['node-option'].join(' ')}` : ''}`)
