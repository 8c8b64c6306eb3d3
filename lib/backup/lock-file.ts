// A restore's hold on a SQLite database: a file beside it, made only if absent (O_EXCL), naming the
// process. A lock whose process is gone on this machine (killed) is taken over.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { errors } from '../errors.js'
import { errorCode } from '../thrown.js'

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errorCode(err) === 'EPERM'
  }
}

/** Holds `path` until the answer is called; FB_ERR_RESTORE_REFUSED while another process holds it. */
export async function holdLockFile (path: string, what: string, takeOver = true): Promise<() => Promise<void>> {
  try {
    await writeFile(path, `${process.pid}\n${hostname()}\n`, { flag: 'wx' })
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err
    const [pid, host] = (await readFile(path, 'utf8').catch(() => '')).split('\n')
    if (takeOver && host === hostname() && Number(pid) > 0 && !alive(Number(pid))) {
      await rm(path, { force: true })
      return await holdLockFile(path, what, false)
    }
    throw errors.restoreRefused(`${what} is running already (pid ${pid || '?'} on ${host || '?'}); wait for it to end${host === hostname() ? '' : `, or remove ${path} if that process is gone`}`)
  }
  return async () => { await rm(path, { force: true }) }
}
