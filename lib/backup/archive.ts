// The archive file: a gzipped tar of the database, the local files and, last, the manifest with a
// checksum of every other entry. Reading one checks all of it before anything uses it, and writes
// nothing the manifest does not list (decision D87). tar is loaded
// on the first backup or restore, not at start.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readdir, writeFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { FastbaseError, errors } from '../errors.js'
import { FILES_FOLDER, MANIFEST_ENTRY, entriesProblem, isPlainPath, parseManifest, type ArchiveEntry, type Manifest } from './manifest.js'
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

/** A manifest larger than this is refused unread (about 30,000 entries of the longest paths). */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024
/** More entries than a manifest of MAX_MANIFEST_BYTES can list (each takes 90 bytes at least): the first pass stops holding their names. */
const MAX_ENTRIES = Math.floor(MAX_MANIFEST_BYTES / 90)

interface Scanned { manifest: Manifest, manifestText: Buffer, sizes: Map<string, number> }

/** Folders an archive may hold besides its files: under files/ (tar tools other than fastbase's write them). */
const isFolderEntry = (path: string, type: string): boolean => type === 'Directory' && (path === FILES_FOLDER || path.startsWith(`${FILES_FOLDER}/`))

/** An entry's path as a message shows it (a tar path has no length limit). */
const shown = (path: string): string => (path.length > 200 ? `${path.slice(0, 200)}…` : path)

async function tarred<T> (file: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (errorCode(err) === 'ENOENT') throw errors.badArchive(`${file} does not exist`)
    if (err instanceof FastbaseError) throw err
    throw errors.badArchive(`the file is not a readable gzipped tar archive (${errorMessage(err)})`)
  }
}

/**
 * The first pass, which writes nothing: every entry's header, and the manifest's text. Refuses an
 * archive with an entry the manifest may not name (links, `..`, absolute paths), one entry twice, or
 * entries other than those its manifest lists with the sizes it lists.
 */
async function scanArchive (file: string, accept: (manifest: Manifest) => void): Promise<Scanned> {
  const { list } = await import('tar')
  const sizes = new Map<string, number>()
  const problems: string[] = []
  const manifestChunks: Buffer[] = []
  await tarred(file, async () => {
    await list({ file, strict: true, onReadEntry: (entry) => {
      const path = entry.type === 'Directory' ? entry.path.replace(/\/+$/, '') : entry.path
      if (problems.length > 0) return
      if (sizes.size >= MAX_ENTRIES) problems.push(`it holds more entries (${MAX_ENTRIES}) than any manifest can list`)
      else if (sizes.has(path)) problems.push(`it holds ${shown(path)} more than once`)
      else if (!isPlainPath(path)) problems.push(`it holds an entry that leaves the archive's folder (${shown(path)})`)
      else if (isFolderEntry(path, entry.type)) sizes.set(path, -1)
      else if (entry.type !== 'File' && entry.type !== 'OldFile') problems.push(`it holds links or special files (${shown(path)})`)
      else if (path === MANIFEST_ENTRY && entry.size > MAX_MANIFEST_BYTES) problems.push(`its ${MANIFEST_ENTRY} is larger than ${MAX_MANIFEST_BYTES} bytes`)
      else {
        sizes.set(path, entry.size)
        if (path === MANIFEST_ENTRY) entry.on('data', (chunk: Buffer) => { manifestChunks.push(chunk) })
      }
    } })
  })
  if (problems.length > 0) throw errors.badArchive(problems[0])
  if (!sizes.has(MANIFEST_ENTRY)) throw errors.badArchive(`it has no ${MANIFEST_ENTRY} (cut short, or not a fastbase backup)`)
  const manifestText = Buffer.concat(manifestChunks)
  const manifest = parseManifest(manifestText.toString('utf8'))
  const problem = entriesProblem(manifest)
  if (problem !== undefined) throw errors.badArchive(problem)
  accept(manifest)
  const listed = new Map(manifest.entries.map((e) => [e.path, e.size]))
  for (const [path, size] of listed) {
    if (!sizes.has(path)) throw errors.badArchive(`${path} is missing`)
    if (sizes.get(path) !== size) throw errors.badArchive(`${path} is ${sizes.get(path) ?? 0} bytes, its manifest says ${size} (damaged archive)`)
  }
  const extra = [...sizes].filter(([path, size]) => path !== MANIFEST_ENTRY && size !== -1 && !listed.has(path)).map(([path]) => shown(path))
  if (extra.length > 0) throw errors.badArchive(`it holds files its manifest does not list (${extra.slice(0, 3).join(', ')})`)
  return { manifest, manifestText, sizes: listed }
}

/**
 * Unpacks `file` into the empty folder `into` and answers its manifest once every entry is there
 * with the size and checksum it names and nothing else is. A first pass reads the headers and the
 * manifest and writes nothing; `accept` may refuse the manifest then. The second pass writes only
 * the entries the manifest lists, each once and at its listed size: what is written is bounded by
 * the manifest's sizes. Anything else is FB_ERR_BAD_ARCHIVE.
 */
export async function readArchive (file: string, into: string, accept: (manifest: Manifest) => void = () => {}): Promise<Manifest> {
  const { manifest, manifestText, sizes } = await scanArchive(file, accept)
  const { extract } = await import('tar')
  const problems: string[] = []
  const written = new Set<string>()
  await tarred(file, async () => {
    // The file may have changed since the first pass: each entry is checked again as it comes.
    await extract({ file, cwd: into, strict: true, filter: (path, entry) => {
      const type = 'type' in entry ? entry.type : undefined
      // Folders come with the files in them; the manifest is written from the first pass's bytes.
      if (type === 'Directory' || path === MANIFEST_ENTRY) return false
      const size = sizes.get(path)
      if (size === undefined || written.has(path) || (type !== 'File' && type !== 'OldFile') || entry.size !== size) {
        problems.push(shown(path))
        return false
      }
      written.add(path)
      return true
    } })
  })
  if (problems.length > 0 || written.size !== sizes.size) throw errors.badArchive(`it changed while it was read (${problems.slice(0, 3).join(', ')})`)
  await writeFile(join(into, MANIFEST_ENTRY), manifestText)
  for (const entry of manifest.entries) {
    const actual = await digestFile(join(into, entry.path))
    if (actual.size !== entry.size || actual.sha256 !== entry.sha256) throw errors.badArchive(`${entry.path} does not match its checksum (damaged archive)`)
  }
  return manifest
}
