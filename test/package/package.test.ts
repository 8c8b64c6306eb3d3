// What `npm pack` ships: the built entry points, one self-contained declaration file per public entry
// point and no other (decision D131), and no source map of the sources it does not ship (the package
// has dist/, not the .ts files a map would point at). Then the packed tarball installed in a fresh
// project: each entry's types compile alone under `tsc --strict`, a program on the public API compiles,
// and internal modules cannot be imported as types. Reads the build, so `npm run build` first.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { extract } from 'tar'
import { fastbase, root, skip, tsc } from '../cli-run.js'
import { extendingConfig } from '../fixtures/extending/config.js'

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
// An export is a path or conditions (`{ types, default }`) naming paths.
const exported = Object.values(pkg.exports).flatMap((e) => typeof e === 'string' ? [e] : Object.values(e as Record<string, string>))
const strip = (p: unknown): string => String(p).replace(/^\.\//, '')
/** The declaration file TypeScript reads for each export: its `types` condition, else the .d.ts beside its .js. */
const declarations = [...new Set([pkg.types, ...Object.values(pkg.exports).map((e) => typeof e === 'string' ? e.replace(/\.js$/, '.d.ts') : (e as { types: string }).types)].map(strip))].sort()
/** What a user imports: `fastbase`, `fastbase/client`, … */
const specifiers = Object.keys(pkg.exports).map((k) => k === '.' ? pkg.name : `${pkg.name}/${strip(k)}`)

t.test('the package ships its entry points, their declarations only, and no source maps', async (t) => {
  // --ignore-scripts: the listing of what is built, without building again.
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }))
  const files: string[] = listing[0].files.map((f: { path: string }) => f.path)
  const entries = [pkg.main, pkg.types, ...Object.values(pkg.bin), ...exported].map(strip)
  for (const entry of entries) t.ok(files.includes(entry), `${entry} is shipped`)
  t.same(declarations, ['dist/app.d.ts', 'dist/index.d.ts', 'dist/lib/client/index.d.ts', 'dist/lib/config/scaffolds.d.ts'], 'the four entry points\' declarations')
  t.same(files.filter((f) => f.endsWith('.d.ts')).sort(), declarations, 'the entry points\' declaration files and no other')
  t.same(files.filter((f) => f.endsWith('.map')), [], 'no source maps')
  t.same(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== 'examples/bundled/fastbase.config.ts'), [], 'no TypeScript sources but the example config')
})

/**
 * A fresh project outside the checkout with the packed tarball installed: its files unpacked as
 * `npm install` does, and the package's dependencies (and @types/node) linked from the checkout,
 * since tests run offline. Removed after the test.
 */
async function projectWithTarball (t: Test): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'fastbase-pack-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }))
  const installed = join(dir, 'node_modules', pkg.name)
  mkdirSync(installed, { recursive: true })
  await extract({ file: join(dir, packed.filename), cwd: installed, strip: 1 })
  for (const name of [...Object.keys(pkg.dependencies), '@types/node']) {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true })
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true, dependencies: { [pkg.name]: `file:${packed.filename}` } }))
  return dir
}

// No skipLibCheck: the shipped declarations are checked too.
const STRICT = ['--strict', '--noEmit', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--lib', 'ES2022,DOM']
const errorsIn = (output: string): string => output.split('\n').filter((l) => l.includes('error TS')).join('\n')

const PROGRAM = `import Fastify from 'fastify'
import fastbase, { defineConfig, FastbaseError, type FastbaseOptions, type TableField } from 'fastbase'
import plugin, { options } from 'fastbase/app'
import { baseFields, fields } from 'fastbase/scaffolds/fields'
import { createClient, type Row } from 'fastbase/client'

const body: TableField = { name: 'body', type: 'text', sqlType: 'text', notNull: true }
const config = defineConfig({ jwtSecret: 'x', appUrl: 'http://localhost', tables: [{ name: 'notes', autoSetUid: true, fields: [...baseFields, fields.created, body] }] })
const opts: FastbaseOptions = { config }
const app = Fastify()
await app.register(fastbase, opts)
await app.register(plugin, { config, prefix: '/other' })
const [post] = await app.fastbase.tables.posts.insert({ values: { owner: 'u1', title: 'Hello' }, returning: '*' }, { as: 'system' })
const title: string = post.title
const fb = createClient('https://api.example.com')
const { items } = await fb.table('posts').list({ where: 'published == true' })
const row: Row<'posts'> = items[0]
const views: number = row.views
try { await app.fastbase.runAction('publish', { id: 'p1' }) } catch (error) { if (error instanceof FastbaseError) console.log(error.code) }
console.log(title, views, options.standalone)
`

t.test('the packed declarations compile alone, and a program on the public API compiles against them', { skip }, async (t) => {
  const dir = await projectWithTarball(t)
  const installed = join(dir, 'node_modules', pkg.name)
  for (const [i, specifier] of specifiers.entries()) {
    writeFileSync(join(dir, `entry${i}.ts`), `import * as entry from '${specifier}'\nconsole.log(entry)\n`)
    const alone = await tsc([...STRICT, '--listFiles', `entry${i}.ts`], dir)
    t.equal(alone.code, 0, `${specifier} compiles under tsc --strict ${errorsIn(alone.output)}`)
    // The package files tsc read: the entry's own, and the main entry's, which the others import from.
    const read = alone.output.split('\n').filter((f) => f.startsWith(installed)).map((f) => strip(f.slice(installed.length + 1)))
    t.ok(read.length > 0 && read.every((f) => declarations.includes(f)), `${specifier} reads only entry declarations: ${read.join(', ')}`)
  }

  writeFileSync(join(dir, 'fastbase.config.json'), JSON.stringify(extendingConfig()))
  const types = await fastbase(['types', 'fastbase.config.json', '--out', 'fastbase-types.d.ts'], { cwd: dir })
  t.equal(types.code, 0, types.stderr)
  writeFileSync(join(dir, 'program.ts'), PROGRAM)
  const good = await tsc([...STRICT, 'program.ts', 'fastbase-types.d.ts'], dir)
  t.equal(good.code, 0, `the program compiles:\n${good.output}`)

  // Typed, not `any`: wrong uses fail; and no internal module is there to import types from.
  writeFileSync(join(dir, 'program.ts'), `${PROGRAM}
const wrong: string = row.views
await app.fastbase.tables.postz.list({}, { as: 'system' })
import type { list } from 'fastbase/dist/lib/crud/read.js'
import type { TableApi } from './node_modules/fastbase/dist/lib/api/tables.js'
console.log(wrong)
`)
  const bad = await tsc([...STRICT, 'program.ts', 'fastbase-types.d.ts'], dir)
  t.equal(bad.code, 2, 'does not compile')
  const first = PROGRAM.split('\n').length + 1
  for (const [offset, error] of [
    [0, /error TS2322: Type 'number' is not assignable to type 'string'/],
    [1, /error TS2551: Property 'postz' does not exist/],
    [2, /error TS2307: Cannot find module 'fastbase\/dist\/lib\/crud\/read\.js'/],
    [3, /error TS7016: Could not find a declaration file for module '\.\/node_modules\/fastbase\/dist\/lib\/api\/tables\.js'/]
  ] as const) t.match(bad.output, new RegExp(`program\\.ts\\(${first + offset},[0-9]+\\): ${error.source}`), `line ${offset + 1} of the wrong program`)
  t.equal(bad.output.split('\n').filter((l) => l.includes('error TS')).length, 4, `exactly the four errors:\n${bad.output}`)
})
