// Reader threads for SQLite. better-sqlite3 runs a statement synchronously, so a read that takes
// long (a search over many matches, an expansion) would hold the event loop, and with it every other
// request, for as long as it runs. Such reads are sent here instead: a few threads, each with its own
// read-only connection (WAL lets them read while the writer writes), started on first use. A read
// that outlives the statement timeout fails as a timeout at once, and its thread is terminated
// (better-sqlite3 offers no other way to stop a statement from outside). Termination takes effect
// only when the statement returns to JavaScript, so the thread keeps its place in the pool until it
// has exited: runaway statements never run on more threads than the pool holds. A read that finds
// the queue full fails as busy.
import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'
import { readerThread, type ReaderAnswer, type ReaderData, type ReaderJob } from './sqlite-reader-thread.js'
import { MAX_PREPARED_TEXT, type Row } from './connection.js'

export interface ReaderSettings {
  filename: string
  /** Threads started at most (0: none; reads run on the caller's thread). */
  threads: number
  busyTimeout: number
  /** Milliseconds a read may run on its thread; 0: no limit. */
  timeout: number
  /** Reads waiting for a thread at most, per thread; more are refused as busy. */
  queuePerThread: number
  statementCacheSize: number
}

/** The error of a read that took longer than the timeout (lib/dialects/sqlite.ts#isTimeout knows it). */
export const READ_TIMEOUT = 'FB_SQLITE_READ_TIMEOUT'
/** The error of a read refused because every thread is busy and the queue full (#isBusy knows it). */
export const READERS_BUSY = 'FB_SQLITE_READERS_BUSY'

interface Pending { job: ReaderJob, resolve: (rows: Row[]) => void, reject: (error: Error) => void, timer?: NodeJS.Timeout }
interface Reader {
  worker: Worker
  running?: Pending
  /** Terminated after a timeout, not exited yet (its statement may still be running): takes no reads. */
  retired?: boolean
}

const THREAD_SOURCE = `(${readerThread.toString()})()`
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3')

export class ReaderPool {
  private readonly readers: Reader[] = []
  private readonly queue: Pending[] = []
  private nextId = 0
  private closed = false

  constructor (private readonly settings: ReaderSettings) {}

  read (sql: string, bindings: readonly unknown[]): Promise<Row[]> {
    if (this.closed) return Promise.reject(new Error('The database connection is closed'))
    if (this.queue.length >= this.settings.queuePerThread * this.settings.threads) return Promise.reject(codedError(READERS_BUSY, 'Every SQLite reader thread is busy'))
    return new Promise<Row[]>((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, sql, bindings: [...bindings] }, resolve, reject })
      this.dispatch()
    })
  }

  close (): void {
    this.closed = true
    for (const pending of this.queue.splice(0)) this.fail(pending, new Error('The database connection is closed'))
    // Not awaited: a thread inside a long statement exits only when the statement ends.
    for (const reader of this.readers.splice(0)) {
      if (reader.running !== undefined) this.fail(reader.running, new Error('The database connection is closed'))
      void reader.worker.terminate()
    }
  }

  /** Hands queued reads to idle threads, starting threads up to the limit. */
  private dispatch (): void {
    while (this.queue.length > 0) {
      const reader = this.readers.find((r) => r.running === undefined && r.retired !== true) ?? this.start()
      if (reader === undefined) return
      const pending = this.queue.shift()!
      reader.running = pending
      // The timeout counts from here: a queued read waits behind reads each bounded the same way.
      if (this.settings.timeout > 0) pending.timer = setTimeout(() => this.expire(pending), this.settings.timeout)
      reader.worker.postMessage(pending.job)
    }
  }

  private start (): Reader | undefined {
    if (this.readers.length >= this.settings.threads) return undefined
    const { filename, busyTimeout, statementCacheSize } = this.settings
    const workerData: ReaderData = { driver: DRIVER, filename, busyTimeout, cacheSize: statementCacheSize, maxPreparedText: MAX_PREPARED_TEXT }
    const worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData })
    // An idle thread must not keep the process alive (a host that forgets close() still exits).
    worker.unref()
    const reader: Reader = { worker }
    worker.on('message', (answer: ReaderAnswer) => {
      const pending = reader.running
      if (pending === undefined || pending.job.id !== answer.id) return
      reader.running = undefined
      if ('error' in answer) this.fail(pending, codedError(answer.error.code, answer.error.message))
      else this.succeed(pending, answer.rows)
      this.dispatch()
    })
    worker.on('error', (error) => this.lose(reader, error))
    worker.on('exit', () => this.lose(reader, new Error('A SQLite reader thread stopped')))
    this.readers.push(reader)
    return reader
  }

  /** The read timed out: it fails now; its thread is terminated and replaced once it has exited. */
  private expire (pending: Pending): void {
    const reader = this.readers.find((r) => r.running === pending)
    if (reader === undefined) return
    reader.running = undefined
    reader.retired = true
    this.fail(pending, codedError(READ_TIMEOUT, 'The read took longer than the statement timeout'))
    void reader.worker.terminate()
  }

  /** A thread that exited (terminated, or failed): its read fails, and its place goes to a new thread. */
  private lose (reader: Reader, error: Error): void {
    const at = this.readers.indexOf(reader)
    if (at < 0) return
    this.readers.splice(at, 1)
    if (reader.running !== undefined) this.fail(reader.running, error)
    if (!this.closed) this.dispatch()
  }

  private succeed (pending: Pending, rows: Row[]): void {
    clearTimeout(pending.timer)
    pending.resolve(rows.map(withBuffers))
  }

  private fail (pending: Pending, error: Error): void {
    clearTimeout(pending.timer)
    pending.reject(error)
  }
}

function codedError (code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code })
}

/** Blobs come back from the thread as plain Uint8Arrays: the rest of fastbase reads Buffers, as from the driver. */
function withBuffers (row: Row): Row {
  for (const key in row) {
    const value = row[key]
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  }
  return row
}
