// Conditions evaluated in this process (SQLite runs on the event loop): each class has its own
// statement, `SELECT <keys> FROM <rows> WHERE <condition>`, prepared once per block size and kept
// while the class lives, on a private in-memory database (conditions read only the row in hand, so
// nothing else of the project's database is needed, and evaluation never waits for its lock).
// Preparing is what costs (a statement of many conditions takes time more than proportional to
// its length to prepare); running one prepared condition on a block of rows takes microseconds.
// Between classes, once SLICE_MS have passed, evaluation yields to the event loop, so no request
// waits more than about that long however many classes a table has.
import Database, { type Database as SqliteDatabase, type Statement } from 'better-sqlite3'
import type { Dialect } from '../dialects/types.js'
import { keyColumns, type ConditionEvaluator, type Judged, type RowBatch } from './evaluate.js'

// Rows per statement: a run of one row is evaluated as such, longer runs in blocks of BLOCK rows
// (the last one padded with copies of its last row), so each class needs at most two statements.
const BLOCK = 16
const SLICE_MS = 5

export class SqliteEvaluator implements ConditionEvaluator {
  private readonly db: SqliteDatabase = new Database(':memory:')
  // Per class and block size; null: the statement could not be prepared (the class matches nothing).
  private readonly statements = new WeakMap<Judged, Map<number, Statement | null>>()

  constructor (
    private readonly dialect: Dialect,
    private readonly log: { debug?: (obj: object, msg: string) => void }
  ) {}

  async matches<C extends Judged> (batch: RowBatch, classes: C[]): Promise<C[][]> {
    const { table } = batch
    const { dialect } = this
    const keys = keyColumns(table, dialect.quote).join(', ')
    const index = new Map(batch.keys.map((k, i) => [JSON.stringify(k), i]))
    const out = batch.rows.map((): C[] => [])
    const blocks = []
    for (let start = 0; start < batch.rows.length; start += BLOCK) {
      const rows = batch.rows.slice(start, start + BLOCK)
      const size = rows.length === 1 ? 1 : BLOCK
      while (rows.length < size) rows.push(rows[rows.length - 1])
      blocks.push({ size, source: dialect.rowsAs(table.quoted, table.fieldList, rows) })
    }
    let sliceStart = performance.now()
    for (const c of classes) {
      for (const { size, source } of blocks) {
        const statement = this.statementOf(c, size, () => `SELECT ${keys} FROM ${source.sql} WHERE ${c.condition.sql}`)
        if (statement === null) continue
        let hits: unknown[][]
        try {
          hits = statement.all(...source.bindings, ...c.condition.bindings) as unknown[][]
        } catch (error) {
          this.log.debug?.({ err: error, table: table.name }, 'realtime: a subscription could not be evaluated')
          continue
        }
        for (const hit of hits) {
          const i = index.get(JSON.stringify(table.key.map((f, k) => dialect.decode(f, hit[k]))))
          // A padded block repeats its last row: that row's class is recorded once.
          if (i !== undefined && out[i].at(-1) !== c) out[i].push(c)
        }
      }
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
    }
    return out
  }

  private statementOf (c: Judged, size: number, sql: () => string): Statement | null {
    let bySize = this.statements.get(c)
    if (bySize === undefined) this.statements.set(c, bySize = new Map())
    let statement = bySize.get(size)
    if (statement === undefined) {
      try {
        statement = this.db.prepare(sql()).raw(true)
      } catch (error) {
        this.log.debug?.({ err: error }, 'realtime: a subscription could not be prepared')
        statement = null
      }
      bySize.set(size, statement)
    }
    return statement
  }

  close (): void {
    this.db.close()
  }
}
