// Password hashing (decision D11): scrypt, memory-hard, self-describing so the cost can be raised
// later without a migration; teenybase's salted sha256 still verifies and is flagged for rehash.
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** Current cost. Raising any of these makes older hashes report `needsRehash` on the next login. */
const CURRENT = { N: 16384, r: 8, p: 1, keyLength: 64, saltLength: 16 }

// Bounds on parameters read back from a stored string: a corrupted or hostile row must not make a
// login allocate gigabytes (scrypt needs about 128 * N * r bytes).
const MAX_N_TIMES_R = 2 ** 21
const MAX_P = 16
const MIN_SALT_LENGTH = 8

const LEGACY_SHA256 = /^[0-9a-f]{64}$/i

interface ScryptParams { N: number, r: number, p: number }
interface ParsedHash extends ScryptParams { salt: Buffer, hash: Buffer }

export interface VerifyResult {
  ok: boolean
  /** The password was right but the stored hash is weaker than the current format: store a new one. */
  needsRehash: boolean
}

function scrypt (password: string, salt: Buffer, keyLength: number, params: ScryptParams): Promise<Buffer> {
  // maxmem must cover 128 * N * r; twice that leaves room for Node's own bookkeeping.
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 }
  return new Promise((resolve, reject) => {
    scryptCb(password, salt, keyLength, options, (err, key) => err ? reject(err) : resolve(key))
  })
}

// NFC so that the same password typed on systems that compose accents differently still matches
// (teenybase normalises the same way).
const normalize = (password: string): string => password.normalize('NFC')

/** `scrypt$16384$8$1$<salt base64url>$<hash base64url>` with a fresh random salt. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(CURRENT.saltLength)
  const hash = await scrypt(normalize(password), salt, CURRENT.keyLength, CURRENT)
  return ['scrypt', CURRENT.N, CURRENT.r, CURRENT.p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

function parseInteger (s: string | undefined): number | undefined {
  return s !== undefined && /^[1-9][0-9]{0,9}$/.test(s) ? Number(s) : undefined
}

const isPowerOfTwo = (n: number): boolean => n > 1 && (n & (n - 1)) === 0

/** The parts of a scrypt string, or undefined when it is malformed or out of bounds. */
function parseScrypt (stored: string): ParsedHash | undefined {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined
  const [N, r, p] = parts.slice(1, 4).map(parseInteger)
  if (N === undefined || r === undefined || p === undefined) return undefined
  if (!isPowerOfTwo(N) || N * r > MAX_N_TIMES_R || p > MAX_P) return undefined
  const b64url = /^[A-Za-z0-9_-]+$/
  const [, , , , salt64, hash64] = parts
  if (!b64url.test(salt64) || !b64url.test(hash64)) return undefined
  const salt = Buffer.from(salt64, 'base64url')
  const hash = Buffer.from(hash64, 'base64url')
  // The key length is fixed rather than read back: a shorter scrypt output is a prefix of the
  // longer one, so accepting any length would let a truncated hash verify.
  if (salt.length < MIN_SALT_LENGTH || hash.length !== CURRENT.keyLength) return undefined
  return { N, r, p, salt, hash }
}

function isBelowCurrent (h: ParsedHash): boolean {
  return h.N < CURRENT.N || h.r < CURRENT.r || h.p < CURRENT.p || h.salt.length < CURRENT.saltLength
}

async function verifyScrypt (password: string, h: ParsedHash): Promise<VerifyResult> {
  const candidate = await scrypt(normalize(password), h.salt, CURRENT.keyLength, h)
  const ok = timingSafeEqual(candidate, h.hash)
  return { ok, needsRehash: ok && isBelowCurrent(h) }
}

/** teenybase: lowercase hex sha256 of NFC(password + salt). */
function verifyLegacy (password: string, stored: string, legacySalt: string): VerifyResult {
  const candidate = createHash('sha256').update(normalize(password + legacySalt), 'utf8').digest()
  const ok = timingSafeEqual(candidate, Buffer.from(stored, 'hex'))
  return { ok, needsRehash: ok }
}

const DUMMY_SALT = randomBytes(CURRENT.saltLength)

/** Spends about what a real verification costs, so a missing account looks like a wrong password. */
async function burnTime (password: string): Promise<VerifyResult> {
  await scrypt(normalize(password), DUMMY_SALT, CURRENT.keyLength, CURRENT)
  return { ok: false, needsRehash: false }
}

/**
 * Checks `password` against a stored scrypt string or a teenybase legacy sha256 hex hash (with the
 * row's `auth_password_salt`, if any). A missing or unrecognised hash is a constant-time failure.
 */
export async function verifyPassword (password: string, stored: unknown, legacySalt?: unknown): Promise<VerifyResult> {
  if (typeof password !== 'string' || typeof stored !== 'string') return burnTime(String(password ?? ''))
  // `stored` and the salt are read from a row as they are: anything but a string hash is no hash.
  if (LEGACY_SHA256.test(stored)) return verifyLegacy(password, stored, String(legacySalt ?? ''))
  const parsed = parseScrypt(stored)
  if (parsed === undefined) return burnTime(password)
  return verifyScrypt(password, parsed)
}

export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 255

/** The teenybase (zod) message for an unacceptable password, or undefined when it is fine. */
export function validatePassword (password: unknown, name = 'password'): string | undefined {
  // teenybase's wording, which its clients show as they are.
  if (password === undefined || password === null || password === '') return `${name} is required`
  if (typeof password !== 'string') return `${name} must be a string`
  if (password.length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters long`
  if (password.length > PASSWORD_MAX_LENGTH) return `Password must be less than ${PASSWORD_MAX_LENGTH} characters long`
  return undefined
}
