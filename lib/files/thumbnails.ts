// Thumbnails of stored images (decision D123): made once, on the first request for a listed size,
// with sharp (libvips, on libuv's thread pool, off the event loop), stored beside the original in
// the same storage and served from there like any file. Bounded: the input's pixels (read from its
// header before anything is decoded, so a decompression bomb is refused unopened), its bytes, the
// number made at once and how many wait, and the time one may take. One variant is made once per
// process however many requests ask for it at once; across instances two may make the same one,
// which is harmless: each write is atomic (a rename on disk, one PUT on S3) and the bytes are equal.
import { Readable } from 'node:stream'
import type { Sharp, SharpOptions } from 'sharp'
import { errors, FastbaseError } from '../errors.js'
import type { Storage, StoredObject } from './storage/types.js'
import { parseSize, type ThumbSize } from './thumb-sizes.js'
import { variantKey } from './variants.js'

export interface ThumbnailLimits {
  /** Variants made at once by this process (each holds one libuv thread while it runs). */
  concurrency: number
  /** Variants waiting for a turn; one more is refused (503). */
  queue: number
  /** Pixels (width x height, as the header says) of an image thumbnails are made of. */
  pixels: number
  /** Bytes of an original thumbnails are made of (it is read whole). */
  bytes: number
  /** Milliseconds one variant may take to make. */
  timeout: number
}

type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif'
type OutputFormat = 'jpeg' | 'png' | 'webp'

/** What each readable format is written as: a GIF's first frame as PNG, AVIF (slow to encode) as WebP. */
const OUTPUT: Record<ImageFormat, OutputFormat> = { jpeg: 'jpeg', png: 'png', gif: 'png', webp: 'webp', avif: 'webp' }
const OUTPUT_TYPE: Record<OutputFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' }

/** Stored types worth reading for a thumbnail; the bytes then decide (a type is only what the uploader said). */
export const THUMBNAIL_TYPES = /^image\/(png|jpeg|gif|webp|avif)(;|$)/i

/**
 * The image format the bytes start with, from their signature: only these reach the decoder, so
 * SVG, TIFF, PDF and the rest that libvips could also read are never parsed for a thumbnail.
 */
export function sniffImage (head: Buffer): ImageFormat | undefined {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg'
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png'
  const ascii = head.subarray(0, 16).toString('latin1')
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'gif'
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'webp'
  if (ascii.slice(4, 12) === 'ftypavif' || ascii.slice(4, 12) === 'ftypavis') return 'avif'
  return undefined
}

/** Refusals remembered per process; the oldest is forgotten first. */
const REMEMBERED_REFUSALS = 1000

type SharpFactory = (input: Buffer, options: SharpOptions) => Sharp

/** sharp, imported on the first thumbnail: a process that never makes one never loads libvips. */
async function importSharp (): Promise<SharpFactory> {
  const { default: sharp } = await import('sharp')
  // Each original is read once per variant: libvips' operation cache would only hold memory.
  sharp.cache(false)
  return sharp
}

export class Thumbnails {
  private readonly making = new Map<string, Promise<StoredObject | undefined>>()
  private readonly waiting: Array<() => void> = []
  private running = 0
  /** Variants refused (no image, over a bound, unreadable), per original version: not tried again. */
  private readonly refused = new Map<string, FastbaseError | 'original'>()
  private sharp: Promise<SharpFactory> | undefined

  constructor (private readonly storage: Storage, private readonly limits: ThumbnailLimits) {}

  /**
   * What `?thumb=<size>` answers for the file at `key` (a size its field lists): the stored variant,
   * made now if missing, or the original when it is not an image thumbnails are made of; undefined
   * when the file is missing. A stored variant costs one stat, as a plain download does.
   */
  async serve (key: string, size: string): Promise<StoredObject | undefined> {
    const stored = await this.storage.stat(variantKey(key, size))
    if (stored !== undefined) return stored
    const original = await this.storage.stat(key)
    if (original === undefined) return undefined
    return await this.variant(original, size) ?? original
  }

  /**
   * The stored variant of `original` at `size`, made now if missing; undefined when the original
   * is not an image thumbnails are made of (the caller serves it as is).
   */
  async variant (original: StoredObject, size: string): Promise<StoredObject | undefined> {
    if (!THUMBNAIL_TYPES.test(original.contentType)) return undefined
    const key = variantKey(original.key, size)
    const memo = `${key}\n${original.etag}`
    const refused = this.refused.get(memo)
    if (refused === 'original') return undefined
    if (refused !== undefined) throw refused
    let job = this.making.get(key)
    if (job === undefined) {
      job = this.queued(() => this.make(original, key, parseSize(size)))
        .then((made) => { if (made === undefined) this.remember(memo, 'original'); return made }, (error: unknown) => {
          if (error instanceof FastbaseError && error.errorCode === 'FB_ERR_THUMBNAIL_FAILED' && !timedOut.has(error)) this.remember(memo, error)
          throw error
        })
        .finally(() => this.making.delete(key))
      this.making.set(key, job)
    }
    return await job
  }

  private remember (memo: string, outcome: FastbaseError | 'original'): void {
    const oldest = this.refused.size >= REMEMBERED_REFUSALS ? this.refused.keys().next() : undefined
    if (oldest?.done === false) this.refused.delete(oldest.value)
    this.refused.set(memo, outcome)
  }

  /** Runs `work` when fewer than `concurrency` run; refuses when `queue` already wait. */
  private async queued<T> (work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.queue) throw errors.thumbnailBusy()
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await work()
    } finally {
      // The turn passes to the next waiter as is; with none, one fewer runs.
      const next = this.waiting.shift()
      if (next === undefined) this.running--
      else next()
    }
  }

  private async make (original: StoredObject, key: string, size: ThumbSize): Promise<StoredObject | undefined> {
    // Made by a job that ended after this request looked (or by another instance): not made again.
    const made = await this.storage.stat(key)
    if (made !== undefined) return made
    if (original.size > this.limits.bytes) throw errors.thumbnailFailed(`the image is larger than ${this.limits.bytes} bytes`)
    const input = await readAll(await this.storage.read(original.key), original.size)
    const format = sniffImage(input)
    if (format === undefined) return undefined
    const output = OUTPUT[format]
    const sharp = await (this.sharp ??= importSharp())
    let bytes: Buffer
    try {
      // limitInputPixels is checked against the header before decoding; one page: a GIF's first frame.
      bytes = await sharp(input, { limitInputPixels: this.limits.pixels, pages: 1, sequentialRead: true })
        .rotate()
        .resize({ width: size.width, height: size.height, fit: size.fit, position: size.position, withoutEnlargement: true })
        .timeout({ seconds: Math.max(1, Math.ceil(this.limits.timeout / 1000)) })
        .toFormat(output)
        .toBuffer()
    } catch (error) {
      const failed = errors.thumbnailFailed(reasonOf(error, this.limits))
      if (isTimeout(error)) timedOut.add(failed)
      throw failed
    }
    const stored = await this.storage.put(key, Readable.from([bytes]), { contentType: OUTPUT_TYPE[output] })
    // Deleted while the variant was made: its cleanup has run already, so this one goes now.
    if (await this.storage.stat(original.key) === undefined) {
      await this.storage.delete([key])
      throw errors.fileNotFound()
    }
    return stored
  }
}

/** Refusals that a busy moment may have caused (a timeout): answered, but not remembered. */
const timedOut = new WeakSet<FastbaseError>()

const isTimeout = (error: unknown): boolean => error instanceof Error && /timeout/i.test(error.message)

/** sharp's messages name libvips internals; the answer says which bound or that the image is unreadable. */
function reasonOf (error: unknown, limits: ThumbnailLimits): string {
  const message = error instanceof Error ? error.message : ''
  if (/pixel limit/i.test(message)) return `the image has more than ${limits.pixels} pixels`
  if (isTimeout(error)) return `making it took longer than ${limits.timeout} ms`
  return 'the image could not be read'
}

/** The whole stream, at most `expected` bytes (the size storage reported). */
async function readAll (stream: NodeJS.ReadableStream, expected: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    total += buffer.length
    // Grown since its stat (replaced by hand): bounded all the same.
    if (total > expected) throw errors.thumbnailFailed('the file changed while it was read')
    chunks.push(buffer)
  }
  return Buffer.concat(chunks, total)
}
