// What `npm pack` ships: the built entry points, and no source map of the sources it does not ship
// (the package has dist/, not the .ts files a map would point at). Reads the build, so `npm run build` first.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')

t.test('the package ships its entry points and no source maps', async (t) => {
  // --ignore-scripts: the listing of what is built, without building again.
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }))
  const files: string[] = listing[0].files.map((f: { path: string }) => f.path)
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  // An export is a path or conditions (`{ types, default }`) naming paths.
  const exported = Object.values(pkg.exports).flatMap((e) => typeof e === 'string' ? [e] : Object.values(e as Record<string, string>))
  const entries = [pkg.main, pkg.types, ...Object.values(pkg.bin), ...exported].map((p) => String(p).replace(/^\.\//, ''))
  for (const entry of entries) t.ok(files.includes(entry), `${entry} is shipped`)
  t.same(files.filter((f) => f.endsWith('.map')), [], 'no source maps')
  t.same(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== 'example/fastbase.config.ts'), [], 'no TypeScript sources but the example config')
})
