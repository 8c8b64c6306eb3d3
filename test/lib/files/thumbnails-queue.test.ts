// The thumbnail maker's bounds, on a storage whose reads wait until the test lets them go: at most
// `concurrency` variants are made at once, at most `queue` wait, one more is 503
// FB_ERR_THUMBNAIL_BUSY; a refusal is remembered per original version, not tried again; an
// original over the byte bound is refused unread; a variant finished after its original was
// deleted is deleted too.
import t from 'tap'
import { Readable } from 'node:stream'
import { Thumbnails } from '../../../lib/files/thumbnails.js'
import type { Storage, StoredObject } from '../../../lib/files/storage/types.js'
import { image, pngBomb } from '../../fixtures/files/images.js'

/** The stable code a promise rejects with (undefined when it resolves). */
async function codeOf (promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(() => undefined, (error: { errorCode?: string }) => error.errorCode)
}

function gatedStorage (files: Map<string, Buffer>) {
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  const reads: string[] = []
  const stored = new Map<string, StoredObject>()
  const describe = (key: string, bytes: Buffer, contentType: string): StoredObject => ({ key, size: bytes.length, contentType, etag: `"${bytes.length}"`, lastModified: new Date(0) })
  const storage: Storage = {
    kind: 'local',
    put: async (key, body, meta) => {
      const chunks: Buffer[] = []
      for await (const c of body) chunks.push(c as Buffer)
      const object = describe(key, Buffer.concat(chunks), meta.contentType)
      stored.set(key, object)
      return object
    },
    stat: async (key) => stored.get(key) ?? (files.has(key) ? describe(key, files.get(key)!, 'image/png') : undefined),
    read: async (key) => {
      reads.push(key)
      // Opened now, as the drivers do (a file handle, a GET): a later delete does not cut it short.
      const bytes = files.get(key)!
      await gate
      return Readable.from([bytes])
    },
    list: async () => [],
    delete: async (keys) => { for (const key of keys) { stored.delete(key); files.delete(key) } },
    close: async () => {}
  }
  return { storage, open: () => open(), reads, stored, describe }
}

t.test('at most `concurrency` at once, `queue` waiting, the rest refused', async (t) => {
  const png = await image('png', 200, 200)
  const { storage, open, reads, stored, describe } = gatedStorage(new Map([['p/a.png', png]]))
  const thumbnails = new Thumbnails(storage, { concurrency: 1, queue: 1, pixels: 1_000_000, bytes: 1024 * 1024, timeout: 5000 })
  const original = describe('p/a.png', png, 'image/png')
  const first = thumbnails.variant(original, '10x10')
  const second = thumbnails.variant(original, '20x20')
  const sameAsFirst = thumbnails.variant(original, '10x10')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(await codeOf(thumbnails.variant(original, '30x30')), 'FB_ERR_THUMBNAIL_BUSY', 'a third size while one runs and one waits: busy (503)')
  t.same(reads, ['p/a.png'], 'one read runs; the second size waits for its turn')
  open()
  const [a, b, c] = await Promise.all([first, second, sameAsFirst])
  t.equal(a, c, 'the same size asked twice at once: one job, one answer')
  t.same([a?.key, b?.key], ['p/a.png.thumbs/10x10', 'p/a.png.thumbs/20x20'])
  t.same([...stored.keys()].sort(), ['p/a.png.thumbs/10x10', 'p/a.png.thumbs/20x20'])
  t.equal(reads.length, 2, 'each size read once')
  t.ok(await thumbnails.variant(original, '30x30'), 'with the queue free again, the third is made')
})

t.test('a refusal is remembered for that version of the file', async (t) => {
  const bomb = pngBomb(5000, 5000)
  const { storage, open, reads, describe } = gatedStorage(new Map([['p/b.png', bomb]]))
  open()
  const thumbnails = new Thumbnails(storage, { concurrency: 2, queue: 2, pixels: 1_000_000, bytes: 1024 * 1024, timeout: 5000 })
  const original = describe('p/b.png', bomb, 'image/png')
  t.equal(await codeOf(thumbnails.variant(original, '10x10')), 'FB_ERR_THUMBNAIL_FAILED')
  t.equal(await codeOf(thumbnails.variant(original, '10x10')), 'FB_ERR_THUMBNAIL_FAILED', 'again: refused')
  t.equal(reads.length, 1, 'without reading the file again')
  t.equal(await codeOf(thumbnails.variant({ ...original, etag: '"other"' }, '10x10')), 'FB_ERR_THUMBNAIL_FAILED')
  t.equal(reads.length, 2, 'another version of the file is tried')
})

t.test('an original over the byte bound is refused without reading it', async (t) => {
  const png = await image('png', 200, 200)
  const { storage, open, reads, describe } = gatedStorage(new Map([['p/c.png', png]]))
  open()
  const thumbnails = new Thumbnails(storage, { concurrency: 1, queue: 1, pixels: 1_000_000, bytes: png.length - 1, timeout: 5000 })
  t.equal(await codeOf(thumbnails.variant(describe('p/c.png', png, 'image/png'), '10x10')), 'FB_ERR_THUMBNAIL_FAILED')
  t.same(reads, [], 'not read')
})

t.test('a variant finished after its original was deleted goes too', async (t) => {
  const png = await image('png', 200, 200)
  const files = new Map([['p/d.png', png]])
  const { storage, open, stored, describe } = gatedStorage(files)
  const thumbnails = new Thumbnails(storage, { concurrency: 1, queue: 1, pixels: 1_000_000, bytes: 1024 * 1024, timeout: 5000 })
  const job = codeOf(thumbnails.variant(describe('p/d.png', png, 'image/png'), '10x10'))
  await new Promise((resolve) => setImmediate(resolve))
  files.delete('p/d.png')
  open()
  t.equal(await job, 'FB_ERR_FILE_NOT_FOUND', 'the download is a 404')
  t.same([...stored.keys()], [], 'and the variant is not left behind')
})
