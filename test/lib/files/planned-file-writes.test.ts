// Writes with files run from write plans (lib/crud/write-plans.ts) as other writes do: an insert or an
// edit that gives a file field a file of this request, or clears it, runs from the plan the first
// write of its shape built;
// an edit that replaces a file reads the file it releases under the statement's own condition (the
// id and the updateRule), in the same transaction. What falls outside a plan ('' for "no change", a
// value that is no file of this request) answers as before, from the unplanned path.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { readdir } from 'node:fs/promises'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { planCacheCounts } from '../../../lib/crud/plan-cache.js'
import { DELETED_FILES_HEADER, UPLOADED_FILES_HEADER } from '../../../lib/files/headers.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }

const config: DatabaseSettings = {
  jwtSecret: 'x',
  appUrl: 'http://localhost',
  tables: [{
    name: 'docs',
    autoSetUid: true,
    fields: [
      { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true },
      { name: 'title', type: 'text', sqlType: 'text' },
      { name: 'public', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: true } },
      { name: 'locked', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
      { name: 'attachment', type: 'file', sqlType: 'text' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'public == true', createRule: 'true', updateRule: 'locked == false', deleteRule: 'true' }]
  }]
}

/** A multipart body: the JSON part, and one file part unless `content` is null. */
function form (json: unknown, content: string | null = 'x'): FormData {
  const body = new FormData()
  if (content !== null) body.append('@filePayload', new Blob([content], { type: 'text/plain' }), 'f.txt')
  body.append('@jsonPayload', JSON.stringify(json))
  return body
}

/**
 * The plan-cache look-ups `write` makes, hits and misses. A write checks the caller's right to write
 * from the cache too, so a file write is compared with a write of the same kind without a file, which
 * runs from its plan.
 */
async function lookups (write: () => Promise<unknown>): Promise<[number, number]> {
  const { hits, misses } = planCacheCounts
  await write()
  return [planCacheCounts.hits - hits, planCacheCounts.misses - misses]
}

async function listen (t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.server.closeAllConnections())
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1/table/docs`
}

forEachDialect(t, 'writes with files from plans', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const api = await listen(t, app)
  const stored = async () => (await readdir(join(app.fastbase.options.dataDir, 'files', 'docs')).catch(() => [] as string[])).filter((f) => !f.endsWith('.meta.json') && !f.startsWith('.')).sort()
  const post = async (path: string, body: FormData | object, headers: Record<string, string> = {}) => {
    const isForm = body instanceof FormData
    const res = await fetch(`${api}${path}`, { method: 'POST', body: isForm ? body : JSON.stringify(body), headers: { ...headers, ...(isForm ? {} : { 'content-type': 'application/json' }) } })
    return { status: res.status, json: await res.json() as any, uploaded: res.headers.get(UPLOADED_FILES_HEADER), deleted: res.headers.get(DELETED_FILES_HEADER) }
  }
  const insert = async (title: string, extra: object = {}) => await post('/insert', form({ values: { title, attachment: '@filePayload', ...extra }, returning: ['id', 'attachment'] }, title))

  t.test('an insert with a file runs from the plan its shape built', async (t) => {
    const plain = async (title: string) => await post('/insert', form({ values: { title, public: true }, returning: ['id', 'attachment'] }, null))
    const first = await insert('a')
    t.equal(first.status, 200, JSON.stringify(first.json))
    t.equal((await plain('p1')).status, 200)
    const planned = await lookups(async () => await plain('p2'))
    t.equal(planned[1], 0, 'a plain insert of a known shape builds nothing')
    let second: Awaited<ReturnType<typeof insert>> | undefined
    t.same(await lookups(async () => { second = await insert('b') }), planned, 'the second insert with a file looks up what a planned insert does')
    t.equal(second?.status, 200, JSON.stringify(second?.json))
    t.match(second?.uploaded, second?.json[0].attachment, 'the upload is reported as kept')
    t.ok((await stored()).includes(second?.json[0].attachment), 'and stored')
  })

  t.test('an edit that replaces or clears a file runs from the plan its shape built and releases the old file', async (t) => {
    const a = (await insert('replace-a')).json[0]
    const b = (await insert('replace-b')).json[0]
    const plain = async (title: string) => await post(`/edit/${a.id}?returning=attachment`, form({ title }, null))
    const first = await post(`/edit/${a.id}?returning=attachment`, form({ attachment: '@filePayload' }, 'a2'))
    t.equal(first.status, 200, JSON.stringify(first.json))
    t.match(first.deleted, a.attachment, 'the replaced file is reported')
    t.equal((await plain('t1')).status, 200)
    const planned = await lookups(async () => await plain('t2'))
    t.equal(planned[1], 0, 'a plain edit of a known shape builds nothing')
    let second: Awaited<ReturnType<typeof post>> | undefined
    t.same(await lookups(async () => { second = await post(`/edit/${b.id}?returning=attachment`, form({ attachment: '@filePayload' }, 'b2')) }), planned, 'the second edit with a file looks up what a planned edit does')
    if (second === undefined) return
    t.equal(second.status, 200, JSON.stringify(second.json))
    t.match(second.deleted, b.attachment)
    const files = await stored()
    t.notOk(files.includes(a.attachment) || files.includes(b.attachment), 'the replaced files are gone')
    t.ok(files.includes(first.json.attachment) && files.includes(second.json.attachment), 'the new ones are kept')
    const cleared = await post(`/edit/${b.id}?returning=attachment`, { attachment: '@null' })
    t.same(cleared.json, { attachment: null })
    t.notOk((await stored()).includes(second.json.attachment), 'a cleared file is gone')
  })

  t.test('an edit the updateRule refuses releases nothing and keeps nothing', async (t) => {
    const doc = (await insert('locked-one', { locked: true })).json[0]
    const before = await stored()
    const refused = await post(`/edit/${doc.id}?returning=attachment`, form({ attachment: '@filePayload' }, 'nope'))
    t.equal(refused.status, 404, JSON.stringify(refused.json))
    t.equal(refused.deleted, null, 'nothing reported released')
    t.same(await stored(), before, 'the row\'s file stays, the upload is removed')
    const row = await post('/select', { where: `id == '${doc.id}'`, select: 'attachment' }, ADMIN)
    t.same(row.json, [{ attachment: doc.attachment }], 'the row still names its file')
  })

  t.test('a released file of a row the caller cannot view is removed but not reported', async (t) => {
    const doc = (await insert('hidden-one', { public: false })).json[0]
    const replaced = await post(`/edit/${doc.id}?returning=id`, form({ attachment: '@filePayload' }, 'h2'))
    t.equal(replaced.status, 200, JSON.stringify(replaced.json))
    t.equal(replaced.deleted, null, 'its old name is not told to a caller the viewRule refuses')
    t.notOk((await stored()).includes(doc.attachment), 'yet the file is gone')
  })

  t.test('values a plan does not take answer as before', async (t) => {
    const doc = (await insert('unplanned')).json[0]
    const unchanged = await post(`/edit/${doc.id}?returning=attachment,title`, form({ attachment: '', title: 'renamed' }))
    t.same(unchanged.json, { attachment: doc.attachment, title: 'renamed' }, '\'\' means no change')
    const foreign = await post(`/edit/${doc.id}`, { attachment: 'someone_elses_0123456789.txt' })
    t.match(foreign.json, { code: 400, data: { attachment: { _errors: [/uploaded/] } } }, 'an edit cannot point a record at a file it did not upload')
    const inserted = await post('/insert', { values: { title: 'sneaky', attachment: 'someone_elses_0123456789.txt' } })
    t.match(inserted.json, { code: 400, data: { attachment: { _errors: [/uploaded/] } } }, 'nor can an insert')
    t.ok((await stored()).includes(doc.attachment), 'the file stays')
  })
})
