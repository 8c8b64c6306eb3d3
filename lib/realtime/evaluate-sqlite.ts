// Conditions evaluated for SQLite, whose statements run synchronously: on a thread of their own
// (lib/realtime/evaluate-thread.ts), so that evaluating a change for any number of classes never
// holds the event loop. This side gives each class an id and sends its condition once, when the
// class is admitted (a subscribe pays for its own classes, not the first write after it); the thread
// keeps a prepared statement per class until the class is released. Per batch only the rows and the
// ids of the classes travel, and the matches come back as pairs of indexes.
import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'
import type { Dialect } from '../dialects/types.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { ConditionEvaluator, Judged, RowBatch } from './evaluate.js'
import { evaluatorThread, PLACE, type ClassNews, type EvaluationAnswer, type EvaluationJob, type TableDefinition } from './evaluate-thread.js'

const THREAD_SOURCE = `(${evaluatorThread.toString()})()`
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

export class SqliteEvaluator implements ConditionEvaluator {
  private worker?: Worker
  // Per thread: what it has been told. A new thread (after a crash) is told everything again.
  private ids = new WeakMap<Judged, number>()
  private defined = new WeakSet<TableDescriptor>()
  private nextClass = 1
  private nextJob = 1
  private released: number[] = []
  private readonly pending = new Map<number, { resolve: (answer: EvaluationAnswer) => void, reject: (error: Error) => void }>()

  constructor (
    private readonly dialect: Dialect,
    private readonly log: { debug?: (obj: object, msg: string) => void }
  ) {}

  /** A new class: its condition goes to the thread now. */
  admit (c: Judged): void {
    const fresh: ClassNews['classes'] = []
    this.idOf(c, fresh)
    const news: ClassNews = { classes: fresh, released: this.released.splice(0) }
    this.thread().postMessage(news)
  }

  /** A class without subscribers: its statement is dropped (with the next message). */
  release (c: Judged): void {
    const id = this.ids.get(c)
    if (id === undefined) return
    this.ids.delete(c)
    this.released.push(id)
  }

  async matches<C extends Judged> (batch: RowBatch, classes: C[]): Promise<C[][]> {
    const { table } = batch
    const worker = this.thread()
    // Classes not admitted (or admitted before a thread restart) are sent with the batch.
    const fresh: EvaluationJob['classes'] = []
    const evaluate = classes.map((c) => this.idOf(c, fresh))
    const define = this.defined.has(table) ? undefined : this.definition(table)
    this.defined.add(table)
    const rows = batch.rows.map((row) => table.fieldList.map((f) => row[f.name] === null || row[f.name] === undefined ? null : this.dialect.encode(f, row[f.name])))
    const job: EvaluationJob = { id: this.nextJob++, define, table: table.name, classes: fresh, released: this.released.splice(0), evaluate, rows }
    const answer = await new Promise<EvaluationAnswer>((resolve, reject) => {
      this.pending.set(job.id, { resolve, reject })
      worker.postMessage(job)
    })
    if (answer.failed.length > 0) this.log.debug?.({ table: table.name, classes: answer.failed.length, error: answer.error }, 'realtime: a subscription could not be evaluated')
    const out = batch.rows.map((): C[] => [])
    const { hits } = answer
    for (let k = 0; k < hits.length; k += 2) out[hits[k + 1]].push(classes[hits[k]])
    return out
  }

  private idOf (c: Judged, fresh: ClassNews['classes']): number {
    let id = this.ids.get(c)
    if (id === undefined) {
      id = this.nextClass++
      this.ids.set(c, id)
      fresh.push({ id, sql: c.condition.sql, bindings: c.condition.bindings })
    }
    return id
  }

  private definition (table: TableDescriptor): TableDefinition {
    const q = this.dialect.quote
    const columns = table.fieldList.map((f) => [q(f.name), this.dialect.columnType(f), f.collate === undefined ? '' : `COLLATE ${f.collate}`].join(' '))
    return {
      name: table.name,
      drop: `DROP TABLE IF EXISTS ${table.quoted}`,
      create: `CREATE TABLE ${table.quoted} (${PLACE} INTEGER PRIMARY KEY, ${columns.join(', ')})`,
      clear: `DELETE FROM ${table.quoted}`,
      insert: `INSERT INTO ${table.quoted} VALUES (?, ${table.fieldList.map(() => '?').join(', ')})`,
      select: `SELECT ${PLACE} FROM ${table.quoted} WHERE `,
      selectOne: `SELECT ${PLACE} FROM ${table.quoted} WHERE ${PLACE} = ? AND `
    }
  }

  private thread (): Worker {
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData: { driver: DRIVER } })
    worker.unref()
    worker.on('message', (answer: EvaluationAnswer) => {
      const pending = this.pending.get(answer.id)
      this.pending.delete(answer.id)
      pending?.resolve(answer)
    })
    const lost = (error: Error): void => {
      if (this.worker !== worker) return
      this.worker = undefined
      this.ids = new WeakMap()
      this.defined = new WeakSet()
      this.released = []
      for (const pending of this.pending.values()) pending.reject(error)
      this.pending.clear()
    }
    worker.on('error', lost)
    worker.on('exit', () => lost(new Error('The realtime evaluation thread stopped')))
    this.worker = worker
    return worker
  }

  close (): void {
    const worker = this.worker
    this.worker = undefined
    for (const pending of this.pending.values()) pending.reject(new Error('realtime is closing'))
    this.pending.clear()
    void worker?.terminate()
  }
}
