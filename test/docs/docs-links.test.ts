// Every relative link of the README, CONTRIBUTING.md and docs/ leads somewhere: the file exists, and
// an `#anchor` names a heading of the page it points to. The reference moved out of the README into
// docs/, one topic per page, and pages link to each other; a renamed page or heading must not leave
// a dead link behind.
import t from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { anchorOf, anchorsOf, linksOf } from '../markdown.js'

const root = join(import.meta.dirname, '..', '..')
const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** Why `target`, linked from `page`, leads nowhere; undefined when it resolves. */
function deadLink (page: string, target: string): string | undefined {
  if (/^[a-z]+:/i.test(target)) return undefined // http(s), mailto: not checked here
  const [path, anchor] = target.split('#') as [string, string | undefined]
  const file = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path))
  if (!existsSync(file)) return `${target}: no file ${relative(root, file)}`
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) return `${target}: no heading #${anchor} in ${relative(root, file)}`
  return undefined
}

t.test('the link checker reads what it must', async (t) => {
  t.equal(anchorOf('D57. `fastbase check` and the start share one function'), 'd57-fastbase-check-and-the-start-share-one-function')
  t.equal(anchorOf("The auth cookie and other origins"), 'the-auth-cookie-and-other-origins')
  t.same(linksOf('[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n![i](s.png)'), ['x.md', 's.png'], 'links outside code, images included')
  t.match(deadLink('docs/README.md', 'nope.md'), /no file docs\/nope\.md/)
  t.match(deadLink('docs/README.md', 'auth.md#no-such-heading'), /no heading #no-such-heading/)
  t.equal(deadLink('docs/README.md', '../README.md'), undefined)
})

t.test('every relative link resolves', async (t) => {
  t.ok(pages.length >= 20, `${pages.length} pages`)
  const dead: string[] = []
  let links = 0
  for (const page of pages) {
    for (const target of linksOf(readFileSync(join(root, page), 'utf8'))) {
      links++
      const why = deadLink(page, target)
      if (why !== undefined) dead.push(`${page}: ${why}`)
    }
  }
  t.ok(links >= 80, `${links} links`)
  t.same(dead, [], 'no dead links')
})

t.test('the README stays an introduction', async (t) => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length
  t.ok(lines <= 300, `README.md has ${lines} lines (at most 300: the reference lives in docs/)`)
})
