// Thumbnails (`?thumb=`) on both dialects and both storage drivers (local, S3 via s3rver): each
// listed size and fit mode, the formats sharp reads (GIF's first frame, AVIF), the original for
// other files, unlisted sizes and path tricks refused with FB_ERR_THUMB_SIZE, crafted images (a
// header claiming a huge size, a decompression bomb) refused with FB_ERR_THUMBNAIL_FAILED,
// concurrent first requests making one variant, variants deleted with their file, and the
// download's ETag / 304 / range / Cache-Control on a variant.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import sharp from 'sharp'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import { baseFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { animatedGif, image, pngBomb } from '../../fixtures/files/images.js'

const S3rver = createRequire(import.meta.url)('s3rver')
const ADMIN = { authorization: `Bearer ${adminToken}` }
const BUCKET = 'fastbase-thumbs'
const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: t.testdir(), configureBuckets: [{ name: BUCKET }] })
const s3Endpoint = `http://127.0.0.1:${(await s3rver.run() as { port: number }).port}`
t.teardown(() => s3rver.close())

const SIZES = ['100x100', '400x0', '0x50', '80x80t', '120x60f', '60x60b']
const drivers: Array<{ name: string, storage: () => DatabaseSettings['storage'] }> = [
  { name: 'local', storage: () => undefined },
  {
    name: 's3',
    storage: () => ({ driver: 's3', bucket: BUCKET, endpoint: s3Endpoint, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true, prefix: `app-${randomBytes(6).toString('hex')}/` })
  }
]

function configFor (storage: DatabaseSettings['storage']): DatabaseSettings {
  return {
    jwtSecret: 'x',
    appUrl: 'http://localhost',
    storage,
    limits: { thumbnailPixels: 1_000_000 },
    files: { publicCacheControl: 'public, max-age=60' },
    tables: [{
      name: 'photos',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'photo', type: 'file', sqlType: 'text', thumbs: SIZES },
        { name: 'doc', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    }, {
      name: 'albums',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'shown', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: true } },
        { name: 'photo', type: 'file', sqlType: 'text', thumbs: ['100x100'] }
      ],
      extensions: [{ name: 'rules', listRule: 'shown == true', viewRule: 'shown == true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    }]
  }
}

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.server.closeAllConnections())
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1`
}

interface Upload { content: Buffer, name: string, type: string }

async function insert (api: string, table: string, values: Record<string, unknown>, files: Upload[]): Promise<any> {
  const body = new FormData()
  for (const f of files) body.append('@filePayload', new Blob([new Uint8Array(f.content)], { type: f.type }), f.name)
  body.append('@jsonPayload', JSON.stringify({ values, returning: '*' }))
  const res = await fetch(`${api}/table/${table}/insert`, { method: 'POST', body })
  const json = await res.json() as any
  if (res.status !== 200) throw new Error(`insert: ${res.status} ${JSON.stringify(json)}`)
  return json[0]
}

async function get (url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers })
  const body = Buffer.from(await res.arrayBuffer())
  return { status: res.status, headers: res.headers, body, code: res.headers.get('fastbase-error-code') }
}

for (const driver of drivers) {
  forEachDialect(t, `thumbnails on ${driver.name} storage`, async (t, dialect) => {
    const app = await buildApp(t, configFor(driver.storage()), { dialect })
    const api = await listen(t, app)
    const storage = app.fastbase.storage
    const keys = async (prefix = 'photos/') => (await storage.list(prefix)).map((o) => o.key).sort()
    const png = await image('png', 640, 480)
    const row = await insert(api, 'photos', { title: 'png', photo: '@filePayload.0', doc: '@filePayload.1' }, [
      { content: png, name: 'Beach.png', type: 'image/png' },
      { content: Buffer.from('plain words'), name: 'notes.png', type: 'image/png' }
    ])
    const url = (name: string, query = '') => `${api}/files/photos/${row.id}/${name}${query}`

    t.test('each listed size and fit mode', async (t) => {
      const expected: Record<string, [number, number]> = { '100x100': [100, 100], '400x0': [400, 300], '0x50': [67, 50], '80x80t': [80, 80], '120x60f': [80, 60], '60x60b': [60, 60] }
      for (const [size, [width, height]] of Object.entries(expected)) {
        const res = await get(url(row.photo, `?thumb=${size}`))
        t.equal(res.status, 200, `${size}: 200`)
        t.equal(res.headers.get('content-type'), 'image/png', `${size}: a PNG of a PNG`)
        const meta = await sharp(res.body).metadata()
        t.same([meta.width, meta.height], [width, height], `${size}: ${width}x${height}`)
      }
      // 100x100 crops the centre of a red|blue image: both colours; 60x60b keeps the bottom of it too.
      const { data } = await sharp((await get(url(row.photo, '?thumb=100x100'))).body).raw().toBuffer({ resolveWithObject: true })
      t.same([data[0], data[2]], [255, 0], 'the crop keeps the left edge red')
      t.same([data[data.length - 3], data[data.length - 1]], [0, 255], 'and the right edge blue')
      t.same(await keys(`photos/${row.photo}.thumbs/`), SIZES.map((s) => `photos/${row.photo}.thumbs/${s}`).sort(), 'each variant is stored beside the original, once')
    })

    t.test('a stored variant is served like a file: ETag, 304, range, Cache-Control', async (t) => {
      const first = await get(url(row.photo, '?thumb=100x100'))
      const again = await get(url(row.photo, '?thumb=100x100'))
      t.equal(again.headers.get('etag'), first.headers.get('etag'), 'the same variant, the same ETag')
      t.not(first.headers.get('etag'), (await get(url(row.photo))).headers.get('etag'), 'not the original\'s ETag')
      t.equal(first.headers.get('cache-control'), 'public, max-age=60', 'a public table: files.publicCacheControl')
      t.equal((await get(url(row.photo, '?thumb=100x100'), { 'if-none-match': first.headers.get('etag')! })).status, 304)
      const part = await get(url(row.photo, '?thumb=100x100'), { range: 'bytes=0-7' })
      t.equal(part.status, 206)
      t.same(part.body, first.body.subarray(0, 8), 'the variant\'s first bytes')
      t.equal(part.headers.get('content-range'), `bytes 0-7/${first.body.length}`)
    })

    t.test('other files: the original; unlisted sizes and path tricks: 400', async (t) => {
      const text = await get(url(row.doc, '?thumb=100x100'))
      t.equal(text.status, 400, 'doc lists no sizes')
      t.equal(text.code, 'FB_ERR_THUMB_SIZE')
      const other = await insert(api, 'photos', { title: 'not an image', photo: '@filePayload.0' }, [{ content: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), name: 'x.png', type: 'image/png' }])
      const res = await get(`${api}/files/photos/${other.id}/${other.photo}?thumb=100x100`)
      t.equal(res.status, 200, 'a file that says image/png but is not: served as it is')
      t.equal(res.body.toString(), '<svg xmlns="http://www.w3.org/2000/svg"/>')
      const pdf = await insert(api, 'photos', { title: 'pdf', photo: '@filePayload.0' }, [{ content: Buffer.from('%PDF-1.4 ...'), name: 'x.pdf', type: 'application/pdf' }])
      const original = await get(`${api}/files/photos/${pdf.id}/${pdf.photo}?thumb=100x100`)
      t.equal(original.status, 200)
      t.equal(original.body.toString(), '%PDF-1.4 ...', 'a PDF answers itself')
      t.same(await keys(`photos/${other.photo}.thumbs/`), [], 'no variant stored for a non-image')
      for (const trick of ['101x101', '100X100', '100x100/../../x', '../photo.png', '..%2F..%2Fphotos', '100x100%00', '100x100t', ' 100x100', '0100x100', 'x'.repeat(32)]) {
        const bad = await get(url(row.photo, `?thumb=${trick}`))
        t.equal(bad.status, 400, `${trick}: 400`)
        t.equal(bad.code, 'FB_ERR_THUMB_SIZE', `${trick}: FB_ERR_THUMB_SIZE`)
      }
      const long = await get(url(row.photo, `?thumb=${'9'.repeat(40)}`))
      t.equal(long.status, 400, 'longer than any size: a validation 400')
      t.same((await keys()).filter((k) => !k.startsWith(`photos/${row.photo}.thumbs/`) && k.includes('.thumbs/')), [], 'no other variant was made')
    })

    t.test('formats: JPEG, WebP, GIF (first frame, as PNG), AVIF (as WebP)', async (t) => {
      const cases: Array<[string, Buffer, string, string]> = [
        ['jpeg', await image('jpeg', 300, 200), 'image/jpeg', 'image/jpeg'],
        ['webp', await image('webp', 300, 200), 'image/webp', 'image/webp'],
        ['gif', await animatedGif(300, 200, 3), 'image/gif', 'image/png'],
        ['avif', await image('avif', 300, 200), 'image/avif', 'image/webp']
      ]
      for (const [name, content, type, answered] of cases) {
        const r = await insert(api, 'photos', { title: name, photo: '@filePayload.0' }, [{ content, name: `p.${name}`, type }])
        const res = await get(`${api}/files/photos/${r.id}/${r.photo}?thumb=100x100`)
        t.equal(res.status, 200, `${name}: 200`)
        t.equal(res.headers.get('content-type'), answered, `${name}: answered as ${answered}`)
        const meta = await sharp(res.body).metadata()
        t.same([meta.width, meta.height, meta.pages ?? 1], [100, 100, 1], `${name}: 100x100, one frame`)
        if (name === 'gif') {
          const { data } = await sharp(res.body).raw().toBuffer({ resolveWithObject: true })
          t.same([data[0], data[1], data[2]], [0, 255, 0], 'the GIF\'s first (green) frame')
        }
      }
    })

    t.test('crafted images are refused, not decoded', async (t) => {
      const huge = await insert(api, 'photos', { title: 'huge header', photo: '@filePayload.0' }, [{ content: pngBomb(100_000, 100_000), name: 'huge.png', type: 'image/png' }])
      const bomb = await insert(api, 'photos', { title: 'bomb', photo: '@filePayload.0' }, [{ content: pngBomb(2000, 2000, 2000), name: 'bomb.png', type: 'image/png' }])
      const broken = await insert(api, 'photos', { title: 'broken', photo: '@filePayload.0' }, [{ content: png.subarray(0, 200), name: 'broken.png', type: 'image/png' }])
      for (const [what, r, reason] of [['a header claiming 100000x100000', huge, /more than 1000000 pixels/], ['a 4-megapixel bomb of a few KB', bomb, /more than 1000000 pixels/], ['a truncated PNG', broken, /could not be read/]] as const) {
        const res = await get(`${api}/files/photos/${r.id}/${r.photo}?thumb=100x100`)
        t.equal(res.status, 422, `${what}: 422`)
        t.equal(res.code, 'FB_ERR_THUMBNAIL_FAILED', `${what}: FB_ERR_THUMBNAIL_FAILED`)
        t.match(JSON.parse(res.body.toString()).message, reason, `${what}: says why`)
        t.equal((await get(`${api}/files/photos/${r.id}/${r.photo}`)).status, 200, `${what}: the original still downloads`)
      }
      t.ok(pngBomb(2000, 2000, 2000).length < 64 * 1024, 'the bomb is small on disk')
    })

    t.test('concurrent first requests make one variant; many sizes at once', async (t) => {
      const fresh = await insert(api, 'photos', { title: 'fresh', photo: '@filePayload.0' }, [{ content: png, name: 'fresh.png', type: 'image/png' }])
      const puts: string[] = []
      const put = storage.put
      storage.put = async (key, body, meta) => { puts.push(key); return await put(key, body, meta) }
      t.teardown(() => { storage.put = put })
      const answers = await Promise.all(Array.from({ length: 12 }, () => get(`${api}/files/photos/${fresh.id}/${fresh.photo}?thumb=400x0`)))
      t.same(answers.map((a) => a.status), Array(12).fill(200), 'all twelve answered')
      t.equal(new Set(answers.map((a) => a.headers.get('etag'))).size, 1, 'the same variant')
      t.same(puts, [`photos/${fresh.photo}.thumbs/400x0`], 'made and stored once')
      const all = await Promise.all(SIZES.flatMap((s) => [s, s]).map((s) => get(`${api}/files/photos/${fresh.id}/${fresh.photo}?thumb=${s}`)))
      t.same(all.map((a) => a.status), Array(SIZES.length * 2).fill(200), 'every listed size at once, twice')
      t.equal(puts.length, SIZES.length, 'each size made once')
    })

    t.test('variants go with their file: replaced, deleted', async (t) => {
      const r = await insert(api, 'photos', { title: 'to replace', photo: '@filePayload.0' }, [{ content: png, name: 'old.png', type: 'image/png' }])
      for (const s of ['100x100', '0x50']) t.equal((await get(`${api}/files/photos/${r.id}/${r.photo}?thumb=${s}`)).status, 200)
      t.equal((await keys(`photos/${r.photo}.thumbs/`)).length, 2, 'two variants stored')
      const body = new FormData()
      body.append('@filePayload', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'new.png')
      body.append('@jsonPayload', JSON.stringify({ setValues: { photo: '@filePayload.0' }, where: `id == '${r.id}'`, returning: ['photo'] }))
      const updated = await fetch(`${api}/table/photos/update`, { method: 'POST', body, headers: ADMIN })
      const [{ photo }] = await updated.json() as any
      t.same(await keys(`photos/${r.photo}`), [], 'the replaced file and its variants are gone')
      t.equal((await get(`${api}/files/photos/${r.id}/${photo}?thumb=100x100`)).status, 200)
      t.equal((await keys(`photos/${photo}.thumbs/`)).length, 1)
      const deleted = await fetch(`${api}/table/photos/delete`, { method: 'POST', body: JSON.stringify({ where: `id == '${r.id}'` }), headers: { ...ADMIN, 'content-type': 'application/json' } })
      t.equal(deleted.status, 200)
      t.same(await keys(`photos/${photo}`), [], 'the deleted row\'s file and its variants are gone')
    })

    t.test('a protected file: private, and hidden rows stay hidden', async (t) => {
      const a = await insert(api, 'albums', { photo: '@filePayload.0' }, [{ content: png, name: 'a.png', type: 'image/png' }])
      const res = await get(`${api}/files/albums/${a.id}/${a.photo}?thumb=100x100`)
      t.equal(res.status, 200)
      t.equal(res.headers.get('cache-control'), 'private, no-cache', 'a rule that is not `true`: private')
      await fetch(`${api}/table/albums/update`, { method: 'POST', body: JSON.stringify({ setValues: { shown: false }, where: `id == '${a.id}'` }), headers: { ...ADMIN, 'content-type': 'application/json' } })
      t.equal((await get(`${api}/files/albums/${a.id}/${a.photo}?thumb=100x100`)).status, 404, 'hidden: 404, stored variant or not')
      t.equal((await get(`${api}/files/albums/${a.id}/${a.photo}?thumb=999x999`)).status, 404, 'hidden: 404 before the size is looked at')
    })
  })
}

t.test('config: thumbs are checked at start', async (t) => {
  const withThumbs = (field: Record<string, unknown>): DatabaseSettings => ({
    jwtSecret: 'x',
    appUrl: 'http://localhost',
    tables: [{ name: 'p', fields: [...baseFields, { name: 'f', sqlType: 'text', ...field } as any] }]
  })
  for (const [thumbs, message] of [
    [['0x0'], /0x0 is no size/],
    [['100x0t'], /needs both sides/],
    [['3000x100'], /at most 2000/],
    [['100*100'], /must be WxH/],
    [['100x100', '100x100'], /listed twice/],
    [['../x'], /must be WxH/]
  ] as const) {
    await t.rejects(buildApp(t, withThumbs({ type: 'file', thumbs: thumbs as unknown as string[] })), { message }, `${JSON.stringify(thumbs)} refused`)
  }
  await t.rejects(buildApp(t, withThumbs({ type: 'text', thumbs: ['100x100'] })), { message: /only fields of type file take thumbs/ })
  await t.resolves(buildApp(t, withThumbs({ type: 'file', thumbs: SIZES })), 'the sizes the tests use load')
})
