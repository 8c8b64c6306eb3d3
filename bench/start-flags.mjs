// The Node flags `npm start` gives fastbase (package.json's `start` script, decisions D74, D80, D82):
// the benchmarks run fastbase, and what they compare it with, as it is shipped.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export function startNodeFlags () {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const start = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start
  const node = /(?:^| )node ((?:--[\w-]+(?:=\S+)? )*)scripts\/start\.mjs/.exec(start)
  if (node === null) throw new Error(`bench: cannot read the Node flags of package.json's start script: ${start}`)
  return node[1].trim().split(' ').filter((flag) => flag !== '')
}
