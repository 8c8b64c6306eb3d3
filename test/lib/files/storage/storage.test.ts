// The storage drivers: one behavioural suite run against the local directory driver and against
// the S3 driver talking to a real S3-compatible server (s3rver, in this process), plus the
// stored-file-name rules.
import t, { type Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { join, relative } from 'node:path'
import { Readable } from 'node:stream'
import { createLocalStorage, sweepTemporaryFiles, STALE_TEMP_MS } from '../../../../lib/files/storage/local.js'
import { createS3Storage } from '../../../../lib/files/storage/s3.js'
import { createStorage } from '../../../../lib/files/storage/index.js'
import { validateConfig } from '../../../../lib/config/validate.js'
import { checkStorage } from '../../../../lib/config/checks/storage.js'
import { storedFileName } from '../../../../lib/files/storage/file-names.js'
import type { Storage } from '../../../../lib/files/storage/types.js'
import type { DatabaseSettings } from '../../../../schemas/config.js'

// s3rver ships no type declarations; require() gives it `any` without a project-wide shim.
const S3rver = createRequire(import.meta.url)('s3rver')
const MiB = 1024 * 1024
// `gc()` without restarting node with --expose-gc: the flag applies to contexts created after it.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
/** Twice: dead Buffers' memory is released by a sweeper that the next collection waits for. */
const collectGarbage = (): void => { gc(); gc() }

interface Driver {
  storage: Storage
  /** The etag the driver gives these bytes. */
  etagOf: (bytes: Buffer) => string
  /** Every file under the driver's directory (local only), to prove failed writes leave nothing. */
  files?: () => Promise<string[]>
}

async function collect (stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}

/** Sends `total` bytes in 64 KiB chunks, then errors when `fail` is set. Nothing is prebuilt. */
function generated (total: number, fail = false): { stream: Readable, sha256: () => string } {
  const hash = createHash('sha256')
  let sent = 0
  const stream = new Readable({
    read () {
      if (sent >= total) {
        if (fail) this.destroy(new Error('client went away'))
        else this.push(null)
        return
      }
      const chunk = randomBytes(Math.min(64 * 1024, total - sent))
      sent += chunk.length
      hash.update(chunk)
      this.push(chunk)
    }
  })
  return { stream, sha256: () => hash.digest('hex') }
}

async function codeOf (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
    return undefined
  } catch (err) {
    return (err as { code?: unknown }).code
  }
}

async function behaves (t: Test, driver: Driver): Promise<void> {
  const { storage } = driver

  await t.test('put, stat, read, range, delete', async (t) => {
    const key = 'posts/hello_0123456789.txt'
    const bytes = Buffer.from('hello world!')
    const put = await storage.put(key, Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]), { contentType: 'text/plain; charset=utf-8' })
    t.match(put, { key, size: 12, contentType: 'text/plain; charset=utf-8', etag: driver.etagOf(bytes) })
    t.ok(put.lastModified instanceof Date)

    const stat = await storage.stat(key)
    t.match(stat, { key, size: 12, contentType: 'text/plain; charset=utf-8', etag: driver.etagOf(bytes) })
    t.ok(stat?.lastModified instanceof Date)
    t.equal(stat?.etag, put.etag, 'put reports what stat reports')

    t.equal((await collect(await storage.read(key))).toString(), 'hello world!')
    t.equal((await collect(await storage.read(key, { start: 2, end: 5 }))).toString(), 'llo ')
    t.equal((await collect(await storage.read(key, { start: 11, end: 11 }))).toString(), '!')
    t.equal(await codeOf(storage.read(key, { start: 5, end: 2 })), 'FB_ERR_BAD_RANGE')

    await storage.delete([key])
    t.equal(await storage.stat(key), undefined)
    t.equal(await codeOf(storage.read(key)), 'FB_ERR_NOT_FOUND')
    await storage.delete([key])
    await storage.delete(['never/was_here.txt'])
    await storage.delete([])
    t.pass('deleting missing keys is not an error')
  })

  await t.test('list: every object under a prefix, with its size; no sidecars or temporary files', async (t) => {
    const keys = ['listed/a_0123456789.txt', 'listed/deeper/b_0123456789.txt', 'listedx/c_0123456789.txt']
    for (const key of keys) await storage.put(key, Readable.from([Buffer.from(key)]), { contentType: 'text/plain' })
    const listed = (await storage.list('listed/')).map((o) => [o.key, o.size]).sort()
    t.same(listed, [[keys[0], keys[0].length], [keys[1], keys[1].length]], 'the prefix is a folder: listedx/ is not under listed/')
    t.same(await storage.list('nothing-here/'), [], 'an empty prefix lists nothing')
    t.ok((await storage.list('')).some((o) => o.key === keys[2]), 'the root lists everything')
    await storage.delete(keys)
    t.same(await storage.list('listed/'), [])
    t.equal(await codeOf(storage.list('../')), 'FB_ERR_BAD_KEY', 'a prefix is a key')
  })

  await t.test('an overwrite replaces content and metadata; an empty object works', async (t) => {
    const key = 'posts/same_0123456789.txt'
    await storage.put(key, Readable.from([Buffer.from('first version')]), { contentType: 'text/plain' })
    await storage.put(key, Readable.from([Buffer.from('second')]), { contentType: 'application/json' })
    t.match(await storage.stat(key), { size: 6, contentType: 'application/json', etag: driver.etagOf(Buffer.from('second')) })
    t.equal((await collect(await storage.read(key))).toString(), 'second')

    const empty = 'posts/empty_0123456789.dat'
    t.match(await storage.put(empty, Readable.from([]), { contentType: 'application/octet-stream' }), { size: 0 })
    t.match(await storage.stat(empty), { size: 0, etag: driver.etagOf(Buffer.alloc(0)) })
    t.equal((await collect(await storage.read(empty))).length, 0)
    await storage.delete([key, empty])
    t.equal(await storage.stat(key), undefined)
  })

  await t.test('a stream that errors leaves nothing behind', async (t) => {
    const before = await driver.files?.()
    // Small (single request) and past the first 5 MiB part (a multipart upload is under way on S3).
    for (const size of [100 * 1024, 12 * MiB]) {
      const key = `posts/broken_${size}.bin`
      await t.rejects(storage.put(key, generated(size, true).stream, { contentType: 'application/octet-stream' }), /client went away/)
      t.equal(await storage.stat(key), undefined, `${size} bytes: no object`)
    }
    if (driver.files !== undefined) t.same(await driver.files(), before, 'no temp or sidecar files left')
  })

  await t.test('bad keys are refused by every method', async (t) => {
    await storage.put('ok/keep_0123456789.txt', Readable.from([Buffer.from('keep')]), { contentType: 'text/plain' })
    const bad = ['../x', '/abs', 'a/../../b', '', 'a//b', 'a/./b', '.hidden', 'a/', 'x\\y', 'a b', 'a/..', 'ok/keep.meta.json', 'a'.repeat(1025)]
    for (const key of bad) {
      const label = JSON.stringify(key.slice(0, 20))
      t.equal(await codeOf(storage.put(key, Readable.from([Buffer.from('x')]), { contentType: 'text/plain' })), 'FB_ERR_BAD_KEY', `put ${label}`)
      t.equal(await codeOf(storage.stat(key)), 'FB_ERR_BAD_KEY', `stat ${label}`)
      t.equal(await codeOf(storage.read(key)), 'FB_ERR_BAD_KEY', `read ${label}`)
      t.equal(await codeOf(storage.delete(['ok/keep_0123456789.txt', key])), 'FB_ERR_BAD_KEY', `delete ${label}`)
    }
    t.ok(await storage.stat('ok/keep_0123456789.txt'), 'a batch with a bad key deletes nothing')
    await storage.delete(['ok/keep_0123456789.txt'])
  })

  await t.test('20 MiB streams through with bounded memory', async (t) => {
    const key = 'big/generated_0123456789.bin'
    const size = 20 * MiB
    const source = generated(size)
    // The bound is on live memory. Dropped chunks and parts still count until V8 decides to
    // collect them (it lets tens of MiB pile up), so a sample over the bound is taken again after
    // a full collection. Collecting at every sample instead would starve the upload.
    const limit = 32 * MiB
    const used = (): number => { const m = process.memoryUsage(); return m.arrayBuffers + m.heapUsed }
    collectGarbage()
    const baseline = used()
    let peak = 0
    const sample = (): void => {
      let growth = used() - baseline
      if (growth >= limit) {
        collectGarbage()
        growth = used() - baseline
      }
      peak = Math.max(peak, growth)
    }
    const sampler = setInterval(sample, 20)
    let stored: Awaited<ReturnType<typeof storage.put>>
    try {
      stored = await storage.put(key, source.stream, { contentType: 'application/octet-stream' })
    } finally {
      clearInterval(sampler)
    }
    sample()
    t.ok(peak < limit, `${storage.kind}: memory growth during the upload stays under 32 MiB (largest sample ${(peak / MiB).toFixed(1)} MiB)`)
    t.equal(stored.size, size)
    t.equal((await storage.stat(key))?.size, size)

    const hash = createHash('sha256')
    let read = 0
    for await (const chunk of await storage.read(key) as AsyncIterable<Buffer>) {
      hash.update(chunk)
      read += chunk.length
    }
    t.equal(read, size)
    t.equal(hash.digest('hex'), source.sha256(), 'same bytes back')
    const tail = await collect(await storage.read(key, { start: size - 10, end: size - 1 }))
    t.equal(tail.length, 10, 'a range at the end')
    await storage.delete([key])
  })
}

t.test('local driver', async (t) => {
  const root = join(t.testdir(), 'files')
  const storage = createLocalStorage(root)
  t.teardown(() => storage.close())
  const files = async (): Promise<string[]> => {
    const entries = await readdir(root, { recursive: true, withFileTypes: true })
    return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name))).sort()
  }
  await behaves(t, { storage, files, etagOf: (bytes) => `"${createHash('sha256').update(bytes).digest('hex')}"` })

  await t.test('layout: the file, and a sidecar with its metadata', async (t) => {
    await storage.put('posts/a_0123456789.txt', Readable.from([Buffer.from('abc')]), { contentType: 'text/plain' })
    t.same(await files(), ['posts/a_0123456789.txt', 'posts/a_0123456789.txt.meta.json'])
    await storage.delete(['posts/a_0123456789.txt'])
    t.same(await files(), [])
  })
})

t.test('stale temporary files of killed uploads are swept; fresh ones and objects stay', async (t) => {
  const root = t.testdir()
  await mkdir(join(root, 'docs', 'deep'), { recursive: true })
  const old = (Date.now() - STALE_TEMP_MS - 60_000) / 1000
  const files = {
    stale: join(root, 'docs', 'a.txt.~0123456789ab.tmp'),
    staleMeta: join(root, 'docs', 'deep', 'b.txt.meta.json.~ba9876543210.tmp'),
    fresh: join(root, 'docs', 'c.txt.~aaaaaaaaaaaa.tmp'),
    object: join(root, 'docs', 'd.txt'),
    oldObject: join(root, 'docs', 'e.tmp')
  }
  for (const path of Object.values(files)) await writeFile(path, 'x')
  for (const path of [files.stale, files.staleMeta, files.oldObject]) await utimes(path, old, old)
  t.equal(await sweepTemporaryFiles(root, STALE_TEMP_MS), 2, 'two stale temporary files removed')
  t.same((await readdir(join(root, 'docs'))).sort(), ['c.txt.~aaaaaaaaaaaa.tmp', 'd.txt', 'deep', 'e.tmp'])
  t.same(await readdir(join(root, 'docs', 'deep')), [])
})

t.test('s3 driver (s3rver)', async (t) => {
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: t.testdir(), configureBuckets: [{ name: 'test-bucket' }] })
  const { port } = await server.run() as { port: number }
  t.teardown(() => server.close())
  const storage = createS3Storage({
    bucket: 'test-bucket',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    prefix: 'app/'
  })
  t.teardown(() => storage.close())
  t.equal(storage.kind, 's3')
  // s3rver's etag is the MD5 of the bytes (for single-request uploads, like S3).
  await behaves(t, { storage, etagOf: (bytes) => `"${createHash('md5').update(bytes).digest('hex')}"` })

  await t.test('keys live under the prefix', async (t) => {
    await storage.put('posts/p_0123456789.txt', Readable.from([Buffer.from('p')]), { contentType: 'text/plain' })
    const bare = createS3Storage({ bucket: 'test-bucket', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
    t.teardown(() => bare.close())
    t.ok(await bare.stat('app/posts/p_0123456789.txt'))
    t.equal(await bare.stat('posts/p_0123456789.txt'), undefined)
    await storage.delete(['posts/p_0123456789.txt'])
  })

  await t.test('a failing bucket rejects and stops reading the body', async (t) => {
    const missing = createS3Storage({ bucket: 'no-such-bucket', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
    t.teardown(() => missing.close())
    const source = generated(12 * MiB)
    await t.rejects(missing.put('x/y.bin', source.stream, { contentType: 'application/octet-stream' }), { name: 'NoSuchBucket' })
    t.ok(source.stream.destroyed, 'the body is destroyed, not left paused')
  })

  await t.test('delete batches past 1000 keys', async (t) => {
    const keys = Array.from({ length: 1003 }, (_, i) => `many/k${i}.txt`)
    await storage.put(keys[0], Readable.from([Buffer.from('0')]), { contentType: 'text/plain' })
    await storage.put(keys[1002], Readable.from([Buffer.from('1')]), { contentType: 'text/plain' })
    await storage.delete(keys)
    t.equal(await storage.stat(keys[0]), undefined)
    t.equal(await storage.stat(keys[1002]), undefined)
  })
})

t.test('createStorage', async (t) => {
  const dataDir = t.testdir()
  const byDefault = await createStorage(undefined, dataDir)
  t.equal(byDefault.kind, 'local')
  await byDefault.put('x/y_0123456789.txt', Readable.from([Buffer.from('y')]), { contentType: 'text/plain' })
  t.same(await readdir(join(dataDir, 'files', 'x')), ['y_0123456789.txt', 'y_0123456789.txt.meta.json'])
  const relativeRoot = await createStorage({ driver: 'local', root: 'uploads' }, dataDir)
  await relativeRoot.put('z_0123456789.txt', Readable.from([Buffer.from('z')]), { contentType: 'text/plain' })
  t.ok((await readdir(join(dataDir, 'uploads'))).includes('z_0123456789.txt'))
  const s3 = await createStorage({ driver: 's3', bucket: 'b', endpoint: 'http://127.0.0.1:1', accessKeyId: 'a', secretAccessKey: 'b' }, dataDir)
  t.equal(s3.kind, 's3')
  await s3.close()
  // One S3 key alone is a config problem, reported with the others by the start-up checks (check and start alike).
  t.same(checkStorage({ storage: { driver: 's3', bucket: 'b', accessKeyId: 'only-one' } } as DatabaseSettings), ['storage: accessKeyId and secretAccessKey must be given together (without both, the AWS SDK\'s default credentials apply)'])
})

t.test('the storage config section', async (t) => {
  const problems = (storage: unknown): unknown => {
    const result = validateConfig({ jwtSecret: 'x', appUrl: 'http://localhost', tables: [], storage })
    return 'problems' in result ? result.problems : []
  }
  t.same(problems({ driver: 'local' }), [])
  t.same(problems({ driver: 'local', root: '/srv/files' }), [])
  t.same(problems({ driver: 's3', bucket: 'b', endpoint: 'https://x.r2.cloudflarestorage.com', region: 'auto', accessKeyId: 'a', secretAccessKey: 's', forcePathStyle: true, prefix: 'app' }), [])
  t.same(problems({ driver: 's3' }), ['storage.bucket: is required'])
  t.same(problems({ driver: 'gcs' }), ['storage.driver: must be one of local, s3'])
  t.same(problems({}), ['storage.driver: is required'])
  t.same(problems({ driver: 'local', bucket: 'b' }), ['storage: unknown key "bucket"'])
})

t.test('storedFileName', async (t) => {
  const SUFFIX = /_[0-9a-f]{10}\./
  const shape = /^[a-z0-9_]+_[0-9a-f]{10}\.[a-z0-9]{1,16}$/
  const cases: Array<[string, string]> = [
    ['My Photo (1).JPG', 'my_photo_1.jpg'],
    ['test123', 'test123.dat'],
    ['test-1 2.png', 'test_1_2.png'],
    ['_123_.png', '123.png'],
    ['MyWork.png', 'mywork.png'], // teenybase's bug gives my_ork_<hex>.png
    ['archive.tar.gz', 'archive_tar.gz'],
    ['file.png-a', 'file.pnga'],
    ['../../etc/passwd', 'passwd.dat'],
    ['..\\..\\win.ini', 'win.ini'],
    ['C:\\Users\\me\\report.PDF', 'report.pdf'],
    ['/abs/path/', 'file.dat'],
    ['', 'file.dat'],
    ['.', 'file.dat'],
    ['..', 'file.dat'],
    ['...', 'file.dat'],
    ['.env', 'file.env'],
    ['name.', 'name.dat'],
    ['name.?!', 'name.dat'],
    ['Ünïcödé 文件.txt', 'n_c_d.txt'],
    ['文件.txt', 'file.txt'],
    ['x.' + 'A'.repeat(40), 'x.' + 'a'.repeat(16)]
  ]
  for (const [input, expected] of cases) {
    const name = storedFileName(input)
    t.match(name, shape, `${JSON.stringify(input)} -> ${name}`)
    t.equal(name.replace(SUFFIX, '.'), expected, JSON.stringify(input))
    t.notOk(name.includes('..') || name.includes('/') || name.includes('\\'))
  }

  const long = storedFileName('a'.repeat(500) + '.txt')
  t.equal(long.replace(SUFFIX, '.'), 'a'.repeat(60) + '.txt', 'the base is cut at 60')
  t.equal(storedFileName('-'.repeat(59) + 'ab' + '-'.repeat(500)).replace(SUFFIX, '.'), 'ab.dat')
  t.equal(storedFileName('a'.repeat(59) + ' b.txt').replace(SUFFIX, '.'), 'a'.repeat(59) + '.txt', 'no trailing _ after the cut')
  t.ok(storedFileName('a'.repeat(1000) + '.' + 'b'.repeat(1000)).length <= 88)

  const names = new Set(Array.from({ length: 1000 }, () => storedFileName('same.txt')))
  t.equal(names.size, 1000, 'unique')
})
