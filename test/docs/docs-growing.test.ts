// docs/running.md's "Growing" steps: each names the test that carries it out, and each named test
// exists.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const page = readFileSync(join(root, 'docs', 'running.md'), 'utf8')
const section = page.slice(page.indexOf('## Growing: from a laptop to a fleet'))
const steps = section.split(/^### /m).slice(1).map((text) => ({ title: text.slice(0, text.indexOf('\n')), text }))

t.test('every step of growing names an existing test', async (t) => {
  t.ok(steps.length >= 7, 'the steps are there')
  t.ok(steps.some((s) => s.title === 'Move the data'), 'moving the data is one of them')
  for (const { title, text } of steps) {
    const tests = [...text.matchAll(/`(test\/[\w./-]+\.test\.ts)`/g)].map((m) => m[1])
    t.ok(tests.length > 0, `${title}: names its test`)
    for (const file of tests) t.ok(existsSync(join(root, file)), `${title}: ${file} exists`)
  }
})
