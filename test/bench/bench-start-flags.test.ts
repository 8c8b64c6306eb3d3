// `npm run bench` runs fastbase with the Node flags of package.json's start script; a change to that
// script's shape once left the benchmarks unable to start. This reads them as the bench does.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
// @ts-expect-error: a plain ES module of the benchmarks, without type declarations
import { startNodeFlags } from '../../bench/start-flags.mjs'

t.test('the bench reads the Node flags npm start gives fastbase', async (t) => {
  const start: string = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')).scripts.start
  const flags: string[] = startNodeFlags()
  t.ok(flags.length > 0, `flags: ${flags.join(' ')}`)
  for (const flag of flags) {
    t.match(flag, /^--[\w-]+(=\S+)?$/, `${flag} is a Node flag`)
    t.ok(start.includes(`${flag} `), `${flag} is in the start script`)
  }
})
