// The thread of lib/realtime/evaluate-sqlite.ts: a private in-memory database holding, per
// subscribed table, a table of the same name and columns (types and collations as declared, so
// values compare as in the real one, without its constraints) plus the row's place in the batch.
// Each batch of changed rows is written there, and each class's statement,
// `SELECT <place> FROM <table> WHERE <condition>`, prepared once and kept until the class is gone,
// says which rows the class gets. Conditions read only the row in hand, so nothing else of the
// project's database is needed.
//
// The thread runs the source of `evaluatorThread` (eval), as the SQLite reader threads do
// (lib/dialects/sqlite-reader-thread.ts says why): the function stands alone, with no imports
// and no closure.

export interface TableDefinition {
  name: string
  /** CREATE TABLE statement; the first column is PLACE. */
  create: string
  drop: string
  clear: string
  insert: string
  /** `SELECT PLACE FROM <table> WHERE `: a class's condition completes it. */
  select: string
  /** `SELECT PLACE FROM <table> WHERE PLACE = ? AND `: the same for one row (a lookup by key), the condition in parentheses. */
  selectOne: string
}

export interface ClassNews {
  /** Classes the thread has not seen: their condition. */
  classes: Array<{ id: number, sql: string, bindings: unknown[] }>
  /** Classes gone: their statements are dropped. */
  released: number[]
}

/** A batch to evaluate (answered with an EvaluationAnswer of the same id), with the class news since the last message. */
export interface EvaluationJob extends ClassNews {
  id: number
  /** Set when the thread has not seen this table (or this version of it) yet. */
  define?: TableDefinition
  table: string
  /** The classes to evaluate, by id. */
  evaluate: number[]
  /** The rows, each the values of the table's fields in order, encoded for SQLite. */
  rows: unknown[][]
}

export interface EvaluationAnswer {
  id: number
  /** Pairs: index in `evaluate`, index in `rows`, for every row a class gets. */
  hits: Int32Array<ArrayBuffer>
  /** Indexes in `evaluate` of the classes whose condition could not be prepared, or failed on some row. */
  failed: number[]
  /** The first error message, for the log. */
  error?: string
}

/** The column that holds a row's place in the batch (a space: no field name has one). */
export const PLACE = '"fb place"'

export function evaluatorThread (): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  // What the thread is started with (lib/realtime/evaluate-sqlite.ts); in a worker, parentPort is set.
  const { parentPort, workerData }: { parentPort: import('node:worker_threads').MessagePort, workerData: { driver: string } } = require('node:worker_threads')
  const Database: typeof import('better-sqlite3') = require(workerData.driver)
  /** A class's statement, in raw mode: each row an array of its columns. */
  type Prepared = import('better-sqlite3').Statement<unknown[], unknown[]>
  type Runner = { run: (...values: unknown[]) => unknown }
  const db = new Database(':memory:')
  const tables = new Map<string, { clear: Runner, insert: Runner, select: string, selectOne: string }>()
  const conditions = new Map<number, { sql: string, bindings: unknown[] }>()
  const statements = new Map<number, Prepared | null>()
  // Per class whose condition failed at run time on a batch: the same condition for one row.
  const perRow = new Map<number, Prepared>()
  // Buffers arrive as plain Uint8Arrays (structured clone); better-sqlite3 binds only Buffers.
  const bindable = (value: unknown): unknown => value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value
  const messageOf = (e: unknown): string => e instanceof Error ? e.message : String(e)
  parentPort.on('message', (message: ClassNews | EvaluationJob) => {
    for (const id of message.released) { conditions.delete(id); statements.delete(id); perRow.delete(id) }
    for (const c of message.classes) conditions.set(c.id, { sql: c.sql, bindings: c.bindings.map(bindable) })
    if (!('evaluate' in message)) return
    const job = message
    if (job.define !== undefined) {
      const d = job.define
      db.exec(d.drop)
      db.exec(d.create)
      tables.set(d.name, { clear: db.prepare<unknown[]>(d.clear), insert: db.prepare<unknown[]>(d.insert), select: d.select, selectOne: d.selectOne })
      // Statements prepared against the old table are stale.
      statements.clear()
      perRow.clear()
    }
    const table = tables.get(job.table)!
    table.clear.run()
    job.rows.forEach((row, place) => { table.insert.run(place, ...row.map(bindable)) })
    const hits: number[] = []
    const failed: number[] = []
    let error: string | undefined
    job.evaluate.forEach((id, index) => {
      const condition = conditions.get(id)
      let statement = statements.get(id)
      if (statement === undefined && condition !== undefined) {
        try {
          statement = db.prepare<unknown[], unknown[]>(table.select + condition.sql).raw(true)
        } catch (e) {
          error ??= messageOf(e)
          statement = null
        }
        statements.set(id, statement)
      }
      if (statement === null || statement === undefined || condition === undefined) { failed.push(index); return }
      try {
        for (const [place] of statement.all(...condition.bindings)) hits.push(index, Number(place))
      } catch (e) {
        // An error at run time (malformed JSON...) on some row: each row is judged alone, and a row
        // the condition fails on is no match, as PostgreSQL's evaluation has it. One lookup by key per
        // row: the cost of the batch statement again, no more (decision D94).
        error ??= messageOf(e)
        failed.push(index)
        let one = perRow.get(id)
        if (one === undefined) {
          one = db.prepare<unknown[], unknown[]>(`${table.selectOne}(${condition.sql})`).raw(true)
          perRow.set(id, one)
        }
        for (let place = 0; place < job.rows.length; place++) {
          try {
            if (one.all(place, ...condition.bindings).length > 0) hits.push(index, place)
          } catch {
            // This row is no match.
          }
        }
      }
    })
    const answer: EvaluationAnswer = { id: job.id, hits: Int32Array.from(hits), failed, error }
    parentPort.postMessage(answer, [answer.hits.buffer])
  })
}
