// The Node versions fastbase says it runs on (package.json `engines`, the README, a scaffold's
// package.json) agree with its dependency tree and with the Node that runs this suite: no package in
// package-lock.json declares an engines.node range this Node does not satisfy (npm would warn on every
// install), and the lowest Node of each range `engines` admits satisfies every runtime dependency.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'

// semver ships no types; these are the three functions used.
const semver: {
  satisfies: (version: string, range: string) => boolean
  minVersion: (range: string) => { version: string } | null
  validRange: (range: string) => string | null
} = createRequire(import.meta.url)('semver')

const root = join(import.meta.dirname, '..', '..')
const read = (file: string): any => JSON.parse(readFileSync(join(root, file), 'utf8'))
const pkg = read('package.json')
const lock = read('package-lock.json')
const packages = Object.entries(lock.packages as Record<string, { engines?: unknown, dev?: boolean, version?: string, optional?: boolean, os?: string[] }>)
  .filter(([path]) => path !== '')
  // A platform's prebuilt binary (sharp's @img/sharp-<os>-<cpu>, optional, with `os`) is installed
  // only on its platform, and sharp is loaded only for the first thumbnail (decision D122): one for a
  // platform whose binary lags Node (32-bit Windows) costs that platform thumbnails, not the server.
  .filter(([, entry]) => !(entry.optional === true && Array.isArray(entry.os)))
  .map(([path, entry]) => ({ path, dev: entry.dev === true, node: typeof entry.engines === 'object' && entry.engines !== null ? (entry.engines as { node?: string }).node : undefined }))
  .filter((p): p is { path: string, dev: boolean, node: string } => typeof p.node === 'string' && semver.validRange(p.node) !== null)

t.test('no package in the tree refuses the Node that runs the suite', async (t) => {
  t.ok(packages.length > 50, `${packages.length} packages declare engines.node`)
  const refusing = packages.filter((p) => !semver.satisfies(process.version, p.node)).map((p) => `${p.path} (${p.node})`)
  t.same(refusing, [], `every one admits ${process.version}`)
  t.ok(semver.satisfies(process.version, pkg.engines.node), `fastbase's engines (${pkg.engines.node}) admit ${process.version}`)
})

t.test('the lowest Node fastbase admits runs every runtime dependency', async (t) => {
  const floors = pkg.engines.node.split('||').map((range: string) => semver.minVersion(range.trim())!.version)
  for (const floor of floors) {
    const refusing = packages.filter((p) => !p.dev && !semver.satisfies(floor, p.node)).map((p) => `${p.path} (${p.node})`)
    t.same(refusing, [], `Node ${floor}: every runtime dependency admits it`)
  }
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  t.match(readme, `Node ${floors.map((f: string) => f.replace(/\.0$/, '')).join(' or ')}`, 'the README names the same versions')
})
