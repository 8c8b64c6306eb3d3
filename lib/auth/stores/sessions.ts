// Sessions and refresh tokens, in the database (decision D13): random refresh tokens stored hashed,
// rotated on every refresh; a rotated token presented again revokes its whole session.
import { createHash, randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { newUid } from '../../uid.js'
import { SESSIONS, REFRESH_TOKENS } from './store-tables.js'
import { afterCommit } from '../../db/after-commit.js'

/** A session lives 30 days after its last refresh. */
export const SESSION_LIFETIME = 30 * 24 * 3600

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)
export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex')
const newRefreshToken = (): string => randomBytes(32).toString('base64url')

export interface IssuedSession { sid: string, refreshToken: string, aal: number }
export interface Session { id: string, table_name: string, user_id: string, refresh_count: number, aal: number, expires_at: number, revoked_at: number | null }

/** Sessions that were just revoked: one, or every session of a user but `keep`. */
export type RevokedSessions = { sid: string } | { table: string, userId: string, keep?: string }

export class SessionStore {
  private readonly revokedListeners: Array<(revoked: RevokedSessions) => void> = []

  constructor (private readonly db: Knex) {}

  /** Calls `listener` after each revocation commits (realtime ends the revoked sessions' streams). */
  onRevoked (listener: (revoked: RevokedSessions) => void): void {
    this.revokedListeners.push(listener)
  }

  private revoked (db: Knex | Knex.Transaction, revoked: RevokedSessions): void {
    if (this.revokedListeners.length === 0) return
    afterCommit(db, () => { for (const listener of this.revokedListeners) listener(revoked) })
  }

  /** A new session; `aal` 2 when the sign-in proved a second factor (decision D116). */
  async create (table: string, userId: string, db: Knex | Knex.Transaction = this.db, aal = 1): Promise<IssuedSession> {
    const sid = newUid()
    const refreshToken = newRefreshToken()
    const now = nowSeconds()
    await db(SESSIONS).insert({ id: sid, table_name: table, user_id: userId, refresh_count: 0, aal, created_at: now, expires_at: now + SESSION_LIFETIME })
    await db(REFRESH_TOKENS).insert({ hash: sha256(refreshToken), session_id: sid, created_at: now })
    return { sid, refreshToken, aal }
  }

  /** Raises a live session to `aal` (a user who just turned a second factor on, proving it). */
  async raise (sid: string, aal: number, db: Knex | Knex.Transaction = this.db): Promise<void> {
    await db(SESSIONS).where({ id: sid }).whereNull('revoked_at').update({ aal })
  }

  /**
   * Rotates a refresh token. `maxRefresh` > 0 allows exactly that many refreshes per session.
   * Returns undefined when the token is unknown, used, expired or revoked; a used token revokes the session.
   */
  async refresh (table: string, refreshToken: string, maxRefresh: number): Promise<(IssuedSession & { userId: string }) | undefined> {
    const hash = sha256(refreshToken)
    const outcome = await this.db.transaction(async (trx) => {
      const token = await trx(REFRESH_TOKENS).where({ hash }).first()
      if (token === undefined) return undefined
      const session: Session | undefined = await trx(SESSIONS).where({ id: token.session_id, table_name: table }).first()
      const now = nowSeconds()
      if (session === undefined || session.revoked_at !== null || session.expires_at <= now) return undefined
      // Claiming the token is one conditional update, so two concurrent refreshes cannot both win.
      const claimed = token.used_at === null ? await trx(REFRESH_TOKENS).where({ hash }).whereNull('used_at').update({ used_at: now }) : 0
      if (claimed === 0) return { replayed: session.id }
      if (maxRefresh > 0 && session.refresh_count >= maxRefresh) return undefined
      await trx(SESSIONS).where({ id: session.id }).update({ refresh_count: session.refresh_count + 1, expires_at: now + SESSION_LIFETIME })
      const next = newRefreshToken()
      await trx(REFRESH_TOKENS).insert({ hash: sha256(next), session_id: session.id, created_at: now })
      // A refresh keeps the level the session was signed in at: it proves no factor of its own.
      return { sid: session.id, refreshToken: next, userId: session.user_id, aal: Number(session.aal) }
    })
    if (outcome !== undefined && 'replayed' in outcome) {
      // Outside the refresh transaction, so the revocation sticks.
      await this.revoke(outcome.replayed as string)
      return undefined
    }
    return outcome
  }

  async revoke (sid: string): Promise<void> {
    await this.db(SESSIONS).where({ id: sid }).whereNull('revoked_at').update({ revoked_at: nowSeconds() })
    this.revoked(this.db, { sid })
  }

  /** Revokes every session of a user, except `keep` (change-password keeps the caller's own). */
  async revokeUser (table: string, userId: string, keep?: string, db: Knex | Knex.Transaction = this.db): Promise<void> {
    const query = db(SESSIONS).where({ table_name: table, user_id: userId }).whereNull('revoked_at')
    await (keep === undefined ? query : query.whereNot({ id: keep })).update({ revoked_at: nowSeconds() })
    this.revoked(db, { table, userId, keep })
  }
}
