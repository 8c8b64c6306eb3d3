// Names under which uploaded files are stored (the value kept in a `file` field).
//
// This deliberately does NOT reproduce teenybase's normalizeFileName: its snake-casing splits on
// the letter `W` (a regex-escaping bug, so `MyWork.png` becomes `my_ork_<hex>.png`), keeps the extension's case and lets odd characters through it. Here the
// name is a plain lower-case slug, so stored names are predictable and always a safe key segment.
import { randomBytes } from 'node:crypto'

const MAX_BASE = 60
const MAX_EXT = 16

/**
 * `<slug>_<10 random hex>.<ext>`: e.g. `My Photo (1).JPG` -> `my_photo_1_3fa9c2b1d0.jpg`.
 * Only `[a-z0-9_.]`; never empty, never a `/`, `\` or `..`, at most 88 characters.
 */
export function storedFileName (original: string): string {
  // Browsers send bare names, but some clients send a full path (either separator).
  const name = String(original ?? '').split(/[/\\]/).pop() ?? ''
  const dot = name.lastIndexOf('.')
  const rawBase = dot === -1 ? name : name.slice(0, dot)
  const rawExt = dot === -1 ? '' : name.slice(dot + 1)
  const ext = rawExt.replace(/[^A-Za-z0-9]/g, '').slice(0, MAX_EXT).toLowerCase() || 'dat'
  const base = rawBase.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '')
    .slice(0, MAX_BASE).replace(/_+$/, '') || 'file'
  return `${base}_${randomBytes(5).toString('hex')}.${ext}`
}
