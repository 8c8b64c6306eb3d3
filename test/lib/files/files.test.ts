// Files over real HTTP (multipart is a protocol matter) on both dialects and both storage drivers:
// upload on insert/update/edit, download with ETag / 304 / ranges, replace, clear and delete cleanup,
// failures that must leave nothing stored, rule-hidden records, and a 50 MiB streamed upload.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { readdir } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { Readable } from 'node:stream'
import { randomBytes, createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { S3Client, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { buildApp, forEachDialect, adminToken, dialects } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

// s3rver ships no type declarations.
const S3rver = createRequire(import.meta.url)('s3rver')
const ADMIN = { authorization: `Bearer ${adminToken}` }

interface StorageUnderTest { config: DatabaseSettings['storage'], keys: () => Promise<string[]> }
interface Driver { name: 'local' | 's3', open: (t: Test, dataDir: () => string) => Promise<StorageUnderTest> }

const BUCKET = 'fastbase-test'
// One S3-compatible server for the whole file, closed when the file's tests end.
const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: t.testdir(), configureBuckets: [{ name: BUCKET }] })
const s3Endpoint = `http://127.0.0.1:${(await s3rver.run() as { port: number }).port}`
t.teardown(() => s3rver.close())

const drivers: Driver[] = [
  {
    name: 'local',
    open: async (_t, dataDir) => ({
      config: undefined,
      keys: async () => {
        const files = await readdir(join(dataDir(), 'files', 'docs')).catch(() => [] as string[])
        return files.filter((f) => !f.endsWith('.meta.json') && !f.startsWith('.')).map((f) => `docs/${f}`)
      }
    })
  },
  {
    name: 's3',
    open: async () => {
      const endpoint = s3Endpoint
      // Each app gets its own key prefix, so apps sharing the bucket never see each other's files.
      const prefix = `app-${randomBytes(6).toString('hex')}/`
      const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
      return {
        config: { driver: 's3', bucket: BUCKET, endpoint, region: 'us-east-1', ...credentials, forcePathStyle: true, prefix },
        keys: async () => {
          const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials })
          const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))
          client.destroy()
          return (listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length))
        }
      }
    }
  }
]

function configFor (storage: DatabaseSettings['storage'], maxUploadSize = 1024 * 1024): DatabaseSettings {
  return {
    jwtSecret: 'x',
    appUrl: 'http://localhost',
    maxUploadSize,
    storage,
    tables: [{
      name: 'docs',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true, unique: true },
        { name: 'public', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: true } },
        { name: 'attachment', type: 'file', sqlType: 'text' },
        { name: 'cover', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'public == true', createRule: 'title != \'blocked\'', updateRule: 'true', deleteRule: 'true' }]
    }]
  }
}

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  // Runs before the app's own teardown (last registered, first run): keep-alive sockets would hold close() for 72 s.
  t.teardown(() => app.server.closeAllConnections())
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1`
}

function form (json: unknown, files: Array<{ content: string | Buffer, name: string, type?: string }>): FormData {
  const body = new FormData()
  for (const f of files) body.append('@filePayload', new Blob([typeof f.content === 'string' ? f.content : new Uint8Array(f.content)], { type: f.type ?? 'text/plain' }), f.name)
  body.append('@jsonPayload', JSON.stringify(json))
  return body
}

for (const driver of drivers) {
  forEachDialect(t, `files on ${driver.name} storage`, async (t, dialect) => {
    let app: FastifyInstance | undefined
    const storage = await driver.open(t, () => app!.fastbase.options.dataDir)
    app = await buildApp(t, configFor(storage.config), { dialect })
    const api = await listen(t, app)
    const keys = async () => (await storage.keys()).sort()
    const post = async (path: string, body: FormData | object, headers: Record<string, string> = {}) => {
      const isForm = body instanceof FormData
      const res = await fetch(`${api}${path}`, { method: 'POST', body: isForm ? body : JSON.stringify(body), headers: { ...headers, ...(isForm ? {} : { 'content-type': 'application/json' }) } })
      return { status: res.status, json: await res.json() as any }
    }

    const created = await post('/table/docs/insert', form({ values: { title: 'one', attachment: '@filePayload.0', cover: '@filePayload.1' }, returning: '*' }, [
      { content: 'hello world', name: 'Hello World.txt' },
      { content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), name: 'cover.PNG', type: 'image/png' }
    ]))
    t.equal(created.status, 200, JSON.stringify(created.json))
    const doc = created.json[0]
    t.match(doc.attachment, /^hello_world_[0-9a-f]{10}\.txt$/, 'a normalised, unique stored name')
    t.match(doc.cover, /^cover_[0-9a-f]{10}\.png$/)
    t.same(await keys(), [`docs/${doc.attachment}`, `docs/${doc.cover}`].sort(), 'both files stored')

    t.test('@jsonPayload sent as a Blob (Swagger UI, FormData clients) reads as JSON', async (t) => {
      const body = new FormData()
      body.append('@filePayload', new Blob(['blob json']), 'b.txt')
      body.append('@jsonPayload', new Blob([JSON.stringify({ values: { title: 'as blob', attachment: '@filePayload' }, returning: ['title', 'attachment'] })], { type: 'application/json' }), 'blob')
      const res = await post('/table/docs/insert', body)
      t.equal(res.status, 200, JSON.stringify(res.json))
      t.match(res.json, [{ title: 'as blob', attachment: /^b_[^/]*\.txt$|\.txt$/ }])
      const bad = new FormData()
      bad.append('@jsonPayload', new Blob(['{not json']), 'blob')
      t.equal((await post('/table/docs/insert', bad)).status, 400, 'invalid JSON in a Blob is a 400')
      // Leaves storage as it found it for the tests after this one.
      t.equal((await post('/table/docs/delete', { where: "title = 'as blob'" }, ADMIN)).status, 200)
    })

    t.test('download: headers, conditional GET, ranges', async (t) => {
      const url = `${api}/files/docs/${doc.id}/${doc.attachment}`
      const res = await fetch(url)
      t.equal(res.status, 200)
      t.equal(await res.text(), 'hello world')
      t.match(res.headers.get('content-type'), /^text\/plain/)
      t.equal(res.headers.get('content-length'), '11')
      t.match(res.headers.get('content-disposition'), `inline; filename="${doc.attachment}"`)
      t.equal(res.headers.get('x-content-type-options'), 'nosniff')
      const etag = res.headers.get('etag')!
      t.ok(etag, 'an ETag')
      t.equal((await fetch(url, { headers: { 'if-none-match': etag } })).status, 304)
      const partial = await fetch(url, { headers: { range: 'bytes=6-10' } })
      t.equal(partial.status, 206)
      t.equal(await partial.text(), 'world')
      t.equal(partial.headers.get('content-range'), 'bytes 6-10/11')
      const suffix = await fetch(url, { headers: { range: 'bytes=-5' } })
      t.equal(await suffix.text(), 'world')
      const bad = await fetch(url, { headers: { range: 'bytes=50-60' } })
      t.equal(bad.status, 416)
      t.equal(bad.headers.get('content-range'), 'bytes */11')
      t.equal((await fetch(`${api}/files/docs/${doc.id}/not_its_file_1234567890.txt`)).status, 404, 'not a value of the record')
      t.equal((await fetch(`${api}/files/docs/nosuchid/${doc.attachment}`)).status, 404, 'no such record')
      t.equal((await fetch(`${api}/files/nope/${doc.id}/${doc.attachment}`)).status, 404, 'no such table')
      t.equal((await fetch(`${api}/files/docs/${doc.id}/..%2F..%2Fetc%2Fpasswd`)).status, 400, 'traversal in the path is refused')
    })

    t.test('a rule that hides the record hides its files', async (t) => {
      const hidden = await post('/table/docs/insert', form({ values: { title: 'secret', public: false, attachment: '@filePayload' }, returning: ['id', 'attachment'] }, [{ content: 'secret', name: 's.txt' }]))
      t.equal(hidden.status, 200)
      const url = `${api}/files/docs/${hidden.json[0].id}/${hidden.json[0].attachment}`
      t.equal((await fetch(url)).status, 404, 'anonymous: 404')
      t.equal((await fetch(url, { headers: ADMIN })).status, 200, 'admins pass')
      await post('/table/docs/delete', { where: 'title == \'secret\'' }, ADMIN)
    })

    t.test('replace, clear and delete remove the old files after the commit', async (t) => {
      const replaced = await post(`/table/docs/edit/${doc.id}?returning=attachment`, form({ attachment: '@filePayload.0' }, [{ content: 'v2', name: 'v2.txt' }]))
      t.equal(replaced.status, 200, JSON.stringify(replaced.json))
      t.notOk((await keys()).includes(`docs/${doc.attachment}`), 'the replaced file is gone')
      t.ok((await keys()).includes(`docs/${replaced.json.attachment}`))
      const cleared = await post(`/table/docs/edit/${doc.id}?returning=cover`, { cover: null })
      t.same(cleared.json, { cover: null })
      t.notOk((await keys()).includes(`docs/${doc.cover}`), 'the cleared file is gone')
      const unchanged = await post(`/table/docs/update`, { where: `id == '${doc.id}'`, setValues: { attachment: '', title: 'one!' }, returning: 'attachment' })
      t.same(unchanged.json, [{ attachment: replaced.json.attachment }], '\'\' means no change')
      const updated = await post('/table/docs/update', form({ where: `id == '${doc.id}'`, setValues: { cover: '@filePayload' }, returning: ['cover'] }, [{ content: 'c', name: 'c.gif', type: 'image/gif' }]))
      t.equal(updated.status, 200, 'multipart on update too')
      await post('/table/docs/delete', { where: `id == '${doc.id}'` })
      t.same(await keys(), [], 'deleting the row deletes its files')
    })

    t.test('failures store nothing', async (t) => {
      const before = await keys()
      const cases: Array<[string, FormData, number]> = [
        ['createRule filters the row', form({ values: { title: 'blocked', attachment: '@filePayload' } }, [{ content: 'x', name: 'x.txt' }]), 403],
        ['validation error', form({ values: { title: 5, attachment: '@filePayload' } }, [{ content: 'x', name: 'x.txt' }]), 400],
        ['missing file part', form({ values: { title: 'two', attachment: '@filePayload.1' } }, [{ content: 'x', name: 'x.txt' }]), 400],
        ['missing json part', (() => { const f = new FormData(); f.append('@filePayload', new Blob(['x']), 'x.txt'); return f })(), 400],
        ['oversize', form({ values: { title: 'big', attachment: '@filePayload' } }, [{ content: Buffer.alloc(1024 * 1024 + 10), name: 'big.bin' }]), 413]
      ]
      await post('/table/docs/insert', { values: { title: 'taken' } })
      cases.push(['unique violation', form({ values: { title: 'taken', attachment: '@filePayload' } }, [{ content: 'x', name: 'x.txt' }]), 400])
      for (const [what, body, status] of cases) {
        const res = await post('/table/docs/insert', body)
        t.equal(res.status, status, what)
        t.equal(res.json.code, status, `${what}: standard error body`)
        t.same(await keys(), before, `${what}: nothing left in storage`)
      }
      const ref = await post('/table/docs/insert', { values: { title: 'sneaky', attachment: 'someone_elses_0123456789.txt' } })
      t.match(ref.json, { code: 400, data: { attachment: { _errors: [/uploaded/] } } }, 'a client cannot point a record at a file it did not upload')
      const traversal = await post('/table/docs/insert', form({ values: { title: 'trav', attachment: '@filePayload' }, returning: 'attachment' }, [{ content: 'x', name: '../../etc/passwd' }]))
      t.match(traversal.json[0].attachment, /^passwd_[0-9a-f]{10}\.dat$/, 'a traversal name is reduced to a safe one')
    })

    t.test('OpenAPI documents multipart writes and the download route', async (t) => {
      const doc = await (await fetch(`${api}/doc`)).json() as any
      t.ok(doc.paths['/api/v1/table/docs/insert'].post.requestBody.content['multipart/form-data'], 'multipart body on insert')
      t.ok(doc.paths['/api/v1/files/{table}/{rid}/{*}']?.get ?? Object.keys(doc.paths).find((p: string) => p.startsWith('/api/v1/files/')), 'download route')
    })
  })
}

// One dialect at a time: memory is sampled process-wide, so uploads must not overlap.
for (const dialect of dialects) await t.test(`${dialect}: a 50 MiB upload is streamed with bounded memory`, async (t) => {
  const app = await buildApp(t, configFor(undefined, 64 * 1024 * 1024), { dialect })
  const api = await listen(t, app)
  const boundary = `fb${randomBytes(8).toString('hex')}`
  const chunk = randomBytes(1024 * 1024)
  const hash = createHash('sha256')
  async function * body () {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n${JSON.stringify({ values: { title: 'big', attachment: '@filePayload' }, returning: ['id', 'attachment'] })}\r\n`)
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="@filePayload"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    for (let i = 0; i < 50; i++) { hash.update(chunk); yield chunk }
    yield Buffer.from(`\r\n--${boundary}--\r\n`)
  }
  global.gc?.()
  const base = process.memoryUsage()
  let peak = 0
  const sampler = setInterval(() => {
    const m = process.memoryUsage()
    peak = Math.max(peak, (m.heapUsed + m.arrayBuffers) - (base.heapUsed + base.arrayBuffers))
  }, 20)
  const result = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = httpRequest(`${api}/table/docs/insert`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode!, body: text }))
    })
    req.on('error', reject)
    Readable.from(body()).pipe(req)
  })
  clearInterval(sampler)
  t.equal(result.status, 200, result.body)
  const [row] = JSON.parse(result.body)
  t.ok(peak < 40 * 1024 * 1024, `memory growth during the upload stayed bounded (${(peak / 1024 / 1024).toFixed(1)} MiB for 50 MiB)`)
  const download = await fetch(`${api}/files/docs/${row.id}/${row.attachment}`)
  t.equal(download.headers.get('content-length'), String(50 * 1024 * 1024))
  const got = createHash('sha256')
  for await (const part of download.body as unknown as AsyncIterable<Uint8Array>) got.update(part)
  t.equal(got.digest('hex'), hash.digest('hex'), 'the download is byte-identical')
})
