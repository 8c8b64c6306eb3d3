// Thumbnail sizes a file field lists (`thumbs: ['100x100', '400x0', '80x80t']`), with PocketBase's
// fit modes. A size is checked once, when the config loads; a request names one by its exact text,
// and only a listed text is ever made or read, so caller text never reaches a storage key.

/** `WxH` (crop to fill, centred), `WxHt` / `WxHb` (crop, keep the top / bottom), `WxHf` (fit inside), `Wx0` / `0xH` (one side, keep ratio). */
export const THUMB_SIZE_PATTERN = '^(0|[1-9][0-9]{0,3})x(0|[1-9][0-9]{0,3})[tbf]?$'
const SIZE = new RegExp(THUMB_SIZE_PATTERN)

/** A side larger than this is no thumbnail; it also bounds what one variant may cost to make. */
export const MAX_THUMB_SIDE = 2000

export type ThumbFit = 'cover' | 'inside'
export type ThumbPosition = 'centre' | 'top' | 'bottom'

export interface ThumbSize {
  /** The size as listed (also the variant's storage key segment). */
  text: string
  /** undefined: follows the other side, keeping the ratio. */
  width?: number
  height?: number
  fit: ThumbFit
  position: ThumbPosition
}

/** Why `text` is not a size this server makes, or undefined when it is one. */
export function thumbSizeProblem (text: unknown): string | undefined {
  if (typeof text !== 'string' || !SIZE.test(text)) return 'must be WxH with an optional t, b or f (e.g. 100x100, 400x0, 0x300, 200x200f)'
  const size = parseSize(text)
  if (size.width === undefined && size.height === undefined) return '0x0 is no size'
  if ((size.width === undefined || size.height === undefined) && /[tbf]$/.test(text)) return 'a mode (t, b, f) needs both sides'
  if ((size.width ?? 0) > MAX_THUMB_SIDE || (size.height ?? 0) > MAX_THUMB_SIDE) return `a side may be at most ${MAX_THUMB_SIDE}`
  return undefined
}

/** The size `text` describes; call only on text `thumbSizeProblem` accepted. */
export function parseSize (text: string): ThumbSize {
  const [w, rest] = text.split('x')
  const mode = /[tbf]$/.exec(rest)?.[0]
  const h = mode === undefined ? rest : rest.slice(0, -1)
  const side = (value: string): number | undefined => (value === '0' ? undefined : Number(value))
  return {
    text,
    width: side(w),
    height: side(h),
    fit: mode === 'f' ? 'inside' : 'cover',
    position: mode === 't' ? 'top' : mode === 'b' ? 'bottom' : 'centre'
  }
}
