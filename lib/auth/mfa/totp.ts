// Time-based one-time passwords (RFC 6238, on HOTP: RFC 4226), written from the RFCs: an HMAC of the
// 30-second step counter, dynamically truncated to 6 digits. node:crypto has the HMAC; the rest is
// a dozen lines, less than a dependency would bring (decision D114).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512'

export interface TotpSettings { digits: number, period: number, algorithm: TotpAlgorithm }

/** What authenticator apps assume when an otpauth:// URI says nothing else (and all most of them support). */
export const TOTP_DEFAULTS: TotpSettings = { digits: 6, period: 30, algorithm: 'sha1' }

/** Steps either side of the current one a code may come from: one step of clock drift. */
export const TOTP_DRIFT = 1

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32 without padding (what otpauth:// URIs carry). */
export function base32Encode (bytes: Uint8Array): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

export function base32Decode (text: string): Buffer {
  const clean = text.replace(/=+$/, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const char of clean) {
    const index = BASE32.indexOf(char)
    if (index < 0) throw new Error('not base32')
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** A new secret: 160 bits, the HMAC-SHA1 block the RFC recommends, base32. */
export function newTotpSecret (): string {
  return base32Encode(randomBytes(20))
}

/** HOTP (RFC 4226 section 5.3): HMAC of the 8-byte counter, dynamic truncation, `digits` decimal digits. */
export function hotp (key: Buffer, counter: number, digits: number, algorithm: TotpAlgorithm = 'sha1'): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac(algorithm, key).update(message).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return String(binary % 10 ** digits).padStart(digits, '0')
}

/** The step a Unix time (seconds) falls in. */
export const totpStep = (unixSeconds: number, period = TOTP_DEFAULTS.period): number => Math.floor(unixSeconds / period)

/** The code of a step (RFC 6238 section 4.2: T = floor((time - T0) / X), T0 = 0). */
export function totpAt (key: Buffer, step: number, settings: TotpSettings = TOTP_DEFAULTS): string {
  return hotp(key, step, settings.digits, settings.algorithm)
}

/**
 * The step whose code `code` is, within one step of `now` and after `lastStep` (a step used once is
 * never accepted again: no replay), or undefined. Every candidate is compared, in constant time.
 */
export function matchTotp (secret: string, code: string, unixSeconds: number, lastStep: number | null): number | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined
  const key = base32Decode(secret)
  const now = totpStep(unixSeconds)
  let matched: number | undefined
  for (let step = now - TOTP_DRIFT; step <= now + TOTP_DRIFT; step++) {
    const equal = timingSafeEqual(Buffer.from(totpAt(key, step)), Buffer.from(code))
    if (equal && matched === undefined && (lastStep === null || step > lastStep)) matched = step
  }
  return matched
}

/** The URI authenticator apps read (usually from a QR code): `otpauth://totp/<issuer>:<account>?secret=...`. */
export function otpauthUri (secret: string, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(TOTP_DEFAULTS.digits), period: String(TOTP_DEFAULTS.period) })
  return `otpauth://totp/${label}?${query.toString()}`
}
