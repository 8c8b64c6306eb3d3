// PostgreSQL's bound on long reads at once (lib/dialects/read-gate.ts): never more than its slots run,
// waiting reads start in arrival order as slots free up, a failed read frees its slot, and past the
// queue a read is refused as busy (a 503, as SQLite's full reader queue).
import t from 'tap'
import { ReadGate, READS_BUSY } from '../../../lib/dialects/read-gate.js'
import { postgres } from '../../../lib/dialects/postgres.js'
import { databaseError } from '../../../lib/crud/db-errors.js'

function deferred () {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

t.test('at most `slots` at once, the rest in arrival order', async (t) => {
  const gate = new ReadGate(2, 10)
  const reads = Array.from({ length: 5 }, () => deferred())
  const started: number[] = []
  let running = 0
  let most = 0
  const results = reads.map((d, i) => gate.run(async () => {
    started.push(i)
    most = Math.max(most, ++running)
    try { await d.promise } finally { running-- }
    return i
  }))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(started, [0, 1], 'two start, three wait')
  reads[1].resolve()
  await results[1]
  await new Promise((resolve) => setImmediate(resolve))
  t.same(started, [0, 1, 2], 'a freed slot goes to the first waiting')
  reads[0].reject(new Error('failed'))
  await t.rejects(results[0], /failed/)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(started, [0, 1, 2, 3], 'a failed read frees its slot too')
  reads[2].resolve(); reads[3].resolve(); reads[4].resolve()
  t.same(await Promise.all(results.slice(1)), [1, 2, 3, 4])
  t.equal(most, 2, 'never more than two at once')
  t.equal(await gate.run(async () => 'again'), 'again', 'every slot is free again')
})

t.test('past the queue a read is refused as busy', async (t) => {
  const gate = new ReadGate(1, 2)
  const hold = deferred()
  const running = gate.run(async () => { await hold.promise })
  const waiting = [gate.run(async () => 'w1'), gate.run(async () => 'w2')]
  let ran = false
  await t.rejects(gate.run(async () => { ran = true }), { code: READS_BUSY }, 'the fourth: one runs, two wait')
  t.equal(ran, false, 'the refused read never ran')
  hold.resolve()
  await running
  t.same(await Promise.all(waiting), ['w1', 'w2'], 'the waiting ones still run')
})

t.test('PostgreSQL reads a refusal as busy: 503 FB_ERR_DATABASE_BUSY', async (t) => {
  const refused = Object.assign(new Error('x'), { code: READS_BUSY })
  t.equal(postgres.isBusy(refused), true)
  t.match(databaseError(postgres, refused), { statusCode: 503, code: 'FB_ERR_DATABASE_BUSY' })
})
