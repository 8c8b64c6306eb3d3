// One Buffer per file content (lib/shared-bodies.ts): the same bytes under the same ETag come back as
// the Buffer first held; other bytes under that ETag (two packed files of one size) are held apart;
// an answer without an ETag is never held.
import t from 'tap'
import { SharedBodies } from '../../lib/shared-bodies.js'

t.test('the same bytes under the same tag share the first Buffer', async (t) => {
  const bodies = new SharedBodies()
  const first = Buffer.from('file one')
  t.equal(bodies.of('W/"8-1"', first), first)
  const again = Buffer.from('file one')
  t.equal(bodies.of('W/"8-1"', again), first, 'a later answer sends the Buffer already held')
})

t.test('other bytes under the same tag are never mistaken for it', async (t) => {
  const bodies = new SharedBodies()
  const one = Buffer.from('file one')
  const two = Buffer.from('file two')
  bodies.of('W/"8-1"', one)
  t.equal(bodies.of('W/"8-1"', two), two, 'the second file keeps its own bytes')
  t.equal(bodies.of('W/"8-1"', Buffer.from('file two')), two)
  t.equal(bodies.of('W/"8-1"', Buffer.from('file one')), one)
  t.equal(bodies.of('W/"8-2"', Buffer.from('file one')).toString(), 'file one')
})

t.test('without a tag the body is sent as it is and not held', async (t) => {
  const bodies = new SharedBodies()
  const body = Buffer.from('generated')
  t.equal(bodies.of(undefined, body), body)
  const other = Buffer.from('generated')
  t.equal(bodies.of(undefined, other), other, 'nothing was held to share')
})
