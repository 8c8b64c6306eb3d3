// GET /files/{table}/{record_id}/{path}: a stored file, only when the record exists, the path is the
// value of one of its file fields, and the caller passes the table's viewRule (decision D20).
// Conditional GET (ETag, Last-Modified) and single byte ranges are supported.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { view } from '../lib/crud/read.js'
import { crudContext } from '../lib/crud/context.js'
import { errors, FastbaseError } from '../lib/errors.js'
import { fileFields, fileKey } from '../lib/files/tracker.js'
import { ErrorSchema } from '../schemas/http/error.js'
import type { StoredObject } from '../lib/storage/types.js'
import type { TypeBoxApp } from './typebox.js'
import { callerOf } from '../plugins/auth-context.js'
import { documentComponents, exampleId, type DocumentComponents } from '../schemas/openapi/components.js'
import type { OperationDocument } from '../schemas/openapi/operation.js'

// Types a browser may render in place; anything else (HTML, SVG, scripts...) is served as an attachment,
// so an uploaded page can never run script on the API's origin.
const INLINE_TYPES = /^(image\/(png|jpeg|gif|webp|avif)|application\/pdf|text\/plain|audio\/[\w.+-]+|video\/[\w.+-]+)(;|$)/i

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` -> one range, 'unsatisfiable', or undefined (serve it all). */
export function parseRange (header: string | undefined, size: number): { start: number, end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (m === null || (m[1] === '' && m[2] === '')) return undefined
  let start: number
  let end: number
  if (m[1] === '') {
    const suffix = Number(m[2])
    if (suffix === 0) return 'unsatisfiable'
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(m[1])
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  }
  if (start >= size || start > end) return 'unsatisfiable'
  return { start, end }
}

function notModified (request: FastifyRequest, object: StoredObject): boolean {
  const match = request.headers['if-none-match']
  if (match !== undefined) return match.split(',').map((s) => s.trim().replace(/^W\//, '')).some((tag) => tag === object.etag || tag === '*')
  const since = request.headers['if-modified-since']
  return since !== undefined && Math.floor(object.lastModified.getTime() / 1000) <= Math.floor(Date.parse(since) / 1000)
}

// `*` is the file's name; the document names it `{path}` (see `fileDocument`).
const FileParams = Type.Object({
  table: Type.String(),
  rid: Type.String({ minLength: 1, maxLength: 255 }),
  '*': Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.\\-+=#]+$' })
})

const HEADERS = {
  ETag: { description: 'The file\'s entity tag', schema: { type: 'string' } },
  'Last-Modified': { description: 'When the file was stored', schema: { type: 'string' } },
  'Content-Disposition': { description: '`inline` for images, PDF, plain text, audio and video; `attachment` otherwise', schema: { type: 'string' } }
}
const BINARY = { '*/*': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file, with its stored Content-Type' } } }

/** The download as the document shows it: a named `{path}`, the tables with files, binary answers. */
function fileDocument (b: DocumentComponents): OperationDocument {
  // Account tables last: the examples name the first table, and an account's files are its own.
  const tables = [...b.views.values()].filter((v) => v.hasFiles && v.table.uid !== undefined)
    .sort((x, y) => Number(x.auth !== undefined) - Number(y.auth !== undefined)).map((v) => v.table)
  return {
    errors: [400, 401, 404, 416, 500, 503],
    wildcard: 'path',
    parameters: {
      table: { description: 'A table with file fields', ...(tables.length > 0 ? { schema: { type: 'string', enum: tables.map((t) => t.name) }, example: tables[0].name } : {}) },
      rid: { description: 'The record\'s id', ...(tables.length > 0 ? { example: exampleId(tables[0]) } : {}) },
      path: { description: 'The stored file name: the value of the record\'s file field', example: 'photo_a1b2c3d4e5f6.png' },
      Range: { in: 'header', name: 'Range', required: false, description: 'One byte range: `bytes=<start>-<end>`, `bytes=<start>-` or `bytes=-<n>`', schema: { type: 'string' } },
      'If-None-Match': { in: 'header', name: 'If-None-Match', required: false, description: 'An ETag from an earlier answer: 304 when unchanged', schema: { type: 'string' } }
    },
    responses: {
      200: { description: 'The whole file', headers: HEADERS, content: BINARY },
      206: { description: 'The requested byte range', headers: { ...HEADERS, 'Content-Range': { description: '`bytes <start>-<end>/<size>`', schema: { type: 'string' } } }, content: BINARY },
      304: { description: 'Not modified (If-None-Match / If-Modified-Since)' }
    }
  }
}

export default async function fileRoutes (app: TypeBoxApp): Promise<void> {
  app.get('/files/:table/:rid/*', {
    schema: {
      tags: ['files'],
      operationId: 'files_download',
      summary: 'Download a file stored in a record\'s file field',
      description: 'A file stored in a record\'s file field: the record must exist, `path` must be the value of one of its file fields, and the caller must pass the table\'s viewRule. ' +
        'Supports conditional GET (ETag, Last-Modified) and single byte ranges. Types a browser could run (HTML, SVG...) are sent as attachments.',
      'x-document': fileDocument(documentComponents(app.fastbase)),
      params: FileParams,
      response: { 200: Type.String({ format: 'binary' }), 206: Type.String({ format: 'binary' }), 304: Type.Null(), 404: ErrorSchema, 416: ErrorSchema }
    }
    // Typed here, not inferred from the schemas: the reply is a stream or a bodiless 304, which the
    // documented response schemas do not describe as TypeScript values.
  }, async (request: FastifyRequest<{ Params: Static<typeof FileParams> }>, reply: FastifyReply) => {
    const { table: name, rid, '*': path } = request.params
    const table = app.fastbase.descriptors.get(name)
    if (table === undefined) throw errors.tableNotFound(name)
    const fields = fileFields(table)
    if (fields.length === 0 || table.uid === undefined) throw errors.fileNotFound()
    let record: Record<string, unknown>
    try {
      record = await view(crudContext(app.fastbase.executor, table, callerOf(request)), rid, { select: fields.map((f) => f.name) })
    } catch (error) {
      // Missing, hidden by the viewRule, or the rule is null: all look the same from outside.
      if (error instanceof FastbaseError && (error.statusCode === 404 || error.statusCode === 403)) throw errors.fileNotFound()
      throw error
    }
    if (!fields.some((f) => record[f.name] === path)) throw errors.fileNotFound()
    const object = await app.fastbase.storage.stat(fileKey(table, path))
    if (object === undefined) throw errors.fileNotFound()

    void reply.header('ETag', object.etag)
      .header('Last-Modified', object.lastModified.toUTCString())
      .header('Accept-Ranges', 'bytes')
      .header('Cache-Control', 'private, no-cache')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', 'sandbox; default-src \'none\'')
      .header('Content-Disposition', `${INLINE_TYPES.test(object.contentType) ? 'inline' : 'attachment'}; filename="${path}"`)
    if (notModified(request, object)) return await reply.code(304).send()
    const range = parseRange(request.headers.range, object.size)
    if (range === 'unsatisfiable') {
      void reply.header('Content-Range', `bytes */${object.size}`)
      throw errors.rangeNotSatisfiable()
    }
    void reply.type(object.contentType)
    // Deleted between stat and read (another instance replaced it): the same 404 as a missing file.
    const body = await app.fastbase.storage.read(object.key, range).catch((error: { code?: string }) => {
      throw error.code === 'FB_ERR_NOT_FOUND' ? errors.fileNotFound() : error
    })
    if (range === undefined) return await reply.header('Content-Length', object.size).send(body)
    return await reply.code(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`)
      .header('Content-Length', range.end - range.start + 1)
      .send(body)
  })
}
