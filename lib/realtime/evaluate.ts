// Which subscriber classes each changed row goes to: the classes' conditions (listRule and where,
// compiled by lib/expr as for `list`) evaluated on the rows a change captured, as a derived table
// named like the table (Dialect#rowsAs). Two ways, one per dialect: evaluate-sqlite.ts (statements
// kept prepared per class, run on a thread of their own) and evaluate-sql.ts (many classes per
// statement, run by the database server).
import type { Fragment } from '../dialects/types.js'
import type { TableDescriptor } from '../table/descriptor.js'

export type Row = Record<string, unknown>

/** A subscriber class as evaluation sees it: a condition that is neither always true nor always false. */
export interface Judged {
  condition: Fragment
  /** The condition follows a relation (decision D95): it reads rows other than the changed one. */
  related?: boolean
}

/** Rows of one table with distinct keys (Change#keys, decoded), in the order they were written. */
export interface RowBatch { table: TableDescriptor, keys: unknown[][], rows: Row[] }

export interface ConditionEvaluator {
  /**
   * Per row of `batch` (same index), the classes whose condition holds on it. A class whose
   * condition fails on these rows (a bad cast) gets none of them, as its `list` would have failed.
   */
  matches: <C extends Judged>(batch: RowBatch, classes: C[]) => Promise<C[][]>
  /** A class was created / lost its last subscriber (for evaluators that keep something per class). */
  admit?: (c: Judged) => void
  release?: (c: Judged) => void
}

/** The key columns of `table` selected as `fb_k_<i>`, for finding each result's row. */
export function keyColumns (table: TableDescriptor, quote: (name: string) => string): string[] {
  return table.key.map((f, i) => `${table.quoted}.${quote(f.name)} AS ${quote(`fb_k_${i}`)}`)
}
