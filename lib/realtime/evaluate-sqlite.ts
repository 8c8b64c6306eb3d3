// Conditions evaluated in this process (SQLite runs on the event loop). A private in-memory
// database holds, per subscribed table, a table of the same name and columns (types and
// collations as declared, so values compare as in the real one, without its constraints); each
// batch of changed rows is written there, and each class has its own statement,
// `SELECT <keys> FROM <table> WHERE <condition>`, prepared once and kept while the class lives.
// Conditions read only the row in hand, so nothing else of the project's database is needed, and
// evaluation never waits for its lock. Preparing is what costs (a statement of many conditions
// takes time more than proportional to its length to prepare); running a prepared condition over
// a batch takes microseconds per row. Between classes, once SLICE_MS have passed, evaluation
// yields to the event loop: no request waits longer than about that, however many classes a table has.
import Database, { type Database as SqliteDatabase, type Statement } from 'better-sqlite3'
import type { Dialect } from '../dialects/types.js'
import type { TableDescriptor } from '../table.js'
import { keyColumns, type ConditionEvaluator, type Judged, type RowBatch } from './evaluate.js'

const SLICE_MS = 5

export class SqliteEvaluator implements ConditionEvaluator {
  private readonly db: SqliteDatabase = new Database(':memory:')
  private readonly tables = new Map<string, { clear: Statement, insert: Statement, select: string }>()
  // Per class; null: the statement could not be prepared (the class matches nothing).
  private readonly statements = new WeakMap<Judged, Statement | null>()

  constructor (
    private readonly dialect: Dialect,
    private readonly log: { debug?: (obj: object, msg: string) => void }
  ) {}

  async matches<C extends Judged> (batch: RowBatch, classes: C[]): Promise<C[][]> {
    const { table } = batch
    const { dialect } = this
    const scratch = this.scratchOf(table)
    scratch.clear.run()
    for (const row of batch.rows) scratch.insert.run(...table.fieldList.map((f) => row[f.name] === null || row[f.name] === undefined ? null : dialect.encode(f, row[f.name])))
    const index = new Map(batch.keys.map((k, i) => [JSON.stringify(k), i]))
    const out = batch.rows.map((): C[] => [])
    let sliceStart = performance.now()
    for (const c of classes) {
      const statement = this.statementOf(c, scratch.select)
      if (statement !== null) {
        try {
          for (const hit of statement.all(...c.condition.bindings) as unknown[][]) {
            const i = index.get(JSON.stringify(table.key.map((f, k) => dialect.decode(f, hit[k]))))
            if (i !== undefined) out[i].push(c)
          }
        } catch (error) {
          this.log.debug?.({ err: error, table: table.name }, 'realtime: a subscription could not be evaluated')
        }
      }
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
    }
    return out
  }

  private scratchOf (table: TableDescriptor): { clear: Statement, insert: Statement, select: string } {
    let scratch = this.tables.get(table.name)
    if (scratch !== undefined) return scratch
    const q = this.dialect.quote
    const columns = table.fieldList.map((f) => [q(f.name), this.dialect.columnType(f), f.collate === undefined ? '' : `COLLATE ${f.collate}`].join(' '))
    this.db.exec(`CREATE TABLE ${table.quoted} (${columns.join(', ')})`)
    scratch = {
      clear: this.db.prepare(`DELETE FROM ${table.quoted}`),
      insert: this.db.prepare(`INSERT INTO ${table.quoted} VALUES (${table.fieldList.map(() => '?').join(', ')})`),
      select: `SELECT ${keyColumns(table, q).join(', ')} FROM ${table.quoted} WHERE `
    }
    this.tables.set(table.name, scratch)
    return scratch
  }

  private statementOf (c: Judged, select: string): Statement | null {
    let statement = this.statements.get(c)
    if (statement === undefined) {
      try {
        statement = this.db.prepare(select + c.condition.sql).raw(true)
      } catch (error) {
        this.log.debug?.({ err: error }, 'realtime: a subscription could not be prepared')
        statement = null
      }
      this.statements.set(c, statement)
    }
    return statement
  }

  close (): void {
    this.db.close()
  }
}
