// Multipart writes beyond file tables, and what a write tells about storage: every table's writes
// take multipart bodies (`@jsonPayload`, plain fields), only file tables take file parts; a write
// that stored or removed files says so in x-uploaded-files (key -> name sent) and x-deleted-files
// (keys), listing a removed file only when the caller could see it.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }
const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const config: DatabaseSettings = {
  jwtSecret: 'multipart-writes-secret',
  appUrl: 'http://localhost',
  tables: [
    {
      name: 'notes',
      autoSetUid: true,
      fields: [id, { name: 'title', type: 'text', sqlType: 'text', notNull: true }, { name: 'n', type: 'integer', sqlType: 'integer' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    },
    {
      name: 'docs',
      autoSetUid: true,
      fields: [
        id,
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'public', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: true } },
        { name: 'attachment', type: 'file', sqlType: 'text' },
        { name: 'scan', type: 'file', sqlType: 'text', noSelect: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'public == true', createRule: 'title != \'blocked\'', updateRule: 'true', deleteRule: 'true' }]
    }
  ]
}

type Part = { name: string, value: string } | { name: string, filename: string, content: string }

/** A multipart/form-data body, written out as a client sends it. */
function multipart (parts: Part[]): { payload: Buffer, headers: Record<string, string> } {
  const boundary = 'fastbase-test-boundary'
  const chunks = parts.map((p) => 'filename' in p
    ? `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: text/plain\r\n\r\n${p.content}\r\n`
    : `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`)
  return { payload: Buffer.from(`${chunks.join('')}--${boundary}--\r\n`), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

function poster (app: FastifyInstance) {
  return async (url: string, parts: Part[], headers: Record<string, string> = {}) => {
    const body = multipart(parts)
    return await app.inject({ method: 'POST', url: `/api/v1${url}`, payload: body.payload, headers: { ...body.headers, ...headers } })
  }
}
const json = (value: unknown): Part => ({ name: '@jsonPayload', value: JSON.stringify(value) })

void forEachDialect(t, 'multipart writes to a table without a file field', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const post = poster(app)
  const inserted = await post('/table/notes/insert', [json({ values: { title: 'one', n: 1 }, returning: ['title', 'n'] })])
  t.equal(inserted.statusCode, 200, inserted.body)
  t.same(inserted.json(), [{ title: 'one', n: 1 }], '@jsonPayload')
  const fields = await post('/table/notes/insert', [{ name: 'values.title', value: 'two' }, { name: 'values.n', value: '2' }, { name: 'returning', value: 'title,n' }])
  t.same(fields.json(), [{ title: 'two', n: 2 }], 'plain fields, typed by the body schema')
  const updated = await post('/table/notes/update', [json({ where: "title == 'one'", setValues: { n: 5 }, returning: ['n'] })])
  t.same(updated.json(), [{ n: 5 }], 'update')
  const [row] = (await app.inject({ method: 'GET', url: '/api/v1/table/notes/select?where=title=="two"', headers: ADMIN })).json()
  const edited = await post(`/table/notes/edit/${row.id}`, [{ name: 'n', value: '7' }])
  t.same(edited.json(), { id: row.id }, 'edit')
  const file = await post('/table/notes/insert', [json({ values: { title: 'three' } }), { name: '@filePayload', filename: 'a.txt', content: 'x' }])
  t.equal(file.statusCode, 400)
  t.match(file.json(), { code: 400, message: /table notes has no file field/ })
  t.notOk(file.headers['x-uploaded-files'], 'nothing stored')
})

void forEachDialect(t, 'x-uploaded-files and x-deleted-files', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const post = poster(app)
  const header = (res: { headers: Record<string, unknown> }, name: string) => {
    const value = res.headers[name]
    return typeof value === 'string' ? JSON.parse(value) : undefined
  }
  const res = await post('/table/docs/insert', [json({ values: { title: 'one', attachment: '@filePayload.0', scan: '@filePayload.1' }, returning: ['id', 'attachment'] }), { name: '@filePayload', filename: 'Héllo.txt', content: 'hello' }, { name: '@filePayload', filename: 'scan.txt', content: 'scan' }], ADMIN)
  t.equal(res.statusCode, 200, res.body)
  const [{ id: docId, attachment }] = res.json()
  t.match(res.headers['x-uploaded-files'], /^[\x20-\x7e]+$/, 'ASCII only')
  const uploaded = header(res, 'x-uploaded-files')
  t.equal(uploaded[`docs/${attachment}`], 'Héllo.txt', 'key -> the name it was sent under')
  t.equal(Object.keys(uploaded).length, 2)
  const scanKey = Object.keys(uploaded).find((k) => k !== `docs/${attachment}`)!
  t.equal(header(res, 'x-deleted-files'), undefined, 'nothing removed')

  // Replacing both files as a non-admin: the replaced attachment is reported, the hidden scan is not.
  const replaced = await post(`/table/docs/edit/${docId}`, [json({ attachment: '@filePayload.0', scan: '@filePayload.1' }), { name: '@filePayload', filename: 'b.txt', content: 'b' }, { name: '@filePayload', filename: 'c.txt', content: 'c' }])
  t.equal(replaced.statusCode, 200, replaced.body)
  t.equal(Object.keys(header(replaced, 'x-uploaded-files')).length, 2)
  t.same(header(replaced, 'x-deleted-files'), [`docs/${attachment}`], 'the old attachment; not the noSelect scan')
  t.notMatch(replaced.headers['x-deleted-files'], scanKey.slice(5))

  // A row the caller's viewRule hides: its removed file is not named.
  await app.inject({ method: 'POST', url: '/api/v1/table/docs/update', headers: ADMIN, payload: { where: `id == '${docId}'`, setValues: { public: false } } })
  const hidden = await post('/table/docs/update', [json({ where: `id == '${docId}'`, setValues: { attachment: '@filePayload' } }), { name: '@filePayload', filename: 'd.txt', content: 'd' }])
  t.equal(hidden.statusCode, 200, hidden.body)
  t.equal(header(hidden, 'x-deleted-files'), undefined, 'a file of a row the caller cannot view is not named')
  t.equal(Object.keys(header(hidden, 'x-uploaded-files')).length, 1, 'its own upload is')

  // An upload no row takes is removed again: in neither header; nor are those of a failed write.
  const unused = await post('/table/docs/update', [json({ where: "id == 'nope'", setValues: { attachment: '@filePayload' } }), { name: '@filePayload', filename: 'e.txt', content: 'e' }])
  t.same(unused.json(), [])
  t.equal(unused.headers['x-uploaded-files'], undefined)
  t.equal(unused.headers['x-deleted-files'], undefined)
  const failed = await post('/table/docs/edit/nope', [json({ attachment: '@filePayload' }), { name: '@filePayload', filename: 'f.txt', content: 'f' }])
  t.equal(failed.statusCode, 404)
  t.equal(failed.headers['x-uploaded-files'], undefined)

  // A JSON delete by an admin: every removed file is named.
  const current = (await app.inject({ method: 'GET', url: `/api/v1/table/docs/view/${docId}?select=attachment,scan`, headers: ADMIN })).json()
  const deleted = await app.inject({ method: 'POST', url: '/api/v1/table/docs/delete', headers: ADMIN, payload: { where: `id == '${docId}'` } })
  t.same(header(deleted, 'x-deleted-files').sort(), [`docs/${current.attachment}`, `docs/${current.scan}`].sort())
  t.equal(deleted.headers['x-uploaded-files'], undefined)
})
