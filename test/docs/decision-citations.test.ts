// Every citation resolves inside the repository: `decision D12` (or `decisions D7, D38`) names a
// record of docs/decisions.md, a link to one of its records names a real heading, and no comment or
// document cites what a reader of the repository cannot open (the numbered list the project started
// from, the original system's reference sections, tracker issue numbers). The records themselves are
// numbered D1, D2, ... without gaps, and the index at the top lists each one.
import t from 'tap'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { extname, join, relative } from 'node:path'
import { anchorOf } from '../markdown.js'

const root = join(import.meta.dirname, '..', '..')
const DECISIONS_FILE = 'docs/decisions.md'

/** Folders scanned (recursively) and single files; what a maintainer reads. */
const SCANNED_DIRS = ['lib', 'plugins', 'routes', 'schemas', 'panel', 'scripts', 'bench', 'test', 'docs', 'examples', '.ci']
const SCANNED_FILES = ['README.md', 'CONTRIBUTING.md', 'app.ts', 'index.ts', 'package.json', '.taprc', 'biome.jsonc', '.dependency-cruiser.cjs', '.c8rc.json']
const TEXT_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs', '.cjs', '.md', '.html', '.css', '.json', '.jsonc', '.tmpl', ''])
const SKIPPED_DIRS = new Set(['node_modules', 'results', 'screenshots'])
/** This file spells the forbidden patterns out to test the scanner. */
const SELF = 'test/docs/decision-citations.test.ts'

function walk (dir: string, out: string[]): void {
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name)
    if (statSync(join(root, path)).isDirectory()) {
      if (!SKIPPED_DIRS.has(name)) walk(path, out)
    } else if (TEXT_EXTENSIONS.has(extname(name))) out.push(path)
  }
}

function scannedFiles (): string[] {
  const out: string[] = []
  for (const dir of SCANNED_DIRS) walk(dir, out)
  for (const file of SCANNED_FILES) {
    try {
      if (statSync(join(root, file)).isFile()) out.push(file)
    } catch {}
  }
  return out.map((f) => relative(root, join(root, f))).filter((f) => f !== SELF)
}

interface Records { numbers: number[], anchors: Map<string, number>, index: string[] }

/** The records of docs/decisions.md: their numbers in order, their anchors, the index's links. */
function readRecords (markdown: string): Records {
  const numbers: number[] = []
  const anchors = new Map<string, number>()
  for (const m of markdown.matchAll(/^## D(\d+)\. (.+)$/gm)) {
    numbers.push(Number(m[1]))
    anchors.set(anchorOf(`D${m[1]}. ${m[2]}`), Number(m[1]))
  }
  const indexText = /^## Index\n([\s\S]*?)\n## /m.exec(markdown)?.[1] ?? ''
  const index = [...indexText.matchAll(/^- \[D\d+\]\(#([^)]+)\)/gm)].map((m) => m[1])
  return { numbers, anchors, index }
}

/** What is wrong with one file's text: dangling citations and citations of things outside the repository. */
function problemsOf (text: string, records: Set<number>, anchors: Set<string>, isDecisionsFile = false): string[] {
  const problems: string[] = []
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    const at = `line ${i + 1}`
    for (const m of line.matchAll(/\bdecisions?\s+(D\d+(?:\s*(?:,|and|or|to|-|–)\s*D\d+)*)/gi)) {
      for (const d of m[1].matchAll(/D(\d+)/g)) {
        if (!records.has(Number(d[1]))) problems.push(`${at}: cites D${d[1]}, which docs/decisions.md does not have`)
      }
    }
    if (isDecisionsFile) {
      for (const d of line.matchAll(/\bD(\d+)\b/g)) {
        if (!records.has(Number(d[1]))) problems.push(`${at}: refers to D${d[1]}, which is not a record`)
      }
    }
    for (const m of line.matchAll(/decisions\.md#([\w-]+)/g)) {
      if (!anchors.has(m[1])) problems.push(`${at}: links to decisions.md#${m[1]}, which is no record's heading`)
    }
    if (/\bDECISIONS\s*(?:#|§|:)?\s*\d/.test(line) || /\bDECISIONS:/.test(line)) problems.push(`${at}: cites the shared DECISIONS list; cite a record of docs/decisions.md`)
    const citesReference = /\breference\s*§/i.test(line) || /\breference\/[\w./-]+/.test(line)
    if (citesReference) problems.push(`${at}: cites the original system's reference; say it in words`)
    for (const m of citesReference ? [] : line.matchAll(/§\s*\d/g)) {
      const before = line.slice(0, m.index)
      // Public standards are citable: everyone can open them.
      if (!/(RFC\s?\d+|OpenID Connect[\w .]*|OAuth [\d.]+)\s*$/.test(before)) problems.push(`${at}: cites a section (§) of something outside the repository`)
    }
    if (/\b(?:issues?|PR|pull request)\s+#?\d+/i.test(line) || /\(#\d+\)/.test(line)) problems.push(`${at}: cites a tracker issue; say the reason in words or cite a decision`)
  })
  return problems
}

const decisionsText = readFileSync(join(root, DECISIONS_FILE), 'utf8')
const { numbers, anchors, index } = readRecords(decisionsText)
const recordSet = new Set(numbers)
const anchorSet = new Set(anchors.keys())

t.test('the scanner finds what it must', async (t) => {
  const records = new Set([1, 2, 7, 38])
  const anchorsOk = new Set(['d7-paging'])
  t.same(problemsOf('see decision D7 and decisions D1, D38', records, anchorsOk), [], 'resolving citations pass')
  t.same(problemsOf('x\n// decision D9999', records, anchorsOk), ['line 2: cites D9999, which docs/decisions.md does not have'])
  t.same(problemsOf('(decisions D7, D12)', records, anchorsOk), ['line 1: cites D12, which docs/decisions.md does not have'])
  t.same(problemsOf('[paging](docs/decisions.md#d7-paging) [x](decisions.md#d8-order)', records, anchorsOk), ['line 1: links to decisions.md#d8-order, which is no record\'s heading'])
  t.equal(problemsOf('// typed values (DECISIONS 1)', records, anchorsOk).length, 1, 'the shared list')
  t.equal(problemsOf('// storage class (reference §1.4)', records, anchorsOk).length, 1, 'a reference section')
  t.equal(problemsOf('// templates (§1.12)', records, anchorsOk).length, 1, 'a bare section')
  t.same(problemsOf('// OpenID Connect Core §3.1.3.7 and RFC 9207 §2', records, anchorsOk), [], 'public standards are fine')
  t.equal(problemsOf('// found in issue 21', records, anchorsOk).length, 1, 'an issue number')
  t.equal(problemsOf('fixed (#42)', records, anchorsOk).length, 1, 'a tracker reference')
  t.same(problemsOf('as D41 decided', records, anchorsOk, true), ['line 1: refers to D41, which is not a record'], 'bare references inside the records resolve too')
  t.same(problemsOf('colour #123 and D41 outside the records', records, anchorsOk), [], 'no false alarms')
})

t.test('docs/decisions.md: records D1..Dn, each in the index', async (t) => {
  t.ok(numbers.length >= 60, `${numbers.length} records`)
  t.same(numbers, numbers.map((_, i) => i + 1), 'numbered from D1 without gaps or repeats, in order')
  t.same(index, [...anchors.keys()], 'the index links every record, in order, by its heading\'s anchor')
})

t.test('every citation in code and docs resolves, and none points outside the repository', async (t) => {
  const files = scannedFiles()
  t.ok(files.length > 300, `${files.length} files scanned`)
  let citations = 0
  const problems: string[] = []
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8')
    citations += [...text.matchAll(/\bdecisions?\s+D\d+/gi)].length
    for (const problem of problemsOf(text, recordSet, anchorSet, file === DECISIONS_FILE)) problems.push(`${file} ${problem}`)
  }
  t.same(problems, [], 'no dangling or outside citations')
  t.ok(citations >= 80, `${citations} citations of decisions`)
})

/** Repository paths a line names (`lib/config/load.ts`, `docs/cli.md`): a folder of the repository, a file with its extension. */
function namedPaths (line: string): string[] {
  const found: string[] = []
  for (const m of line.matchAll(/(?<![\w./-])((?:lib|plugins|routes|schemas|panel|scripts|bench|test|docs|example|examples|deploy)\/[\w./-]*\.(?:ts|mts|js|mjs|cjs|md|json|jsonc|css|html))(?!\.?[\w/*-])/g)) {
    found.push(m[1])
  }
  return found
}

t.test('the path scanner finds repository paths, not others', async (t) => {
  t.same(namedPaths('see lib/config/load.ts and `docs/cli.md`.'), ['lib/config/load.ts', 'docs/cli.md'])
  t.same(namedPaths('node_modules/fastbase/dist/app.js, dist/lib/x.js, test/docs-*.test.ts, test/<file>.test.ts'), [], 'installed, built, globbed and placeholder paths are not the repository\'s')
  t.same(namedPaths('(test/fixtures/a.ts.tmpl) ends lib/b.ts.'), ['lib/b.ts'], 'a longer name is not cut short; a full stop ends a path')
})

/** `lib/crud/read.ts#list` in a line: the path and the name it points at in that file. */
function namedSymbols (line: string): Array<{ path: string, symbol: string }> {
  return [...line.matchAll(/(?<![\w./-])((?:lib|plugins|routes|schemas|panel|scripts|bench|test)\/[\w./-]*\.(?:ts|mjs|js))#([A-Za-z_$][\w$]*)/g)].map((m) => ({ path: m[1], symbol: m[2] }))
}

t.test('the symbol scanner reads path#name', async (t) => {
  t.same(namedSymbols('see `lib/crud/read.ts#list` and lib/x.ts'), [{ path: 'lib/crud/read.ts', symbol: 'list' }])
  t.same(namedSymbols('Dialect#plansSemiJoins, docs/a.md#heading'), [], 'a type\'s member and a document\'s anchor are not file citations')
})

t.test('every repository path a comment or a document names exists', async (t) => {
  const missing: string[] = []
  let named = 0
  let symbols = 0
  for (const file of scannedFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      for (const path of namedPaths(line)) {
        named++
        if (!existsSync(join(root, path))) missing.push(`${file} line ${i + 1}: ${path}`)
      }
      // `path#name`: the name is defined or used in that file (a renamed function leaves no stale pointer).
      for (const { path, symbol } of namedSymbols(line)) {
        symbols++
        if (existsSync(join(root, path)) && !new RegExp(`\\b${symbol.replace(/\$/g, '\\$')}\\b`).test(readFileSync(join(root, path), 'utf8'))) missing.push(`${file} line ${i + 1}: ${path}#${symbol}: no ${symbol} in ${path}`)
      }
    })
  }
  t.same(missing, [], 'no path names a file that is not there, nor a name its file does not hold')
  t.ok(named >= 200, `${named} paths named`)
  t.ok(symbols >= 20, `${symbols} of them with #name`)
})
