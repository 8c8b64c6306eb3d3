// Conditions evaluated by the database server (PostgreSQL): per batch of rows, one statement for up
// to CLASSES_PER_QUERY classes, with a `CASE WHEN <condition>` column per class. The event loop only
// waits for the answer; the database does the work.
import type { Executor } from '../crud/context.js'
import type { Binding } from '../dialects/types.js'
import { keyColumns, type ConditionEvaluator, type Judged, type Row, type RowBatch } from './evaluate.js'

// Each class adds one CASE column and its bindings.
const CLASSES_PER_QUERY = 50

export class SqlEvaluator implements ConditionEvaluator {
  constructor (
    private readonly executor: Executor,
    private readonly log: { debug?: (obj: object, msg: string) => void }
  ) {}

  async matches<C extends Judged> (batch: RowBatch, classes: C[]): Promise<C[][]> {
    const { dialect } = this.executor
    const { table } = batch
    const q = dialect.quote
    const source = dialect.rowsAs(table.quoted, table.fieldList, batch.rows)
    const index = new Map(batch.keys.map((k, i) => [JSON.stringify(k), i]))
    const out = batch.rows.map((): C[] => [])
    const chunks: C[][] = []
    for (let i = 0; i < classes.length; i += CLASSES_PER_QUERY) chunks.push(classes.slice(i, i + CLASSES_PER_QUERY))
    for (let n = 0; n < chunks.length; n++) {
      const chunk = chunks[n]
      const columns = keyColumns(table, q)
      const caseBindings: Binding[] = []
      chunk.forEach((c, i) => {
        columns.push(`CASE WHEN ${c.condition.sql} THEN 1 ELSE 0 END AS ${q(`fb_m_${i}`)}`)
        caseBindings.push(...c.condition.bindings)
      })
      let result: Row[]
      try {
        // The select list comes first in the text, then the FROM item.
        result = dialect.rawRows(await this.executor.db.raw(`SELECT ${columns.join(', ')} FROM ${source.sql}`, [...caseBindings, ...source.bindings]))
      } catch (error) {
        // One class's condition may fail on these rows: the others are evaluated one by one.
        this.log.debug?.({ err: error, table: table.name }, 'realtime: a subscription could not be evaluated')
        if (chunk.length > 1) chunks.splice(n + 1, 0, ...chunk.map((c) => [c]))
        continue
      }
      for (const row of result) {
        const i = index.get(JSON.stringify(table.key.map((f, k) => dialect.decode(f, row[`fb_k_${k}`]))))
        if (i !== undefined) chunk.forEach((c, m) => { if (Number(row[`fb_m_${m}`]) === 1) out[i].push(c) })
      }
    }
    return out
  }
}
