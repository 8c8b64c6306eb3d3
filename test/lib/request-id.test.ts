// lib/request-id.ts without a server: the ids it makes are version 4 UUIDs, unique across its batches
// of random bytes, and an incoming id is kept only when it is a short plain token. What the answers
// carry is tested through the app in test/app/request-id.test.ts.
import t from 'tap'
import { randomRequestId, requestIdFrom, MAX_REQUEST_ID_LENGTH } from '../../lib/request-id.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('random ids are version 4 UUIDs, none repeated across many batches', async (t) => {
  const seen = new Set<string>()
  // Several times the batch size, so that ids of consecutive batches meet.
  for (let i = 0; i < 5000; i++) {
    const id = randomRequestId()
    if (!UUID_V4.test(id)) t.fail(`not a version 4 UUID: ${id}`)
    seen.add(id)
  }
  t.equal(seen.size, 5000, 'every id differs')
})

t.test('every hex digit of the random part varies: the bytes are random, not a fixed pattern', async (t) => {
  const digitsSeen = Array.from({ length: 36 }, () => new Set<string>())
  for (let i = 0; i < 2000; i++) {
    const id = randomRequestId()
    for (let at = 0; at < id.length; at++) digitsSeen[at].add(id[at])
  }
  const fixed = [8, 13, 14, 18, 23]
  for (let at = 0; at < 36; at++) {
    if (at === 19) t.same([...digitsSeen[at]].sort(), ['8', '9', 'a', 'b'], 'the variant digit takes its four values')
    else if (fixed.includes(at)) t.equal(digitsSeen[at].size, 1, `position ${at} is fixed (a dash or the version)`)
    else t.equal(digitsSeen[at].size, 16, `position ${at} takes all 16 digits`)
  }
})

t.test('an incoming id is kept only when it is one short plain token', async (t) => {
  t.equal(requestIdFrom('lb-7:abc.def+1'), 'lb-7:abc.def+1')
  t.equal(requestIdFrom('a'.repeat(MAX_REQUEST_ID_LENGTH)), 'a'.repeat(MAX_REQUEST_ID_LENGTH))
  for (const header of ['a'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'two words', '', ['a', 'b'], undefined]) {
    t.match(requestIdFrom(header), UUID_V4, `replaced: ${JSON.stringify(header)?.slice(0, 20)}`)
  }
})
