// Bytes allocated per request by fastbase's server, per items scenario (bench/items.mjs), and where:
// fastbase's own code, Fastify and its plugins, pino, Node's HTTP. A plan hit should allocate nothing
// per request beyond its answer; this is how that is measured (decision D84 did it by hand, D133 with
// this). The server runs in this process, as `npm start` runs it (app.ts's server options, info
// logging into /dev/null); the load comes from a child process, so every allocation sampled here is
// the server's. V8's sampling heap profiler, with objects the young and old collections freed
// counted too: the figures are sampled (one sample per `--interval` bytes on average), so they are
// estimates whose spread a second run shows.
//
//   npm run build && node bench/allocations.mjs [--requests 20000] [--interval 256] [--only view,list] [--top 12]
import { Session } from 'node:inspector/promises'
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync, createWriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { once } from 'node:events'
import Fastify from 'fastify'
import { itemsConfig } from './project.mjs'
import { ITEM_COUNT, itemScenarios } from './items.mjs'

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    interval: { type: 'string', default: '256' },
    only: { type: 'string' },
    top: { type: 'string', default: '12' },
    child: { type: 'boolean', default: false }
  },
  allowPositionals: true
})

if (flags.child) {
  // The load: one request at a time per connection, 8 connections, `requests` in all.
  const [url, request, total] = JSON.parse(process.argv.at(-1))
  let sent = 0
  const one = async () => {
    while (sent < total) {
      sent++
      const res = await fetch(url, { method: request.method, headers: request.headers, body: request.body })
      if (res.status !== 200) throw new Error(`${request.path} answered ${res.status}: ${await res.text()}`)
      await res.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, one))
  process.exit(0)
}

const { default: fastbase, options } = await import('../dist/app.js')
const dir = mkdtempSync(join(tmpdir(), 'fastbase-allocations-'))
const devNull = createWriteStream('/dev/null')
const app = Fastify({ ...options, logger: { ...options.logger, level: 'info', stream: devNull } })
await app.register(fastbase, { ...options, config: itemsConfig(), databaseUrl: `sqlite:${join(dir, 'items.sqlite')}` })
const url = await app.listen({ port: 0, host: '127.0.0.1' })

const load = async (request, total) => {
  const child = fork(new URL(import.meta.url), ['--child', JSON.stringify([url + request.path, request, total])], { stdio: 'inherit' })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`the load for ${request.path} failed`)
}

const session = new Session()
session.connect()
try {
  const seed = { method: 'POST', path: '/api/v1/table/items/insert', headers: { 'content-type': 'application/json' } }
  for (let i = 0; i < ITEM_COUNT; i += 500) {
    const values = Array.from({ length: 500 }, (_, j) => ({ title: `Item ${i + j + 1}`, body: `The body of item ${i + j + 1}: a short text.`, n: i + j + 1 }))
    const res = await app.inject({ method: 'POST', url: seed.path, payload: { values } })
    if (res.statusCode !== 200) throw new Error(`seeding items: ${res.statusCode} ${res.body}`)
  }
  const only = flags.only?.split(',').map((s) => s.startsWith('items-') ? s : `items-${s}`)
  const total = Number(flags.requests)
  for (const scenario of itemScenarios()) {
    if (only !== undefined && !only.includes(scenario.name)) continue
    await load(scenario.request, 2000)
    await session.post('HeapProfiler.startSampling', { samplingInterval: Number(flags.interval), includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    await load(scenario.request, total)
    const { profile } = await session.post('HeapProfiler.stopSampling')
    report(scenario.name, profile, total)
  }
} finally {
  session.disconnect()
  await app.close()
  rmSync(dir, { recursive: true, force: true })
}

/** Whose code allocated: the innermost frame that is not a builtin, by package or fastbase's folder. */
function owner (url) {
  if (url.includes('/dist/')) return `fastbase ${url.replace(/.*\/dist\//, '')}`
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return pkg[1]
  if (url.startsWith('node:')) return url.startsWith('node:internal/http') || url.startsWith('node:_http') ? 'node http' : 'node'
  return url === '' ? '(V8 or native)' : url
}

function report (name, profile, total) {
  const byOwner = new Map()
  const bySite = new Map()
  let bytes = 0
  const walk = (node, inherited) => {
    const frame = node.callFrame
    const here = frame.url === '' ? inherited : owner(frame.url)
    const site = frame.url === '' ? undefined : `${frame.functionName || '(anonymous)'} ${owner(frame.url)}:${frame.lineNumber + 1}`
    const self = node.selfSize
    if (self > 0) {
      bytes += self
      byOwner.set(here, (byOwner.get(here) ?? 0) + self)
      const key = site ?? inheritedSite
      bySite.set(key, (bySite.get(key) ?? 0) + self)
    }
    const before = inheritedSite
    if (site !== undefined) inheritedSite = site
    for (const child of node.children) walk(child, here)
    inheritedSite = before
  }
  let inheritedSite = '(root)'
  walk(profile.head, '(V8 or native)')
  const per = (b) => (b / total).toFixed(0).padStart(6)
  console.log(`\n${name}: ${per(bytes)} bytes allocated per request (${total} requests, sampled every ${flags.interval} bytes on average)`)
  for (const [who, b] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${per(b)}  ${who}`)
  console.log('  sites:')
  for (const [site, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(flags.top))) console.log(`  ${per(b)}  ${site}`)
}
