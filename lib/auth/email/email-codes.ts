// Email sign-in codes and links (decision D113): one live code per address and table, its link
// token stored as a sha256 (the row's key) and its code as an HMAC under the table's secret, so a
// copy of the database gives neither (6 digits hashed without a secret would fall to a million
// guesses offline). Attempts on a code are counted in its row: for the fleet, whatever instance is asked.
import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'
import type { Knex } from 'knex'
import { EMAIL_CODES } from '../stores/store-tables.js'
import { nowSeconds, sha256 } from '../stores/sessions.js'

export interface IssuedCode { code: string, token: string }

/** A code's HMAC when there is no row to compare with: the same work, so a missing code looks like a wrong one. */
const NO_CODE = Buffer.alloc(32)

export class EmailCodes {
  /** `keyOf(table)`: the secret the table's codes are hashed with. */
  constructor (private readonly db: Knex, private readonly keyOf: (table: string) => string) {}

  private digest (table: string, email: string, code: string): Buffer {
    return createHmac('sha256', this.keyOf(table)).update(`${email}\u0000${code}`).digest()
  }

  /** A new code and link token for `email` (normalised); any earlier one of the address stops working. */
  async issue (table: string, email: string, digits: number, ttlSeconds: number): Promise<IssuedCode> {
    const code = String(randomInt(0, 10 ** digits)).padStart(digits, '0')
    const token = randomBytes(32).toString('base64url')
    const now = nowSeconds()
    await this.db.transaction(async (trx) => {
      await trx(EMAIL_CODES).where({ table_name: table, email }).del()
      await trx(EMAIL_CODES).insert({ hash: sha256(token), table_name: table, email, code_hash: this.digest(table, email, code).toString('hex'), attempts: 0, created_at: now, expires_at: now + ttlSeconds })
    })
    return { code, token }
  }

  /**
   * Whether `code` is the live code of `email`; a right one is used up. Each call first spends an
   * attempt (one conditional update, so concurrent guesses on several instances are each counted),
   * and a code out of attempts is refused even when right.
   */
  async useCode (table: string, email: string, code: string, maxAttempts: number): Promise<boolean> {
    const row = await this.db(EMAIL_CODES).where({ table_name: table, email }).where('expires_at', '>', nowSeconds()).first('hash', 'code_hash')
    const spent = row === undefined ? 0 : await this.db(EMAIL_CODES).where({ hash: row.hash }).where('attempts', '<', maxAttempts).update({ attempts: this.db.raw('?? + 1', ['attempts']) })
    const stored = spent === 1 ? Buffer.from(String(row.code_hash), 'hex') : NO_CODE
    const equal = timingSafeEqual(this.digest(table, email, code), stored.length === 32 ? stored : NO_CODE)
    if (!equal || spent !== 1) return false
    // Whoever deletes the row owns the code: two right answers at once sign in once.
    return await this.db(EMAIL_CODES).where({ hash: row.hash }).del() === 1
  }

  /** The address a live link token of `table` was mailed to; the token (and its code) are used up. */
  async useToken (table: string, token: string): Promise<string | undefined> {
    const hash = sha256(token)
    const row = await this.db(EMAIL_CODES).where({ hash, table_name: table }).first('email', 'expires_at')
    if (row === undefined) return undefined
    const deleted = await this.db(EMAIL_CODES).where({ hash }).del()
    return deleted === 1 && Number(row.expires_at) > nowSeconds() ? String(row.email) : undefined
  }
}
