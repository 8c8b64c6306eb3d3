// npm start gives back V8's young generation once the server is quiet (decision D144): the trim's
// decisions with a probe the test drives, then the real probe of this process.
import t from 'tap'
import { QUIET_SECONDS, YoungGenerationTrim, processProbe, type YoungGenerationProbe } from '../../../lib/cli/young-generation.js'

const MiB = 1024 * 1024

/** A probe whose business and young generation the test sets; a collection shrinks to `shrinksTo` when set. */
function fakeProbe () {
  const state = { busy: false, young: 32 * MiB, shrinksTo: 1 * MiB as number | undefined, collections: 0 }
  const probe: YoungGenerationProbe = {
    busy: () => state.busy,
    youngBytes: () => state.young,
    collect: () => {
      state.collections++
      if (state.shrinksTo !== undefined) state.young = Math.min(state.young, state.shrinksTo)
    }
  }
  return { state, probe }
}

const ticks = (trim: YoungGenerationTrim, n: number): boolean[] => Array.from({ length: n }, () => trim.tick())

t.test('a quiet server collects once, after QUIET_SECONDS of quiet, and then leaves it be', async (t) => {
  const { state, probe } = fakeProbe()
  const trim = new YoungGenerationTrim(probe)
  t.same(ticks(trim, QUIET_SECONDS - 1), Array(QUIET_SECONDS - 1).fill(false), 'nothing before the quiet seconds are up')
  t.equal(state.collections, 0)
  t.equal(trim.tick(), true, 'collects on the last quiet second')
  t.equal(state.young, 1 * MiB)
  ticks(trim, QUIET_SECONDS * 20)
  t.equal(state.collections, 1, 'a young generation at the size the collection left is not collected again')
})

t.test('a busy second starts the quiet over; a busy server is never collected', async (t) => {
  const { state, probe } = fakeProbe()
  const trim = new YoungGenerationTrim(probe)
  ticks(trim, QUIET_SECONDS - 1)
  state.busy = true
  ticks(trim, 100)
  t.equal(state.collections, 0, 'never while busy')
  state.busy = false
  t.same(ticks(trim, QUIET_SECONDS - 1).includes(true), false, 'the quiet counts from the last busy second')
  t.equal(trim.tick(), true)
})

t.test('load grows the young generation again: the next quiet gives it back again', async (t) => {
  const { state, probe } = fakeProbe()
  const trim = new YoungGenerationTrim(probe)
  ticks(trim, QUIET_SECONDS)
  t.equal(state.collections, 1)
  state.busy = true
  state.young = 32 * MiB
  ticks(trim, 10)
  state.busy = false
  ticks(trim, QUIET_SECONDS)
  t.equal(state.collections, 2)
  t.equal(state.young, 1 * MiB)
})

t.test('a collection that gives nothing back doubles the wait before the next', async (t) => {
  const { state, probe } = fakeProbe()
  state.shrinksTo = undefined
  const trim = new YoungGenerationTrim(probe)
  const at: number[] = []
  for (let second = 1; second <= QUIET_SECONDS * 15; second++) if (trim.tick()) at.push(second)
  t.same(at, [QUIET_SECONDS, QUIET_SECONDS * 3, QUIET_SECONDS * 7, QUIET_SECONDS * 15], 'after 1, 2, 4, 8 quiet periods')
  state.shrinksTo = 1 * MiB
  for (let i = 0; i < QUIET_SECONDS * 16 && state.young > 1 * MiB; i++) trim.tick()
  t.equal(state.young, 1 * MiB, 'and still gives it back once V8 does')
})

t.test('the process probe: the event loop, the new space, a full collection with no global gc', async (t) => {
  const probe = processProbe()
  const young = probe.youngBytes()
  t.ok(young > 0, `the new space has a size (${young} bytes)`)
  const end = performance.now() + 300
  while (performance.now() < end) { /* the event loop stays busy */ }
  t.equal(probe.busy(), true, 'a second spent running code is busy')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(probe.busy(), false, 'a second spent waiting is quiet')
  probe.collect()
  t.ok(probe.youngBytes() > 0)
  t.equal((globalThis as { gc?: unknown }).gc, undefined, 'the process global gets no gc function')
})
