// docs/cli.md's table has a row for every command `fastbase --help` lists, and no row for a command
// it does not: the page a new user reads first names all of them.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, root, skip } from '../cli-run.js'

t.test('every command of fastbase --help has its row in docs/cli.md', { skip }, async (t) => {
  const help = await fastbase(['--help'])
  t.equal(help.code, 0, help.stderr)
  const listed = /^Commands:\n([\s\S]*?)\n\n/m.exec(help.stdout)?.[1].split('\n').map((line) => line.trim().split(/\s+/)[0]) ?? []
  t.ok(listed.length >= 7, `--help lists ${listed.join(', ')}`)
  const page = readFileSync(join(root, 'docs', 'cli.md'), 'utf8')
  const rows = [...page.matchAll(/^\| `fastbase (\w+)/gm)].map((m) => m[1])
  t.same([...rows].sort(), [...listed].sort(), 'one row per command, no other')
})
