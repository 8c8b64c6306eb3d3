// The ring of a connection's last lone writes (decision D141): what a total may be carried across.
// Pure: spans made by hand, looked up by id as the dialects' writesBetween does.
import t from 'tap'
import { LoneWrites } from '../../../lib/crud/lone-writes.js'
import { ChangesSpan, writesBetween } from '../../../lib/dialects/sqlite-versions.js'

const span = (n: number): ChangesSpan => new ChangesSpan('e', n, n + 1)

t.test('a remembered write is found by its span id, with its table and keys or columns', async (t) => {
  const writes = new LoneWrites(4)
  writes.inserted(span(1), 'items', [7])
  writes.updated(span(2), 'items', new Set(['n']))
  const inserted = writes.find('e:1')
  t.same(inserted?.keys, [7])
  t.equal(inserted?.assigned, undefined)
  t.equal(inserted?.table, 'items')
  t.same([...(writes.find('e:2')?.assigned ?? [])], ['n'])
  t.equal(writes.find('e:2')?.keys, undefined)
  t.equal(writes.find('e:3'), undefined, 'a write never added is unknown')
})

t.test('only the last `size` writes are remembered, whether or not anything was looked up between', async (t) => {
  const looked = new LoneWrites(3)
  const unlooked = new LoneWrites(3)
  for (let n = 1; n <= 10; n++) {
    looked.inserted(span(n), 'items', [n])
    unlooked.inserted(span(n), 'items', [n])
    t.ok(looked.find(`e:${n}`), `write ${n} is found right after it`)
  }
  for (const writes of [looked, unlooked]) {
    t.same([8, 9, 10].map((n) => writes.find(`e:${n}`)?.keys), [[8], [9], [10]], 'the last three are found')
    t.same([1, 5, 7].map((n) => writes.find(`e:${n}`)), [undefined, undefined, undefined], 'older ones are forgotten')
  }
  // Two more after a look-up: the index drops exactly the ones overwritten.
  looked.inserted(span(11), 'items', [11])
  looked.inserted(span(12), 'items', [12])
  t.equal(looked.find('e:9'), undefined)
  t.equal(looked.find('e:10')?.number, 9)
  t.equal(looked.find('e:12')?.number, 11)
})

t.test('a span id met again names the later write', async (t) => {
  const writes = new LoneWrites(3)
  writes.inserted(span(1), 'items', [1])
  writes.inserted(span(1), 'other', [2])
  t.equal(writes.find('e:1')?.table, 'other')
  // And it is forgotten with that later write, not with the first.
  writes.inserted(span(2), 'items', [3])
  writes.inserted(span(3), 'items', [4])
  t.equal(writes.find('e:1')?.table, 'other')
  writes.inserted(span(4), 'items', [5])
  t.equal(writes.find('e:1'), undefined)
})

t.test('SQLite spans name epoch:count when read, and chain through writesBetween', async (t) => {
  const first = new ChangesSpan('ab12', 4, 5)
  t.equal(first.id, 'ab12:4')
  t.equal(first.after, 'ab12:5')
  const writes = new LoneWrites(8)
  writes.inserted(first, 'items', [1])
  writes.updated(new ChangesSpan('ab12', 5, 7), 'items', new Set(['n']))
  const known = (id: string) => writes.find(id)?.span
  t.same(writesBetween('ab12:4:1:1', 'ab12:7:1:1', known, 10), ['ab12:4', 'ab12:5'])
  t.equal(writesBetween('ab12:4:1:1', 'ab12:8:1:1', known, 10), undefined, 'a write nobody reported breaks the chain')
  t.equal(writesBetween('ab12:4:1:1', 'ab12:7:1:1', known, 1), undefined, 'past the limit')
})
