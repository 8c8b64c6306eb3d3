// The SQLite snapshot of a backup, off the event loop: `VACUUM INTO` copies the database as one read
// transaction sees it (a consistent snapshot: every commit before it, none after, while the server
// keeps writing), then the copy is checked and described. Posts back { facts } or { error }.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { integrityProblems, sqliteFacts } from './sqlite-inspect.js'

const { source, target, busyTimeout } = workerData as { source: string, target: string, busyTimeout: number }

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
    parentPort!.postMessage({ facts: sqliteFacts(copy) })
  } finally {
    copy.close()
  }
} catch (error) {
  parentPort!.postMessage({ error: (error as Error).message ?? String(error) })
}
