// `npm run bench -- --items-only --pairs N` (bench/items.mjs#pairsSummary): the median and range of
// each figure over the pairs, per scenario, whatever order the pairs' results come in.
import t from 'tap'
// @ts-expect-error: the bench is plain JavaScript, without types
import { heapLevelOf, pairsReport, pairsSummary, pinApart, unpin } from '../../bench/items.mjs'
import { availableParallelism, cpus } from 'node:os'

const run = (ratios: Record<string, number>) => ({
  results: Object.entries(ratios).map(([scenario, ratio]) => ({
    scenario,
    ratio: { reqPerSec: ratio, p99: 2 - ratio, cpu: 1 / ratio },
    fastbase: { cpuMicrosPerRequest: 30 / ratio },
    ceiling: { cpuMicrosPerRequest: 30 }
  }))
})

t.test('median and range per scenario', async (t) => {
  const summary = pairsSummary([run({ 'items-view': 0.9, 'items-edit': 0.8 }), run({ 'items-view': 1.1, 'items-edit': 0.7 }), run({ 'items-view': 1.0, 'items-edit': 0.95 })])
  t.same(summary.map((s: { scenario: string }) => s.scenario), ['items-view', 'items-edit'], 'in the order the set ran them')
  const [view, edit] = summary
  t.equal(view.pairs, 3)
  t.same(view.reqPerSec, { median: 1.0, min: 0.9, max: 1.1 })
  t.same(edit.reqPerSec, { median: 0.8, min: 0.7, max: 0.95 })
  t.equal(edit.p99.median, 1.2)
  t.equal(view.fastbaseCpu.median, 30)
  t.same(view.ceilingCpu, { median: 30, min: 30, max: 30 })
})

t.test('an even number of pairs takes the middle two', async (t) => {
  const [view] = pairsSummary([run({ 'items-view': 0.8 }), run({ 'items-view': 1.0 }), run({ 'items-view': 0.9 }), run({ 'items-view': 1.2 })])
  t.equal(view.reqPerSec.median.toFixed(2), '0.95')
  t.match(pairsReport('sqlite', [view]), /items-view\s+0\.95 \(0\.80–1\.20\)/, 'the report shows the median and the range')
  t.match(pairsReport('sqlite', [view]), /4 pairs of fresh processes/)
})

// Each pair pins its servers and the load apart, then lets the load's process run everywhere again
// (bench/items.mjs#unpin): on every CPU of the machine, not only the one it was pinned to, or the
// next pair (and whatever a full run measures after the set) would run on one CPU, unpinned.
t.test('after a pinned pair the bench process may run on every CPU again', async (t) => {
  const placed = pinApart([], true)
  if (cpus().length < 2) {
    t.equal(placed, false, 'one CPU: nothing to pin apart')
    return
  }
  t.equal(placed, 'servers on CPU 0, the load on CPU 1')
  t.equal(availableParallelism(), 1, 'pinned to one CPU while measuring')
  unpin(placed)
  t.equal(availableParallelism(), cpus().length, 'every CPU again')
  t.equal(pinApart([], true), placed, 'so the next pair pins too')
  unpin(placed)
  t.equal(availableParallelism(), cpus().length)
})

// The heap check (bench/items.mjs#heapLevelOf) reads the level after full collections where a run had
// two or more: between them, what scavenges promoted is garbage only the next full collection frees.
t.test('the heap level is read after full collections where there are two', async (t) => {
  const MiB = 1024 * 1024
  const scavenge = (mib: number) => ({ kind: 'Scavenge', after: mib * MiB })
  const full = (mib: number) => ({ kind: 'Mark-Compact', after: mib * MiB })
  // PostgreSQL-like: promoted garbage piles up between full collections, which each bring it back to 25.
  const swinging = heapLevelOf([scavenge(26), full(25), scavenge(30), scavenge(35), full(25), scavenge(31), scavenge(37)], 1000)
  t.equal(swinging.levelFrom, 'full collections')
  t.equal(swinging.retainedBytesPerRequest, 0, 'nothing kept: the last full collection left what the first did')
  t.equal(swinging.fullCollections, 2)
  t.equal(swinging.promotedBytesPerRequest, (5 + 6) * MiB / 1000, 'promoted between consecutive scavenges')
  const leaking = heapLevelOf([full(25), scavenge(27), full(26), scavenge(28), full(27)], 1024)
  t.equal(leaking.retainedBytesPerRequest, 2 * MiB / 1024, 'a heap that grows across full collections is kept')
  // SQLite-like: no full collection, the scavenges' level.
  const level = heapLevelOf([scavenge(23), scavenge(23.5), scavenge(23)], 100)
  t.equal(level.levelFrom, 'collections')
  t.equal(level.retainedBytesPerRequest, 0)
  t.equal(heapLevelOf([scavenge(23), full(22), scavenge(24)], 100).levelFrom, 'collections', 'one full collection: the scavenges still')
})
