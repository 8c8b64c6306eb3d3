// Every file path the docs and the code's comments name exists, and a `path#name` names something
// defined in that file. Links are checked by docs-links.test.ts; this reads the bare mentions
// (`lib/crud/total-cache.ts`, lib/crud/read.ts#list) that tell a reader where to look, which go
// stale silently when a file is renamed or split.
import t from 'tap'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
/** Top-level folders whose files are cited, and the extensions a cited file may have. */
const CITED = /(?<![\w/.-])((?:lib|plugins|routes|schemas|panel|bench|scripts|test|docs|example|examples|deploy)\/[\w./-]*\.(?:ts|mjs|js|md|json|html|css|sh|yml|toml|tmpl))(?![\w-]|\.\w)(#[A-Za-z_$][\w$.]*)?/g
/** Comment lines of source files: `//`, ` * `, `/**`. */
const COMMENT = /^\s*(?:\/\/|\/?\*)/

function filesUnder (dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(root, dir))) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'results') continue
    const path = `${dir}/${name}`
    if (statSync(join(root, path)).isDirectory()) out.push(...filesUnder(path, keep))
    else if (keep(path)) out.push(path)
  }
  return out
}

/** The file a citation names: as written, or its TypeScript source when it names the compiled `.js`. */
function resolveCited (path: string): string | undefined {
  const candidates = [path, path.replace(/\.js$/, '.ts')]
  return candidates.find((p) => existsSync(join(root, p)) && statSync(join(root, p)).isFile())
}

/** Why the citation `path` (with `#name`) made in `where` does not hold; undefined when it does. */
export function brokenCitation (path: string, name: string | undefined): string | undefined {
  const file = resolveCited(path)
  if (file === undefined) return `${path}: no such file`
  if (name === undefined) return undefined
  const symbol = name.slice(1).split('.')[0]
  const text = readFileSync(join(root, file), 'utf8')
  return new RegExp(`\\b${symbol.replace(/\$/g, '\\$')}\\b`).test(text) ? undefined : `${path}${name}: ${file} names no ${symbol}`
}

function citationsIn (text: string, commentsOnly: boolean): Array<{ path: string, name?: string, line: number }> {
  const found: Array<{ path: string, name?: string, line: number }> = []
  text.split('\n').forEach((line, i) => {
    if (commentsOnly && !COMMENT.test(line)) return
    for (const m of line.matchAll(CITED)) found.push({ path: m[1].replace(/[.]+$/, ''), name: m[2], line: i + 1 })
  })
  return found
}

t.test('the checker', async (t) => {
  t.same(citationsIn('see `lib/crud/read.ts#list` and dist/lib/x.js, node_modules/lib/y.ts', false).map((c) => c.path + (c.name ?? '')), ['lib/crud/read.ts#list'], 'a cited path with its name; dist and nested paths are not citations')
  t.same(citationsIn('const x = "lib/a.ts"\n// lib/b.ts', true).map((c) => c.path), ['lib/b.ts'], 'in sources, comments only')
  t.equal(brokenCitation('lib/crud/read.ts', '#list'), undefined)
  t.equal(brokenCitation('lib/crud/read.js', undefined), undefined, 'a compiled name resolves to its source')
  t.match(brokenCitation('lib/crud/nope.ts', undefined), /no such file/)
  t.match(brokenCitation('lib/crud/read.ts', '#noSuchThingHere'), /names no noSuchThingHere/)
})

t.test('every path the docs and comments name exists', async (t) => {
  const docs = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs', (f) => f.endsWith('.md'))]
  const sources = ['app.ts', 'index.ts', ...['lib', 'plugins', 'routes', 'schemas', 'panel', 'bench', 'scripts', 'test', 'example', 'examples']
    .flatMap((dir) => filesUnder(dir, (f) => /\.(ts|mjs|js)$/.test(f)))]
  const broken: string[] = []
  let count = 0
  let named = 0
  for (const [files, commentsOnly] of [[docs, false], [sources, true]] as const) {
    for (const file of files) {
      for (const c of citationsIn(readFileSync(join(root, file), 'utf8'), commentsOnly)) {
        count++
        if (c.name !== undefined) named++
        const why = brokenCitation(c.path, c.name)
        if (why !== undefined) broken.push(`${relative(root, join(root, file))}:${c.line}: ${why}`)
      }
    }
  }
  t.ok(count >= 300, `${count} citations read`)
  t.ok(named >= 20, `${named} of them name something in the file`)
  t.same(broken, [], 'every cited path exists')
})
