// The idle resident set that fastbase's runtime packages cost before fastbase's own code runs: a
// bare Fastify server with better-sqlite3 (what the benchmark's ceiling loads), and the same server
// with the packages fastbase's server loads at start imported as well (nothing else done with them),
// both with `npm start`'s Node flags. docs/benchmarks.md compares fastbase's idle figure with these.
//
//   node bench/package-floor.mjs [--runs 5] [--settle 3]
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startNodeFlags } from './start-flags.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const MiB = 1024 * 1024

/** What `npm start` imports of fastbase's runtime dependencies before its first request (the design card's packages, and the CLI that starts it). */
export const RUNTIME_PACKAGES = [
  'knex', '@sinclair/typebox', '@fastify/swagger', '@fastify/swagger-ui', '@fastify/static', '@fastify/jwt',
  '@fastify/multipart', '@fastify/cookie', 'ajv', 'fastify-cli/start.js'
]

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '5' }, settle: { type: 'string', default: '3' } } })
const runs = Number(flags.runs)
const settle = Number(flags.settle)
if (!(runs > 0) || !(settle >= 0)) throw new Error('--runs must be positive and --settle not negative')

async function residentSet (packages) {
  const child = spawn(process.execPath, [...startNodeFlags(), join(here, 'package-floor-server.mjs'), String(settle), ...packages], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`the floor server exited with ${code}`)
  return JSON.parse(out)
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
for (const [name, packages] of [['Fastify + better-sqlite3', []], ['… + fastbase\'s runtime packages, imported', RUNTIME_PACKAGES]]) {
  const samples = []
  for (let i = 0; i < runs; i++) samples.push(await residentSet(packages))
  const m = (key) => (median(samples.map((s) => s[key])) / MiB).toFixed(1)
  console.log(`${name}: RSS ${m('rss')} MiB (anonymous ${m('rssAnon')}, files ${m('rssFile')}), heap used ${m('heapUsed')} MiB; median of ${runs}`)
}
