// Email verification and password reset tokens (decision D17): random, stored hashed, single use, expiring.
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { ONE_TIME_TOKENS } from './store-tables.js'
import { nowSeconds, sha256 } from './sessions.js'

export type TokenKind = 'verify_email' | 'reset_password'

export interface TokenOwner { userId: string, email: string | null }

/** Why a one-time token was refused: the message a `400` answers with. */
export type TokenRefusal = 'Invalid token' | 'Invalid token type'
export const INVALID_TOKEN = 'Invalid token'

export class OneTimeTokens {
  constructor (private readonly db: Knex) {}

  async issue (kind: TokenKind, table: string, owner: TokenOwner, ttlSeconds: number): Promise<string> {
    const token = randomBytes(32).toString('base64url')
    const now = nowSeconds()
    await this.db(ONE_TIME_TOKENS).insert({ hash: sha256(token), kind, table_name: table, user_id: owner.userId, email: owner.email, created_at: now, expires_at: now + ttlSeconds })
    return token
  }

  /**
   * Deletes the token and returns its owner, or why it was refused in teenybase's words: `Invalid token
   * type` for a live token of the other kind, `Invalid token` for anything else (unknown, used, expired,
   * another table's).
   */
  async consume (kind: TokenKind, table: string, token: string): Promise<TokenOwner | TokenRefusal> {
    const hash = sha256(token)
    return await this.db.transaction(async (trx) => {
      const row = await trx(ONE_TIME_TOKENS).where({ hash }).first()
      if (row === undefined) return INVALID_TOKEN
      // Whoever deletes the row owns it: a token cannot be used twice, even concurrently.
      const deleted = await trx(ONE_TIME_TOKENS).where({ hash }).del()
      if (deleted === 0 || row.table_name !== table || row.expires_at <= nowSeconds()) return INVALID_TOKEN
      if (row.kind !== kind) return 'Invalid token type'
      return { userId: row.user_id, email: row.email }
    })
  }

  /** Seconds since the last token of this kind was sent to the user, or undefined. */
  async sinceLast (kind: TokenKind, table: string, userId: string): Promise<number | undefined> {
    const row = await this.db(ONE_TIME_TOKENS).where({ kind, table_name: table, user_id: userId }).max({ last: 'created_at' }).first()
    const last = row?.last
    return last === null || last === undefined ? undefined : nowSeconds() - Number(last)
  }

  async revokeUser (kind: TokenKind, table: string, userId: string): Promise<void> {
    await this.db(ONE_TIME_TOKENS).where({ kind, table_name: table, user_id: userId }).del()
  }
}
