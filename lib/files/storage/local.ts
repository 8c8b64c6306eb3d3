// Files in a directory (the default driver, decision D20). Each object is `<root>/<key>` plus a
// sidecar `<root>/<key>.meta.json` with { contentType, etag, size }. Writes stream into a temp
// file next to the target and are renamed into place, so a reader never sees half a file and a
// failed upload leaves nothing. Temp names contain `~`, which no valid key can, so they never
// collide with objects.
import { createHash, randomBytes } from 'node:crypto'
import { type Dir, mkdirSync, type Stats } from 'node:fs'
import { type FileHandle, mkdir, open, opendir, readFile, readdir, rename, rm, stat as fsStat, unlink, writeFile } from 'node:fs/promises'
import { dirname, resolve, sep } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { SIDECAR_SUFFIX, assertValidKey, assertValidRange, storageError } from './keys.js'
import type { Storage, StoredObject } from './types.js'
import { isObject } from '../../plain.js'

interface Sidecar { contentType: string, etag: string, size: number }

const DEFAULT_TYPE = 'application/octet-stream'
export const TEMP_NAME = /\.~[0-9a-f]{12}\.tmp$/
/**
 * A temporary file untouched this long belongs to an upload that will never finish (the process was
 * killed mid-upload): Node ends any request after 5 minutes, and an upload writes as it receives.
 */
export const STALE_TEMP_MS = 15 * 60_000

/** Removes temporary files older than `maxAgeMs` under `root`; answers how many. */
export async function sweepTemporaryFiles (root: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  let removed = 0
  const dirs = [root]
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    let handle: Dir
    try {
      handle = await opendir(dir)
    } catch {
      continue
    }
    for await (const entry of handle) {
      const path = resolve(dir, entry.name)
      if (entry.isDirectory()) dirs.push(path)
      else if (TEMP_NAME.test(entry.name)) {
        const stats = await fsStat(path).catch(() => undefined)
        if (stats !== undefined && now - stats.mtimeMs > maxAgeMs && await rm(path, { force: true }).then(() => true, () => false)) removed++
      }
    }
  }
  return removed
}

export function createLocalStorage (root: string): Storage {
  const base = resolve(root)
  mkdirSync(base, { recursive: true })
  const inside = base.endsWith(sep) ? base : base + sep
  // Left by a process killed mid-upload: swept now and then, without holding up the start.
  const sweep = () => { sweepTemporaryFiles(base, STALE_TEMP_MS).catch(() => {}) }
  sweep()
  const sweeper = setInterval(sweep, STALE_TEMP_MS).unref()

  /** The file of a key; the containment check is defence in depth behind the key validation. */
  function pathOf (key: string): string {
    assertValidKey(key)
    const path = resolve(base, key)
    if (!path.startsWith(inside)) throw storageError('FB_ERR_BAD_KEY', `Invalid storage key ${JSON.stringify(key)}: outside the storage root`)
    return path
  }

  return {
    kind: 'local',

    async put (key, body, meta) {
      const path = pathOf(key)
      await mkdir(dirname(path), { recursive: true })
      const suffix = `.~${randomBytes(6).toString('hex')}.tmp`
      const tmp = path + suffix
      const metaTmp = sidecarOf(path) + suffix
      const hash = createHash('sha256')
      let size = 0
      const measure = new Transform({
        transform (chunk: Buffer, _encoding, callback) {
          hash.update(chunk)
          size += chunk.length
          callback(null, chunk)
        }
      })
      // Opened here rather than by createWriteStream, so after a failure the file is known to be
      // closed before it is removed (a lazily opened stream could create it after the cleanup).
      const file = await open(tmp, 'wx')
      try {
        await pipeline(body, measure, file.createWriteStream())
        const sidecar: Sidecar = { contentType: meta.contentType, etag: `"${hash.digest('hex')}"`, size }
        await writeFile(metaTmp, JSON.stringify(sidecar), { flag: 'wx' })
        // Metadata first: the object becomes visible with the data rename, its metadata already there.
        await rename(metaTmp, sidecarOf(path))
        await rename(tmp, path)
        const stats = await fsStat(path)
        return { key, size, contentType: sidecar.contentType, etag: sidecar.etag, lastModified: stats.mtime }
      } catch (err) {
        await file.close().catch(() => {})
        await Promise.all([rm(tmp, { force: true }), rm(metaTmp, { force: true })])
        throw err
      }
    },

    async stat (key) {
      const path = pathOf(key)
      let stats: Stats
      try {
        stats = await fsStat(path)
      } catch (err) {
        if (isMissing(err)) return undefined
        throw err
      }
      if (!stats.isFile()) return undefined
      return describe(key, stats, await readSidecar(path))
    },

    async read (key, range) {
      const path = pathOf(key)
      if (range !== undefined) assertValidRange(range)
      // Opened now, so a missing object rejects here instead of erroring the stream later.
      let file: FileHandle
      try {
        file = await open(path, 'r')
      } catch (err) {
        if (isMissing(err)) throw storageError('FB_ERR_NOT_FOUND', `File not found ${key}`)
        throw err
      }
      if (!(await file.stat()).isFile()) {
        await file.close()
        throw storageError('FB_ERR_NOT_FOUND', `File not found ${key}`)
      }
      return file.createReadStream(range === undefined ? {} : { start: range.start, end: range.end })
    },

    async list (prefix) {
      const folder = prefix === '' ? base : pathOf(prefix.replace(/\/+$/, ''))
      const found: StoredObject[] = []
      const dirs = [folder]
      for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
        const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => { if (isMissing(err)) return []; throw err })
        for (const entry of entries) {
          const path = resolve(dir, entry.name)
          if (entry.isDirectory()) dirs.push(path)
          else if (entry.isFile() && !TEMP_NAME.test(entry.name) && !entry.name.endsWith(SIDECAR_SUFFIX)) {
            const key = path.slice(inside.length).split(sep).join('/')
            const stats = await fsStat(path).catch(() => undefined)
            if (stats !== undefined) found.push(describe(key, stats, await readSidecar(path)))
          }
        }
      }
      return found
    },

    async delete (keys) {
      // Every key is checked before anything is removed.
      const paths = keys.map(pathOf)
      await Promise.all(paths.map(async (path) => {
        // Data first, so the object disappears at once; the sidecar is only read next to it.
        await unlinkIfPresent(path)
        await unlinkIfPresent(sidecarOf(path))
      }))
    },

    async close () {
      clearInterval(sweeper)
    }
  }
}

function sidecarOf (path: string): string {
  return path + SIDECAR_SUFFIX
}

async function readSidecar (path: string): Promise<Sidecar | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(sidecarOf(path), 'utf8'))
    if (!isObject(value)) return undefined
    const { contentType, etag, size } = value
    if (typeof contentType !== 'string' || typeof etag !== 'string' || typeof size !== 'number') return undefined
    return { contentType, etag, size }
  } catch {
    return undefined
  }
}

/**
 * A sidecar that is missing, unreadable or for another size (a file copied in by hand, or the
 * instant between the two renames of an overwrite) is ignored: the type falls back to
 * octet-stream and the etag to one made of size and mtime, which still changes with the content.
 */
function describe (key: string, stats: Stats, sidecar: Sidecar | undefined): StoredObject {
  const fits = sidecar !== undefined && sidecar.size === stats.size
  return {
    key,
    size: stats.size,
    contentType: fits ? sidecar.contentType : DEFAULT_TYPE,
    etag: fits ? sidecar.etag : `"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`,
    lastModified: stats.mtime
  }
}

async function unlinkIfPresent (path: string): Promise<void> {
  try {
    await unlink(path)
  } catch (err) {
    // A directory where the key would be (because `<key>/x` exists) is not an object either.
    if (!isMissing(err) && codeOf(err) !== 'EISDIR') throw err
  }
}

/** ENOTDIR: a parent of the path is a file, so the path cannot exist. */
function isMissing (err: unknown): boolean {
  const code = codeOf(err)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** The `code` of a Node.js system error (ENOENT...). */
function codeOf (err: unknown): unknown {
  return isObject(err) ? err.code : undefined
}
