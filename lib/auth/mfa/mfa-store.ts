// Second factors in the database (decision D115): a TOTP secret per user (or admin role), its
// one-time recovery codes (hashed), and the challenges of sign-ins waiting for a code. Every
// instance sharing the database sees the same state, so a code used on one is refused on all, and a
// challenge's attempts are counted once for the fleet. Each single-use thing is claimed by one
// conditional write: whoever's write changes the row owns it, even concurrently.
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { newUid } from '../../uid.js'
import { MFA_CHALLENGES, MFA_FACTORS, MFA_RECOVERY_CODES } from '../stores/store-tables.js'
import { nowSeconds, sha256 } from '../stores/sessions.js'
import { base32Encode, matchTotp, newTotpSecret } from './totp.js'

/** Who a factor belongs to: a user of an auth table, or an admin role (table ADMIN_PRINCIPALS). */
export interface Principal { table: string, userId: string }

/** How long a sign-in waits for its second factor, and how many codes it may try. */
export const CHALLENGE_LIFETIME = 300
export const CHALLENGE_ATTEMPTS = 5
export const RECOVERY_CODES = 10

type Db = Knex | Knex.Transaction

/** `XXXX-XXXX-XXXX-XXXX` (80 random bits, base32), hashed with its owner so a code is nobody else's. */
function newRecoveryCode (): string {
  const text = base32Encode(randomBytes(10))
  return [0, 4, 8, 12].map((i) => text.slice(i, i + 4)).join('-')
}
const recoveryHash = (p: Principal, code: string): string => sha256(`${p.table}\u0000${p.userId}\u0000${code.toUpperCase().replace(/[^A-Z2-7]/g, '')}`)

export class MfaStore {
  constructor (private readonly db: Knex) {}

  private factor (p: Principal, db: Db = this.db): Knex.QueryBuilder {
    return db(MFA_FACTORS).where({ table_name: p.table, user_id: p.userId })
  }

  /** Whether `p` has TOTP turned on (a sign-in then needs a second factor). */
  async enabled (p: Principal, db: Db = this.db): Promise<boolean> {
    return await this.factor(p, db).whereNotNull('enabled_at').first('id') !== undefined
  }

  /** A new secret for `p`, not on until confirmed (one asked for before replaces it); undefined when TOTP is on already. */
  async enroll (p: Principal): Promise<string | undefined> {
    const secret = newTotpSecret()
    return await this.db.transaction(async (trx) => {
      const row = await this.factor(p, trx).first('enabled_at')
      if (row !== undefined && row.enabled_at !== null) return undefined
      await this.factor(p, trx).whereNull('enabled_at').del()
      await trx(MFA_FACTORS).insert({ id: newUid(), table_name: p.table, user_id: p.userId, secret, enabled_at: null, last_step: null, created_at: nowSeconds() })
      return secret
    })
  }

  /** Turns the pending secret on when `code` is its current code; answers the new recovery codes, or undefined. */
  async confirm (p: Principal, code: string): Promise<string[] | undefined> {
    return await this.db.transaction(async (trx) => {
      const row = await this.factor(p, trx).whereNull('enabled_at').first('id', 'secret')
      const step = row === undefined ? undefined : matchTotp(row.secret, code, nowSeconds(), null)
      if (step === undefined) return undefined
      const claimed = await trx(MFA_FACTORS).where({ id: row.id }).whereNull('enabled_at').update({ enabled_at: nowSeconds(), last_step: step })
      if (claimed === 0) return undefined
      return await this.newRecoveryCodes(p, trx)
    })
  }

  /** Replaces `p`'s recovery codes with new ones, answered once (only their hashes are kept). */
  private async newRecoveryCodes (p: Principal, trx: Knex.Transaction): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode)
    await trx(MFA_RECOVERY_CODES).where({ table_name: p.table, user_id: p.userId }).del()
    const now = nowSeconds()
    await trx(MFA_RECOVERY_CODES).insert(codes.map((code) => ({ hash: recoveryHash(p, code), table_name: p.table, user_id: p.userId, created_at: now })))
    return codes
  }

  /**
   * Whether `code` is `p`'s current TOTP code (one step of drift either way) from a step after the
   * last one accepted; the step is then recorded, so the same code (or an older one) never works again.
   */
  async useCode (p: Principal, code: string): Promise<boolean> {
    const row = await this.factor(p).whereNotNull('enabled_at').first('id', 'secret', 'last_step')
    if (row === undefined) return false
    const last = row.last_step === null ? null : Number(row.last_step)
    const step = matchTotp(row.secret, code, nowSeconds(), last)
    if (step === undefined) return false
    // Conditional: two requests with one code on two instances cannot both move last_step past it.
    const claimed = await this.db(MFA_FACTORS).where({ id: row.id }).where((q) => q.whereNull('last_step').orWhere('last_step', '<', step)).update({ last_step: step })
    return claimed === 1
  }

  /** Whether `code` is one of `p`'s unused recovery codes; it is used up (deleted) by this call. */
  async useRecoveryCode (p: Principal, code: string): Promise<boolean> {
    return await this.db(MFA_RECOVERY_CODES).where({ hash: recoveryHash(p, code), table_name: p.table, user_id: p.userId }).del() === 1
  }

  /** Turns TOTP off for `p`: the secret and the recovery codes go. */
  async disable (p: Principal): Promise<void> {
    await this.db.transaction(async (trx) => {
      await this.factor(p, trx).del()
      await trx(MFA_RECOVERY_CODES).where({ table_name: p.table, user_id: p.userId }).del()
    })
  }

  /** A new challenge for `p`'s sign-in: random, stored hashed. */
  async challenge (p: Principal, db: Db = this.db): Promise<string> {
    const token = randomBytes(32).toString('base64url')
    const now = nowSeconds()
    await db(MFA_CHALLENGES).insert({ hash: sha256(token), table_name: p.table, user_id: p.userId, attempts: 0, created_at: now, expires_at: now + CHALLENGE_LIFETIME })
    return token
  }

  /**
   * Spends one attempt of a live challenge of `table`, answering whose it is and whether that was its
   * last attempt; undefined when it is unknown, used, expired, another table's or out of attempts
   * (counted for the fleet: one conditional update).
   */
  async attempt (table: string, token: string): Promise<{ principal: Principal, last: boolean } | undefined> {
    const hash = sha256(token)
    const spent = await this.db(MFA_CHALLENGES).where({ hash, table_name: table }).where('attempts', '<', CHALLENGE_ATTEMPTS).where('expires_at', '>', nowSeconds())
      .update({ attempts: this.db.raw('?? + 1', ['attempts']) })
    if (spent === 0) return undefined
    const row = await this.db(MFA_CHALLENGES).where({ hash }).first('user_id', 'attempts')
    return row === undefined ? undefined : { principal: { table, userId: String(row.user_id) }, last: Number(row.attempts) >= CHALLENGE_ATTEMPTS }
  }

  /** Ends a challenge whose factor was proven; false when another request ended it first. */
  async finish (token: string): Promise<boolean> {
    return await this.db(MFA_CHALLENGES).where({ hash: sha256(token) }).del() === 1
  }
}
