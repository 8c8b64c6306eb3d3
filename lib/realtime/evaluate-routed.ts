// SQLite's two ways of judging a class (decision D95): a condition that reads only the changed row
// runs on the evaluation thread's private copy (evaluate-sqlite.ts); one that follows a relation
// needs the related rows, which only the project's database holds, so it runs there
// (evaluate-sql.ts), one indexed lookup per hop and row.
import type { ConditionEvaluator, Judged, RowBatch } from './evaluate.js'

export class RoutedEvaluator implements ConditionEvaluator {
  constructor (
    private readonly local: ConditionEvaluator & { close?: () => void },
    private readonly database: ConditionEvaluator
  ) {}

  admit (c: Judged): void {
    if (c.related !== true) this.local.admit?.(c)
  }

  release (c: Judged): void {
    if (c.related !== true) this.local.release?.(c)
  }

  async matches<C extends Judged> (batch: RowBatch, classes: C[]): Promise<C[][]> {
    const local = classes.filter((c) => c.related !== true)
    const related = classes.filter((c) => c.related === true)
    const [a, b] = await Promise.all([
      local.length > 0 ? this.local.matches(batch, local) : undefined,
      related.length > 0 ? this.database.matches(batch, related) : undefined
    ])
    return batch.rows.map((_, i) => [...(a?.[i] ?? []), ...(b?.[i] ?? [])])
  }

  close (): void {
    this.local.close?.()
  }
}
