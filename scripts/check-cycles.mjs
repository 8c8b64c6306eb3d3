// `npm run check:cycles` (and .ci/run, before the tests): the import graph of the sources, checked by
// dependency-cruiser with .dependency-cruiser.cjs. A cycle between files, and lib/ depending on
// Fastify, fail. Between folders, the check is on edges: an import from folder A to folder B is cyclic
// when B also reaches A (both in one strongly connected component of the folder graph), and every
// cyclic edge fails. dependency-cruiser's own folder rule counts a folder's subfolders as part of it
// (`lib/auth -> lib` would be `lib` reaching itself), so the folder graph is built here, one node per
// directory: the files at the root of `lib/` are one folder, `lib/auth` another.
import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SOURCES = ['app.ts', 'index.ts', 'plugins', 'routes', 'schemas', 'lib']

/** Folder of a module path as dependency-cruiser names it (`lib/auth/stores/sessions.ts` -> `lib/auth/stores`, `app.ts` -> `.`). */
const folderOf = (path) => dirname(path)

/** Edges `A -> B` of `graph` (Map<node, Set<node>>) that lie on a cycle: both ends in one strongly connected component. */
function cyclicEdges (graph) {
  const index = new Map()
  const low = new Map()
  const component = new Map()
  const stack = []
  const onStack = new Set()
  let next = 0
  let components = 0
  // Tarjan's algorithm; the folder graph has a few dozen nodes, so recursion depth is no concern.
  const visit = (v) => {
    index.set(v, next); low.set(v, next); next++
    stack.push(v); onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))) } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)))
    }
    if (low.get(v) === index.get(v)) {
      let w
      do { w = stack.pop(); onStack.delete(w); component.set(w, components) } while (w !== v)
      components++
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  const edges = new Set()
  for (const [v, targets] of graph) for (const w of targets) if (v !== w && component.get(v) === component.get(w)) edges.add(`${v} -> ${w}`)
  return edges
}

const run = spawnSync(join(root, 'node_modules', '.bin', 'depcruise'), ['--config', '.dependency-cruiser.cjs', '--output-type', 'json', ...SOURCES], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
if (run.error !== undefined || run.stdout === '') {
  console.error(`dependency-cruiser did not run: ${run.error?.message ?? run.stderr}`)
  process.exit(1)
}
const { summary, modules } = JSON.parse(run.stdout)
const problems = []
for (const v of summary.violations) problems.push(`${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`)
const isSource = (path) => SOURCES.some((s) => path === s || path.startsWith(`${s}/`))
const folders = new Map()
for (const m of modules) {
  if (!isSource(m.source)) continue
  const from = folderOf(m.source)
  if (!folders.has(from)) folders.set(from, new Set())
  for (const d of m.dependencies) if (isSource(d.resolved)) folders.get(from).add(folderOf(d.resolved))
}
const cyclic = cyclicEdges(folders)
for (const edge of [...cyclic].sort()) problems.push(`import between folders that import each other: ${edge}`)

console.log(`import graph: ${summary.totalCruised} modules, ${summary.totalDependenciesCruised} imports, ${folders.size} folders; no file or folder cycles allowed`)
for (const problem of problems) console.error(`  ${problem}`)
process.exitCode = problems.length === 0 ? 0 : 1
