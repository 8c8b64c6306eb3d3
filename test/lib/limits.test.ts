// lib/limits.ts and the value bounds in lib/values.ts: pure logic, asserted directly.
import t from 'tap'
import { resolveLimits, rowsFor, lingerBytes, DEFAULT_LIMITS } from '../../lib/limits.js'
import { jsonText, numberInput, ValueError, MAX_JSON_DEPTH } from '../../lib/values.js'

t.test('limits: defaults, legacy keys, the limits section wins', async (t) => {
  t.same(resolveLimits({}), DEFAULT_LIMITS)
  t.match(resolveLimits({ maxLimit: 50, maxUploadSize: 7 }), { maxLimit: 50, uploadSize: 7, columns: 100 })
  t.match(resolveLimits({ maxLimit: 50, limits: { maxLimit: 20, cells: 10 } }), { maxLimit: 20, cells: 10 })
})

t.test('lingering after an early answer: bytes follow the upload limits, time is configurable', async (t) => {
  t.equal(lingerBytes(DEFAULT_LIMITS), 10 * 10 * 1024 * 1024 + 2 * 1024 * 1024, '10 files of 10 MiB, and the body limit twice: 102 MiB')
  t.equal(lingerBytes(resolveLimits({ maxUploadSize: 100, limits: { files: 3, bodySize: 10 } })), 320, 'a smaller upload limit lingers less')
  t.equal(DEFAULT_LIMITS.lingerTime, 30_000)
  t.equal(resolveLimits({ limits: { lingerTime: 1000 } }).lingerTime, 1000)
})

t.test('rows per answer', async (t) => {
  const limits = resolveLimits({ limits: { cells: 100 } })
  t.equal(rowsFor(limits, 3), 33)
  t.equal(rowsFor(limits, 100), 1)
  t.equal(rowsFor(limits, 1000), 1, 'at least one row')
  t.equal(rowsFor(limits, 0), 100)
})

t.test('json values: any JSON, nested at most 64 levels', async (t) => {
  t.equal(jsonText({ a: [1, '[[[['] }), '{"a":[1,"[[[["]}', 'brackets inside strings do not count')
  t.equal(jsonText('{"a":1}'), '{"a":1}', 'JSON text is parsed')
  t.equal(jsonText('"\\\\"'), '"\\\\"', 'escaped backslash before a closing quote')
  const nested = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n))
  t.equal(jsonText(nested(MAX_JSON_DEPTH)).length, MAX_JSON_DEPTH * 2)
  t.throws(() => jsonText(nested(MAX_JSON_DEPTH + 1)), ValueError)
  t.throws(() => jsonText(nested(100_000)), ValueError, 'too deep for JSON.stringify: still a ValueError')
})

t.test('number columns take numbers and numeric text only', async (t) => {
  t.equal(numberInput(5), 5)
  t.equal(numberInput('5'), 5)
  t.equal(numberInput(' -1.5e3 '), -1500)
  for (const bad of ['abc', '', '0x10', true, null, {}]) t.throws(() => numberInput(bad), ValueError, JSON.stringify(bad))
})
