// `fastbase vendor` (decision D100): packs this fastbase into the project's vendor/ and points its
// package.json at the tarball, replacing an older one; refuses a folder without package.json.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, root, skip } from '../../cli-run.js'
import { freshDir } from '../../helper.js'

t.test('vendor', { skip }, async (t) => {
  const dir = freshDir(t, 'vendor-')
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', dependencies: { fastbase: `file:${root}`, other: '^1.0.0' } }))
  mkdirSync(join(dir, 'vendor'))
  writeFileSync(join(dir, 'vendor', 'fastbase-0.0.1.tgz'), 'an older one')
  writeFileSync(join(dir, 'vendor', 'other-1.0.0.tgz'), 'not ours')

  const run = await fastbase(['vendor', dir])
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, new RegExp(`package.json: fastbase file:${root} -> file:vendor/fastbase-${version}\\.tgz\\nNext: npm install`))
  t.same(readdirSync(join(dir, 'vendor')).sort(), [`fastbase-${version}.tgz`, 'other-1.0.0.tgz'], 'the older fastbase tarball is gone, nothing else')
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  t.same(pkg.dependencies, { fastbase: `file:vendor/fastbase-${version}.tgz`, other: '^1.0.0' })
  t.ok(readFileSync(join(dir, 'vendor', `fastbase-${version}.tgz`)).subarray(0, 2).equals(Buffer.from([0x1f, 0x8b])), 'a gzip tarball')
  // npm 11 lists a dependency's `prepare` among the scripts to approve; approved, it would build
  // without devDependencies and fail the install. The tarball is built: it carries none.
  const packed = JSON.parse(execFileSync('tar', ['-xzOf', join(dir, 'vendor', `fastbase-${version}.tgz`), 'package/package.json'], { encoding: 'utf8' }))
  t.equal(packed.scripts.prepare, undefined, 'no prepare script in the tarball')
  t.ok(packed.scripts.build, 'the other scripts are kept')
  t.same(packed.dependencies, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies)

  const again = await fastbase(['vendor'], { cwd: dir })
  t.equal(again.code, 0)
  t.match(again.stdout, /package\.json already depends on it/)

  const empty = freshDir(t, 'empty-')
  const refused = await fastbase(['vendor', empty])
  t.equal(refused.code, 1)
  t.match(refused.stderr, /fastbase vendor: no package\.json in .*: run it in the project's folder/)
  t.notOk(existsSync(join(empty, 'vendor')), 'nothing written')
  t.equal((await fastbase(['vendor', dir, 'extra'])).code, 2, 'one folder at most')
})
