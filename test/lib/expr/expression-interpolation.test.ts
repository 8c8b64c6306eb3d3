// The documented code action built its `where` with `${post.id}` inside the
// expression text, and whoever chose the id chose the condition. Every host copies the examples, so
// no example may do it: values go in `params` and the text names them as `{:name}` (decision D88).
// This is the lint over what users copy: the example projects and the code blocks of the docs and
// the README.
import t from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { root } from '../../cli-run.js'

// A template literal that interpolates, given to a key that takes an expression...
const KEYED = /\b(?:where|guard|order|select|returning|expr|(?:list|view|create|update|delete)Rule)\s*:\s*`[^`]*\$\{/g
// ...or that reads as an expression itself (a comparison or logic around the interpolation), such as a `set` value.
const EXPRESSION_LIKE = /`[^`]*(?:==|!=|!~|<=|>=|\|\||\s~\s|\s&\s|\s\|\s)[^`]*\$\{[^`]*`|`[^`]*\$\{[^`]*(?:==|!=|!~|<=|>=|\|\||\s~\s|\s&\s|\s\|\s)[^`]*`/g

/** Each interpolated expression text in `code`, with its line number. */
export function interpolations (code: string): Array<{ line: number, text: string }> {
  const found = new Map<number, { line: number, text: string }>()
  for (const pattern of [KEYED, EXPRESSION_LIKE]) {
    for (const match of code.matchAll(pattern)) {
      // Keyed by where the template starts: both patterns may find one.
      const at = (match.index ?? 0) + match[0].indexOf('`')
      found.set(at, { line: code.slice(0, at).split('\n').length, text: match[0].split('\n')[0] })
    }
  }
  return [...found.values()]
}

/** Each `{:name}` a line of `code` uses that the same line's `params: { ... }` does not give (the call
 * would be a 400 `Unknown parameter`), as `line: name`. Lines without `params:` are not judged. */
export function unboundParams (code: string): string[] {
  return code.split('\n').flatMap((text, i) => {
    const given = /\bparams\s*:\s*\{([^}]*)\}/.exec(text)
    if (given === null) return []
    const keys = new Set([...given[1].matchAll(/(?:^|,)\s*(\w+)\s*(?=[:,]|$)/g)].map((m) => m[1]))
    return [...text.matchAll(/\{:(\w+)\}/g)].filter((m) => !keys.has(m[1])).map((m) => `${i + 1}: ${m[1]}`)
  })
}

/** The fenced code blocks of a Markdown text, with the line of each one's fence. */
function codeBlocks (markdown: string): Array<{ line: number, code: string }> {
  return [...markdown.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].map((m) => ({ line: markdown.slice(0, m.index).split('\n').length, code: m[1] }))
}

function filesUnder (dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && ext.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => join(e.parentPath, e.name))
}

t.test('the detector finds what the issue found, and passes bound parameters', async (t) => {
  // Code as the linted files hold it, with `$` written `§` (a `${` in a string reads to the linter as a mistaken template).
  const samples: Array<[string, number, string]> = [
    ["const [liked] = await tables.posts.update({ where: `id == '§{post.id}'`, set: { likes: 'likes + 1' } }, { as: 'system' })", 1, 'the old example'],
    ['tables.posts.list({\n  where: `owner == "§{uid}"`\n})', 1, 'over lines'],
    ["tables.posts.update({ where: 'true', set: { title: `title || '§{suffix}'` } })", 1, 'a set expression'],
    ['{ name: "rules", listRule: `owner == §{field}` }', 1, 'a rule'],
    ["tables.posts.update({ where: 'id == {:id}', params: { id: post.id }, set: { likes: 'likes + 1' } })", 0, 'bound'],
    ['text: `Hello §{name}, welcome!`', 0, 'a template that is no expression']
  ]
  for (const [code, count, what] of samples) t.equal(interpolations(code.replaceAll('§', '$')).length, count, what)
})

t.test('a documented call gives every {:name} it uses', async (t) => {
  // extending.md printed `set: { likes: 'likes + {:n}' }` with `params: { id }`: copied, a 400.
  t.same(unboundParams("tables.posts.update({ where: 'id == {:id}', params: { id: post.id }, set: { likes: 'likes + {:n}' } })"), ['1: n'])
  t.same(unboundParams("tables.posts.update({ where: 'id == {:id}', params: { id: post.id, n: 1 }, set: { likes: 'likes + {:n}' } })"), [])
  t.same(unboundParams("list({ where: 'owner == {:uid} & tag == {:tag}', params: { uid, tag } })"), [], 'shorthand keys')
  const files = [join(root, 'README.md'), ...filesUnder(join(root, 'docs'), /\.md$/), ...filesUnder(join(root, 'examples'), /\.(?:md|m?js|ts)$/)]
  const found = files.flatMap((file) => {
    const blocks = file.endsWith('.md') ? codeBlocks(readFileSync(file, 'utf8')) : [{ line: 0, code: readFileSync(file, 'utf8') }]
    return blocks.flatMap((b) => unboundParams(b.code).map((u) => `${relative(root, file)}:${b.line + Number(u.split(':')[0])}: {:${u.split(': ')[1]}}`))
  })
  t.same(found, [], 'give each {:name} in params')
})

t.test('no example or documented code block interpolates into an expression', async (t) => {
  const sources = [
    ...filesUnder(join(root, 'examples'), /\.(?:m?js|ts)$/).map((file) => ({ file, blocks: [{ line: 0, code: readFileSync(file, 'utf8') }] })),
    ...[join(root, 'README.md'), ...filesUnder(join(root, 'docs'), /\.md$/), ...filesUnder(join(root, 'examples'), /\.md$/)]
      .map((file) => ({ file, blocks: codeBlocks(readFileSync(file, 'utf8')) }))
  ]
  t.ok(sources.some((s) => s.file.endsWith(join('host-extended', 'server.mjs'))), 'the host-extended example is read')
  t.ok(sources.some((s) => s.file.endsWith('extending.md') && s.blocks.length > 0), 'and the extending guide\'s code')
  const found = sources.flatMap(({ file, blocks }) => blocks.flatMap((b) => interpolations(b.code).map((i) => `${relative(root, file)}:${b.line + i.line}: ${i.text}`)))
  t.same(found, [], 'bind values as {:name} with params instead')
})
