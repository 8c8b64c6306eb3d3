// `npm run check:cycles` (and .ci/run, before the tests): the import graph of the sources, checked by
// dependency-cruiser with .dependency-cruiser.cjs. A cycle between files, and lib/ depending on
// Fastify, always fail. Cycles between folders fail unless they are listed in
// scripts/known-folder-cycles.json: the ones the code had when the check came, which the planned
// restructuring removes. A new folder cycle fails, and so does a listed one that is gone (delete its
// line), so the list only shrinks.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SOURCES = ['app.ts', 'index.ts', 'plugins', 'routes', 'schemas', 'lib']
const knownFile = join(root, 'scripts', 'known-folder-cycles.json')

/** A cycle as one line, started at its alphabetically first member, so each cycle has one spelling. */
function cycleLine (members) {
  const first = members.indexOf([...members].sort()[0])
  return [...members.slice(first), ...members.slice(0, first), members[first]].join(' -> ')
}

const run = spawnSync(join(root, 'node_modules', '.bin', 'depcruise'), ['--config', '.dependency-cruiser.cjs', '--output-type', 'json', ...SOURCES], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
if (run.error !== undefined || run.stdout === '') {
  console.error(`dependency-cruiser did not run: ${run.error?.message ?? run.stderr}`)
  process.exit(1)
}
const { summary } = JSON.parse(run.stdout)
const known = new Set(JSON.parse(readFileSync(knownFile, 'utf8')))
const folderCycles = new Set()
const problems = []
for (const v of summary.violations) {
  if (v.rule.name === 'no-circular-folders') folderCycles.add(cycleLine(v.cycle.map((c) => c.name)))
  else problems.push(`${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`)
}
for (const cycle of folderCycles) if (!known.has(cycle)) problems.push(`new folder cycle: ${cycle}`)
for (const cycle of known) if (!folderCycles.has(cycle)) problems.push(`folder cycle gone, remove it from scripts/known-folder-cycles.json: ${cycle}`)

console.log(`import graph: ${summary.totalCruised} modules, ${summary.totalDependenciesCruised} imports; no file cycles allowed, ${folderCycles.size} known folder cycles left`)
for (const problem of problems) console.error(`  ${problem}`)
process.exitCode = problems.length === 0 ? 0 : 1
