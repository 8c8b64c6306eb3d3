// TOTP (lib/auth/mfa/totp.ts) against RFC 6238's Appendix B vectors, and the test's own generator
// (test/fixtures/totp.ts) against the same vectors, so the end-to-end MFA tests' codes are the RFC's.
import t from 'tap'
import { base32Decode, base32Encode, matchTotp, newTotpSecret, otpauthUri, totpAt, totpStep } from '../../../../lib/auth/mfa/totp.js'
import { RFC_SEEDS, RFC_VECTORS, fromBase32, generateTotp } from '../../../fixtures/totp.js'

t.test('RFC 6238 Appendix B', async (t) => {
  for (const [time, code, hash] of RFC_VECTORS) {
    t.equal(totpAt(RFC_SEEDS[hash], totpStep(time), { digits: 8, period: 30, algorithm: hash }), code, `lib: ${hash} at ${time}`)
    t.equal(generateTotp(RFC_SEEDS[hash], time, 8, hash), code, `test generator: ${hash} at ${time}`)
  }
})

t.test('base32 (RFC 4648)', async (t) => {
  t.equal(base32Encode(Buffer.from('foobar')), 'MZXW6YTBOI', 'the RFC 4648 section 10 vector, unpadded')
  t.same(base32Decode('MZXW6YTBOI======'), Buffer.from('foobar'))
  const secret = newTotpSecret()
  t.match(secret, /^[A-Z2-7]{32}$/, '160 random bits')
  t.same(base32Decode(secret), fromBase32(secret), 'decoded as the test generator decodes it')
  t.throws(() => base32Decode('not base32!'))
})

t.test('codes within one step of drift, never a step twice', async (t) => {
  const secret = newTotpSecret()
  const key = fromBase32(secret)
  const now = 1_700_000_015
  const step = totpStep(now)
  const at = (offset: number) => generateTotp(key, now + offset * 30)
  t.equal(matchTotp(secret, at(0), now, null), step, 'the current code')
  t.equal(matchTotp(secret, at(-1), now, null), step - 1, 'the previous step (a slow clock)')
  t.equal(matchTotp(secret, at(1), now, null), step + 1, 'the next step (a fast clock)')
  t.equal(matchTotp(secret, at(-2), now, null), undefined, 'two steps back: refused')
  t.equal(matchTotp(secret, at(2), now, null), undefined, 'two steps ahead: refused')
  t.equal(matchTotp(secret, at(0), now, step), undefined, 'the step already used: refused (no replay)')
  t.equal(matchTotp(secret, at(-1), now, step), undefined, 'an older step after a newer was used: refused')
  t.equal(matchTotp(secret, at(1), now, step), step + 1, 'a later step after the current was used')
  for (const bad of ['', '12345', '1234567', 'abcdef', ' 123456', '１２３４５６']) t.equal(matchTotp(secret, bad, now, null), undefined, `malformed ${JSON.stringify(bad)}`)
})

t.test('otpauth URI', async (t) => {
  const uri = new URL(otpauthUri('JBSWY3DPEHPK3PXP', 'Acme Co', 'ada@example.com'))
  t.equal(uri.protocol, 'otpauth:')
  t.equal(uri.host, 'totp')
  t.equal(decodeURIComponent(uri.pathname), '/Acme Co:ada@example.com', 'label: issuer and account')
  t.equal(uri.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP')
  t.equal(uri.searchParams.get('issuer'), 'Acme Co')
  t.equal(uri.searchParams.get('digits'), '6')
  t.equal(uri.searchParams.get('period'), '30')
})
