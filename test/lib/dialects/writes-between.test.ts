// Dialect#writesBetween (decision D132): the writes that moved one data version to another, when
// every one of them is known. Pure functions of the versions and the known spans.
import t from 'tap'
import { dialectFor } from '../../../lib/dialects/index.js'
import type { WriteSpan } from '../../../lib/dialects/types.js'

const knownFrom = (spans: Record<string, WriteSpan>) => (id: string): WriteSpan | undefined => spans[id]

t.test('SQLite: a chain of spans from one changes count to the other, the other counters unchanged', async (t) => {
  const between = dialectFor('sqlite').writesBetween!
  // Versions are epoch:changes:data_version:schema_version; spans name epoch:changes.
  const known = knownFrom({ 'e:1': { id: 'e:1', after: 'e:2' }, 'e:2': { id: 'e:2', after: 'e:5' } })
  t.same(between('e:1:2:3', 'e:1:2:3', known, 10), [], 'the same version: no write')
  t.same(between('e:1:2:3', 'e:2:2:3', known, 10), ['e:1'], 'one write')
  t.same(between('e:1:2:3', 'e:5:2:3', known, 10), ['e:1', 'e:2'], 'two writes, in order')
  t.equal(between('e:1:2:3', 'e:5:2:3', known, 1), undefined, 'more than the limit')
  t.equal(between('e:1:2:3', 'e:6:2:3', known, 10), undefined, 'a write nobody knows after the known ones')
  t.equal(between('e:1:2:3', 'e:5:3:3', known, 10), undefined, 'another connection committed (data_version moved)')
  t.equal(between('e:1:2:3', 'e:5:2:4', known, 10), undefined, 'the schema changed')
  t.equal(between('e:1:2:3', 'f:5:2:3', known, 10), undefined, 'another writer connection')
  t.equal(between('e:0:2:3', 'e:2:2:3', known, 10), undefined, 'an unknown write first')
  t.equal(between('junk', 'e:2:2:3', known, 10), undefined, 'not a version')
})

t.test('PostgreSQL: the transactions completed between two snapshots, all known', async (t) => {
  const between = dialectFor('postgres').writesBetween!
  const known = knownFrom({ 100: { id: '100' }, 101: { id: '101' }, 95: { id: '95' } })
  t.same(between('90:100:', '90:100:', known, 10), [], 'the same snapshot')
  t.same(between('90:100:', '90:101:', known, 10), ['100'], 'one started and completed since')
  t.same(between('90:100:', '90:102:', known, 10), ['100', '101'], 'two')
  t.same(between('90:100:95', '90:101:', known, 10), ['95', '100'], 'one running at the first, completed since, and a new one')
  t.same(between('90:100:', '90:102:101', known, 10), ['100'], 'one still running at the second is not a write between them')
  t.equal(between('90:100:', '90:103:', known, 10), undefined, 'an unknown transaction (102) completed')
  t.equal(between('90:100:97', '90:101:', known, 10), undefined, 'an unknown one running at the first completed')
  t.equal(between('90:100:', '90:102:', known, 1), undefined, 'more than the limit')
  t.equal(between('90:100:', '90:100000000:', known, 64), undefined, 'far more than the limit: refused without walking them')
  t.equal(between('90:101:', '90:100:', known, 10), undefined, 'backwards')
  t.equal(between('junk', '90:100:', known, 10), undefined, 'not a snapshot')
})
