// bench/allocations.mjs (decision D133) runs, and measures: a short run of the view scenario answers
// a figure per request within reason, with its owners listed (the built package, as `npm run bench`).
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

t.test('bench/allocations.mjs measures bytes per request', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'bench', 'allocations.mjs'), '--requests', '400', '--only', 'view', '--top', '3'], { cwd: root, timeout: 120_000 })
  const figure = /items-view:\s+(\d+) bytes allocated per request \(400 requests/.exec(stdout)
  t.ok(figure, stdout)
  const bytes = Number(figure?.[1])
  t.ok(bytes > 2_000 && bytes < 200_000, `${bytes} bytes per view: a request's objects, not nothing and not a leak`)
  t.match(stdout, /node http/, 'Node\'s HTTP objects are among the owners')
  t.match(stdout, /sites:/, 'the allocation sites follow')
})
