// One reader thread of lib/dialects/sqlite-readers.ts: a read-only connection to the database file
// that runs the statements it is sent, one at a time, and posts back their rows (or the error).
//
// The thread runs the source of `readerThread` (eval), not this module: a thread loading a module
// would first load whatever module hooks the process runs under (a TypeScript loader in tests,
// seconds per thread), and it needs nothing but the driver. So the function stands alone: no
// imports (but types), no closure; what it needs comes in `workerData`.
import type { MessagePort } from 'node:worker_threads'
import type { Row } from './connection.js'

export interface ReaderJob { id: number, sql: string, bindings: unknown[] }
export type ReaderAnswer = { id: number, rows: Row[] } | { id: number, error: { message: string, code?: string } }
export interface ReaderData {
  /** Absolute path of better-sqlite3's entry point. */
  driver: string
  filename: string
  busyTimeout: number
  /** Statements kept prepared, and the longest text kept. */
  cacheSize: number
  maxPreparedText: number
}

export function readerThread (): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  // require() gives `any`: on a thread started by ReaderPool, parentPort is set and workerData is its ReaderData.
  const { parentPort, workerData: data }: { parentPort: MessagePort, workerData: ReaderData } = require('node:worker_threads')
  const Database: typeof import('better-sqlite3') = require(data.driver)
  const db = new Database(data.filename, { readonly: true, fileMustExist: true })
  db.pragma(`busy_timeout = ${data.busyTimeout}`)
  type Prepared = { all: (...bindings: unknown[]) => Row[] }
  const cache = new Map<string, Prepared>()
  const prepared = (sql: string): Prepared => {
    const kept = cache.get(sql)
    if (kept !== undefined) return kept
    const statement = db.prepare<unknown[], Row>(sql)
    if (sql.length > data.maxPreparedText) return statement
    if (cache.size >= data.cacheSize) {
      const oldest = cache.keys().next()
      if (oldest.done !== true) cache.delete(oldest.value)
    }
    cache.set(sql, statement)
    return statement
  }
  // Buffers arrive as plain Uint8Arrays (structured clone); better-sqlite3 binds only Buffers.
  const bindable = (value: unknown): unknown => value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value
  parentPort.on('message', (job: ReaderJob) => {
    let answer: ReaderAnswer
    try {
      answer = { id: job.id, rows: prepared(job.sql).all(...job.bindings.map(bindable)) }
    } catch (error) {
      const e = typeof error === 'object' && error !== null ? error : {}
      const message = 'message' in e ? e.message : undefined
      answer = { id: job.id, error: { message: String(message ?? error), code: 'code' in e && typeof e.code === 'string' ? e.code : undefined } }
    }
    parentPort.postMessage(answer)
  })
}
