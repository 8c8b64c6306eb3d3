// OAuth states already used, in the database (decision D18): a state is single use across every
// instance sharing it, so a callback replayed to another instance is refused there too. Only states
// that passed their signature, expiry and cookie checks are recorded, so nobody can fill the table
// without first starting a flow (rate-limited). The purge (lib/auth/stores/purge.ts) removes expired ones.
import type { Knex } from 'knex'
import type { Dialect } from '../../dialects/types.js'
import { OAUTH_STATES, authStoreTables } from '../stores/store-tables.js'

const table = authStoreTables.find((t) => t.name === OAUTH_STATES)!

/** Records the state as used; false when it already was (by this instance or another). */
export async function claimState (db: Knex, dialect: Dialect, id: string, expiresAt: number): Promise<boolean> {
  try {
    // The primary key decides: of two concurrent claims, one insert fails.
    await db(OAUTH_STATES).insert({ id, expires_at: expiresAt })
    return true
  } catch (err) {
    if (dialect.constraintViolation(err, table)?.kind === 'unique') return false
    throw err
  }
}
