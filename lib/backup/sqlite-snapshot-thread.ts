// The SQLite snapshot of a backup, off the event loop: `VACUUM INTO` copies the database as one read
// transaction sees it (a consistent snapshot: every commit before it, none after, while the server
// keeps writing), then the copy is checked and described. Posts back { facts } or { error }.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { integrityProblems, sqliteFacts, type DatabaseFacts } from './sqlite-inspect.js'
import { errorMessage } from '../thrown.js'

/** What lib/backup/sqlite-engine.ts starts the thread with, and what the thread posts back. */
export interface SnapshotData { source: string, target: string, busyTimeout: number }
export type SnapshotAnswer = { facts: DatabaseFacts } | { error: string }

// workerData is `any` to Node: the engine passes a SnapshotData.
const { source, target, busyTimeout }: SnapshotData = workerData
const answer = (message: SnapshotAnswer): void => {
  // Set whenever this file runs as the engine's worker, the only way it runs.
  if (parentPort === null) throw new Error('sqlite-snapshot-thread runs only as a worker thread')
  parentPort.postMessage(message)
}

try {
  const db = new Database(source, { readonly: true, fileMustExist: true })
  try {
    db.pragma(`busy_timeout = ${busyTimeout}`)
    db.prepare('VACUUM INTO ?').run(target)
  } finally {
    db.close()
  }
  const copy = new Database(target, { fileMustExist: true })
  try {
    const problems = integrityProblems(copy)
    if (problems.length > 0) throw new Error(`the snapshot fails PRAGMA integrity_check: ${problems.join('; ')}`)
    answer({ facts: sqliteFacts(copy) })
  } finally {
    copy.close()
  }
} catch (error) {
  answer({ error: errorMessage(error) })
}
