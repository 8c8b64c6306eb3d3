// When a transaction's work is final. Knex settles a transaction's `executionPromise` after its
// COMMIT (a savepoint's: after its RELEASE) and rejects it on rollback; its types declare the member
// but not what it means, which is said here once.
import type { Knex } from 'knex'

/** Whether `db` is a transaction (or savepoint), by the flag Knex sets on every one. */
export function isTransaction (db: Knex): db is Knex.Transaction {
  return db.isTransaction === true
}

/** Settles when `trx` commits (a savepoint: is released), rejects when it rolls back. */
export function settledOf (trx: Knex.Transaction): Promise<unknown> | undefined {
  return trx.executionPromise
}

/** The transaction a savepoint belongs to (undefined for an outermost transaction). */
export function parentOf (trx: Knex.Transaction): Knex.Transaction | undefined {
  return trx.parentTransaction
}

/**
 * Runs `fn` once what was just done on `db` is committed: at once outside a transaction, after the
 * outermost COMMIT inside one, never after a rollback.
 */
export function afterCommit (db: Knex, fn: () => void): void {
  if (!isTransaction(db)) {
    fn()
    return
  }
  let outermost = db
  for (let parent = parentOf(outermost); parent !== undefined; parent = parentOf(parent)) outermost = parent
  settledOf(outermost)?.then(fn, () => {})
}
