// The write path's port for what its writes changed: the one after-commit notification point. Every
// INSERT, UPDATE and DELETE that fastbase itself runs (lib/crud/statements.ts: table routes, edit,
// upserts, both action modes, sign-up and the auth flows' own writes) reports the rows it changed
// here: every column, as the statement left them (for a delete, as they were). Whoever
// wants to hear of them implements ChangeSink and is set as the executor's `changes` by its plugin
// (realtime's hub, record after-hooks); the write path knows nothing of them.
// Outside a transaction the statement has committed when it returns; inside one the changes wait
// on the transaction (a savepoint's move to its parent when it is released) and reach the sink
// only after the outermost COMMIT. A rollback drops them: nothing is ever published for it.
import type { Knex } from 'knex'
import type { AuthContext } from '../auth-context.js'
import { afterCommit, isTransaction, parentOf, settledOf } from '../db/after-commit.js'

type Row = Record<string, unknown>

export type ChangeAction = 'insert' | 'update' | 'delete'

export interface Change {
  table: string
  action: ChangeAction
  /** The key values of each changed row (the table's primary key, else its uid), decoded. */
  keys: unknown[][]
  /** Every column of each changed row, decoded, in the order of `keys`: as the statement left it (a delete: as it was). */
  rows: Row[]
  /**
   * An update's rows as they were, in the order of `keys`, where the write captured them (null where
   * it did not): realtime sends a subscriber an update only when what it sees of the row changed
   * (decision D105). Captured only for an update that changes no column every subscriber could see.
   */
  before?: Array<Row | null>
  /**
   * Who made it: the writer's AuthContext, which record hooks hand their after-hooks; nothing here
   * reads it.
   */
  caller?: AuthContext
  /** The request it was made for, for the logs of what runs after the commit. */
  requestId?: string
}

export interface ChangeSink {
  /** Whether writes to `table` should be captured at all (false: nobody could receive them). */
  wants: (table: string) => boolean
  /** One committed transaction's changes, in statement order. Must not throw. */
  committed: (changes: Change[]) => void
  /**
   * A write to `table` that captured nothing (`wants` said no when it ran) has committed: a sink
   * whose answer may have changed meanwhile sends `gap` where a subscriber may have missed it. Must not throw.
   */
  uncaptured?: (table: string) => void
}

const pending = new WeakMap<Knex.Transaction, Change[]>()

/** Tells `sink`, once what was just done on `db` is committed, that a write to `table` captured nothing. */
export function recordUncaptured (sink: ChangeSink | undefined, db: Knex, table: string): void {
  const uncaptured = sink?.uncaptured
  if (uncaptured !== undefined) afterCommit(db, () => { uncaptured(table) })
}

/** Records `change`, made by a statement just run on `db`, for publication once it is committed. */
export function recordChange (sink: ChangeSink, db: Knex, change: Change): void {
  if (!isTransaction(db)) {
    sink.committed([change])
    return
  }
  changesOf(sink, db).push(change)
}

function changesOf (sink: ChangeSink, trx: Knex.Transaction): Change[] {
  let list = pending.get(trx)
  if (list !== undefined) return list
  const changes: Change[] = []
  pending.set(trx, changes)
  const parentTransaction = parentOf(trx)
  // A savepoint's changes join its parent's when it is released; a rollback drops them.
  settledOf(trx)?.then(() => {
    pending.delete(trx)
    if (changes.length === 0) return
    if (parentTransaction !== undefined) changesOf(sink, parentTransaction).push(...changes)
    else sink.committed(changes)
  }, () => { pending.delete(trx) })
  list = changes
  return list
}
