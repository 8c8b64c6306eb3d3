// A backup killed (SIGKILL) at any point leaves no backup listed as complete: the archive is staged
// and stored before its record, and the record is what lists it. Runs the compiled command.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { bin, cleanEnv, fastbase, skip } from '../../cli-run.js'
import { forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { listBackups } from '../../../lib/backup/catalog.js'
import { readArchive } from '../../../lib/backup/archive.js'
import { createLocalStorage } from '../../../lib/files/storage/local.js'

const config = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'x',
  tables: [{ name: 'notes', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'body', type: 'text', sqlType: 'text' }] }]
}

t.test('the compiled command', { skip }, async (t) => forEachDialect(t, 'kill -9 during a backup lists nothing incomplete', async (t, dialect) => {
  const project = freshDir(t, 'project-')
  writeFileSync(join(project, 'fastbase.config.json'), JSON.stringify(config))
  const env = { DATABASE_URL: sharedDatabase(t, dialect) }
  t.equal((await fastbase(['migrate', '--apply'], { cwd: project, env })).code, 0)
  // Enough files that archiving them takes a while.
  for (let i = 0; i < 200; i++) {
    mkdirSync(join(project, 'data', 'files', 'notes'), { recursive: true })
    writeFileSync(join(project, 'data', 'files', 'notes', `file-${i}.bin`), randomBytes(32 * 1024))
  }
  const storage = createLocalStorage(join(project, 'data', 'backups'))
  t.teardown(() => storage.close())
  const verified = async (what: string): Promise<number> => {
    const listed = await listBackups(storage)
    // readArchive throws on a torn or tampered archive: every listed one must read whole.
    let whole = 0
    for (const record of listed) {
      const into = freshDir(t, 'check-')
      await readArchive(join(project, 'data', 'backups', record.archive.key), into)
      whole++
    }
    t.equal(whole, listed.length, `${what}: ${listed.length} listed, each a whole archive`)
    return listed.length
  }
  const staging = join(project, 'data', '.backup-staging')
  const stagingFolders = (): string[] => existsSync(staging) ? readdirSync(staging) : []
  // Killed at points after the backup began (its staging folder appeared): while snapshotting,
  // archiving, storing.
  for (const delay of [0, 10, 30, 60, 100, 150, 250, 400]) {
    const known = stagingFolders().length
    const child = spawn(process.execPath, [bin, 'backup'], { cwd: project, env: cleanEnv(env), stdio: 'ignore' })
    const exited = once(child, 'close')
    while (stagingFolders().length === known && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 2))
    await new Promise((resolve) => setTimeout(resolve, delay))
    child.kill('SIGKILL')
    await exited
    await verified(`killed ${delay} ms into a backup`)
  }
  const before = await verified('after the kills')
  // Evidence the kills landed inside backups: each one cut short leaves its staging folder behind
  // (the next backup sweeps those older than a day).
  const leftovers = stagingFolders()
  t.ok(leftovers.length >= 3, `${leftovers.length} kills landed inside a backup`)
  const started = Date.now()
  const run = await fastbase(['backup'], { cwd: project, env })
  t.comment(`an uninterrupted backup took ${Date.now() - started} ms`)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^stored backup \S+ \(\d+ bytes, \d+ tables?, 200 files\) in /, 'it says what it stored')
  t.equal(await verified('an uninterrupted run'), before + 1, 'the uninterrupted backup is listed')
}))
