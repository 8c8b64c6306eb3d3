// What Knex does not expose: when a transaction's work is final. Knex settles a transaction's
// `executionPromise` after its COMMIT (a savepoint's: after its RELEASE) and rejects it on rollback.
import type { Knex } from 'knex'

interface TransactionInternals {
  executionPromise?: Promise<unknown>
  parentTransaction?: Knex.Transaction
}

/** Settles when `trx` commits (a savepoint: is released), rejects when it rolls back. */
export function settledOf (trx: Knex.Transaction): Promise<unknown> | undefined {
  return (trx as unknown as TransactionInternals).executionPromise
}

/** The transaction a savepoint belongs to (undefined for an outermost transaction). */
export function parentOf (trx: Knex.Transaction): Knex.Transaction | undefined {
  return (trx as unknown as TransactionInternals).parentTransaction
}

/**
 * Runs `fn` once what was just done on `db` is committed: at once outside a transaction, after the
 * outermost COMMIT inside one, never after a rollback.
 */
export function afterCommit (db: Knex | Knex.Transaction, fn: () => void): void {
  if (db.isTransaction !== true) {
    fn()
    return
  }
  let outermost = db as Knex.Transaction
  for (let parent = parentOf(outermost); parent !== undefined; parent = parentOf(parent)) outermost = parent
  settledOf(outermost)?.then(fn, () => {})
}
