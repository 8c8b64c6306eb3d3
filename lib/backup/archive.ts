// The archive file: a gzipped tar of the database, the local files and, last, the manifest with a
// checksum of every other entry. Reading one checks all of it before anything uses it. tar is loaded
// on the first backup or restore, not at start.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, readdir, stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { errors } from '../errors.js'
import { MANIFEST_ENTRY, parseManifest, type ArchiveEntry, type Manifest } from './manifest.js'
import { errorCode, errorMessage } from '../thrown.js'

/** sha256 (hex) and size of a file, read as a stream. */
export async function digestFile (path: string): Promise<{ sha256: string, size: number }> {
  const hash = createHash('sha256')
  let size = 0
  // Without an encoding the stream reads Buffers.
  const stream: AsyncIterable<Buffer> = createReadStream(path)
  for await (const chunk of stream) {
    hash.update(chunk)
    size += chunk.length
  }
  return { sha256: hash.digest('hex'), size }
}

/** Every regular file under `root` for which `keep(name)` holds, as paths relative to it with `/`. */
export async function walkFiles (root: string, keep: (name: string) => boolean = () => true): Promise<string[]> {
  const found: string[] = []
  const dirs = [root]
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return []; throw err })
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) dirs.push(path)
      else if (entry.isFile() && keep(entry.name)) found.push(relative(root, path).split(sep).join('/'))
    }
  }
  return found.sort()
}

/** Writes `<cwd>/<entry>` for each entry, then the manifest (already in `cwd`), into a gzipped tar at `file`. */
export async function writeArchive (file: string, cwd: string, entries: ArchiveEntry[]): Promise<void> {
  const { create } = await import('tar')
  await create({ gzip: true, file, cwd, portable: true, noDirRecurse: true, strict: true }, [...entries.map((e) => e.path), MANIFEST_ENTRY])
}

/**
 * Unpacks `file` into the empty folder `into` and answers its manifest once every entry is there
 * with the size and checksum it names and nothing else is. Anything else is FB_ERR_BAD_ARCHIVE.
 */
export async function readArchive (file: string, into: string): Promise<Manifest> {
  const { extract } = await import('tar')
  const unexpected: string[] = []
  try {
    // Only plain files and folders, never outside `into` (tar strips `..` and absolute paths).
    await extract({ file, cwd: into, strict: true, filter: (path, entry) => {
      const type = 'type' in entry ? entry.type : undefined
      if (type === 'File' || type === 'OldFile' || type === 'Directory') return true
      unexpected.push(path)
      return false
    } })
  } catch (err) {
    if (errorCode(err) === 'ENOENT') throw errors.badArchive(`${file} does not exist`)
    throw errors.badArchive(`the file is not a readable gzipped tar archive (${errorMessage(err)})`)
  }
  if (unexpected.length > 0) throw errors.badArchive(`it holds links or special files (${unexpected.slice(0, 3).join(', ')})`)
  const manifestText = await readFile(join(into, MANIFEST_ENTRY), 'utf8').catch(() => { throw errors.badArchive(`it has no ${MANIFEST_ENTRY} (cut short, or not a fastbase backup)`) })
  const manifest = parseManifest(manifestText)
  const listed = new Set<string>([MANIFEST_ENTRY])
  const base = resolve(into) + sep
  for (const entry of manifest.entries) {
    const path = resolve(into, entry.path)
    if (!path.startsWith(base)) throw errors.badArchive(`the manifest names a path outside the archive: ${entry.path}`)
    listed.add(entry.path)
    const present = await stat(path).catch(() => undefined)
    if (present === undefined) throw errors.badArchive(`${entry.path} is missing`)
    const actual = await digestFile(path)
    if (actual.size !== entry.size || actual.sha256 !== entry.sha256) throw errors.badArchive(`${entry.path} does not match its checksum (damaged archive)`)
  }
  const extra = (await walkFiles(into)).filter((path) => !listed.has(path))
  if (extra.length > 0) throw errors.badArchive(`it holds files its manifest does not list (${extra.slice(0, 3).join(', ')})`)
  if (!manifest.entries.some((e) => e.path === manifest.database.entry)) throw errors.badArchive(`the manifest names no ${manifest.database.entry}`)
  return manifest
}
