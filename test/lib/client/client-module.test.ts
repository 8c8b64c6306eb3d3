// fastbase/client is one small ESM module graph that runs anywhere fetch does: every import of the
// built files is a relative file of the client itself (no `node:` built-in, no package), it is what
// package.json exports as `./client` (with its types), and the README states its gzipped size.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { root, skip } from '../../cli-run.js'

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm

/** Every file the built client reaches from `entry`, and each specifier it imports. */
function graph (entry: string): { files: string[], specifiers: string[] } {
  const files: string[] = []
  const specifiers: string[] = []
  const visit = (file: string): void => {
    if (files.includes(file)) return
    files.push(file)
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]
      specifiers.push(specifier)
      if (specifier.startsWith('./') || specifier.startsWith('../')) visit(join(dirname(file), specifier))
    }
  }
  visit(entry)
  return { files, specifiers }
}

t.test('the built client imports only its own files', { skip }, async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  t.same(pkg.exports['./client'], { types: './dist/lib/client/index.d.ts', default: './dist/lib/client/index.js' }, 'exported as fastbase/client, with types')
  const entry = join(root, pkg.exports['./client'].default)
  t.ok(existsSync(join(root, pkg.exports['./client'].types)), 'its declarations are built')
  const { files, specifiers } = graph(entry)
  t.ok(files.length > 5, `the graph holds its files (${files.length})`)
  t.same(specifiers.filter((s) => !s.startsWith('./')), [], 'no node: built-in, no package, nothing outside the client folder')
  for (const file of files) {
    t.ok(existsSync(file), `${relative(root, file)} exists`)
    // Code only: the comments may name Node's types (a Buffer is bytes).
    const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '')
    t.notMatch(code, /\brequire\(|\bprocess\.|\bBuffer\b|__dirname/, `${relative(root, file)} uses no Node global`)
  }
  const { createClient, FastbaseError } = await import(entry)
  t.type(createClient, 'function')
  t.type(FastbaseError, 'function')
})

t.test('the README states its gzipped size', { skip }, async (t) => {
  const { files } = graph(join(root, 'dist', 'lib', 'client', 'index.js'))
  // Each file gzipped on its own, as a browser fetches them without a bundler.
  const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(file), { level: 9 }).length, 0) / 1000
  const stated = /`fastbase\/client`[^\n]*?\b(\d+(?:\.\d+)?) kB gzipped/.exec(readFileSync(join(root, 'README.md'), 'utf8'))
  t.ok(stated, 'the README names the size')
  const kb = Number(stated?.[1])
  t.ok(Math.abs(gzipped - kb) <= kb * 0.1, `measured ${gzipped.toFixed(1)} kB gzipped, stated ${kb} kB (within 10%)`)
})
