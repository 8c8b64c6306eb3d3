// bench/segments.cjs times a server's requests where Node's own objects see them, and reports the
// totals when signalled (`npm run bench -- --items-only --segments`). A real server in a child
// process, loaded with it as the bench loads fastbase and the ceiling.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
// @ts-expect-error: a plain CommonJS module of the benchmarks, without type declarations
import segmentsFile from '../../bench/segments-file.cjs'

const timers = join(import.meta.dirname, '..', '..', 'bench', 'segments.cjs')

// Answers each body with its length, after a little work, so every segment takes some time.
const server = `
const http = require('node:http')
http.createServer((req, res) => {
  let n = 0
  req.on('data', (chunk) => { n += chunk.length })
  req.on('end', () => { const stop = performance.now() + 0.2; while (performance.now() < stop); res.end(JSON.stringify({ n })) })
}).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n') })
`

interface Totals { seq: number, requests: number, ms: Record<'head' | 'body' | 'write' | 'finish', number> }

t.test('a server loaded with the timers reports its segments per request when signalled', async (t) => {
  const child = spawn(process.execPath, ['-r', timers, '-e', server], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  const url = `http://127.0.0.1:${Number(chunk.toString().trim())}`
  const file: string = segmentsFile.segmentsFile(child.pid)
  rmSync(file, { force: true })
  t.teardown(() => { rmSync(file, { force: true }) })

  const report = async (after: number): Promise<Totals> => {
    child.kill('SIGWINCH')
    for (let i = 0; i < 500; i++) {
      if (existsSync(file)) {
        const totals = JSON.parse(readFileSync(file, 'utf8')) as Totals
        if (totals.seq > after) return totals
      }
      await sleep(10)
    }
    throw new Error('no report')
  }
  const first = await report(0)
  t.equal(first.requests, 0, 'nothing counted before a request')

  for (let i = 0; i < 5; i++) {
    const res = await fetch(url, { method: 'POST', body: 'x'.repeat(100) })
    t.same(await res.json(), { n: 100 })
  }
  const second = await report(first.seq)
  t.equal(second.requests, 5, 'five requests')
  t.ok(second.ms.body >= 5 * 0.2, `the handler's work is in body (${second.ms.body.toFixed(2)} ms)`)
  t.ok(second.ms.write > 0 && second.ms.write < second.ms.body, 'the answer\'s write, sent from body, is inside it')
  t.ok(second.ms.head > 0 && second.ms.finish > 0, 'head and finish timed')
  t.equal(child.exitCode, null, 'the signal leaves the server running')
})
