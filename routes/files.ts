// GET /files/{table}/{record_id}/{path}: a stored file, only when the record exists, the path is the
// value of one of its file fields, and the caller passes the table's viewRule (decision D20).
// Conditional GET (ETag, Last-Modified) and single byte ranges are supported. `?thumb=` answers a
// listed thumbnail size of an image (decision D123), `?token=` a file token's user as the caller
// (decision D124); both are served down the same path as the file itself.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { view } from '../lib/crud/read.js'
import { crudContext } from '../lib/crud/context.js'
import { errors, FastbaseError } from '../lib/errors.js'
import { fileFields, fileKey } from '../lib/files/tracker.js'
import { ErrorSchema } from '../schemas/http/error.js'
import type { StoredObject } from '../lib/files/storage/types.js'
import type { TypeBoxApp } from './typebox.js'
import { callerOf } from '../plugins/auth-context.js'
import { fileTokenCaller } from '../lib/auth/tokens/file-tokens.js'
import type { TableDescriptor } from '../lib/table/descriptor.js'
import type { TableField } from '../schemas/config.js'
import { fileTokenRoute } from './file-token.js'
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

const FileQuery = Type.Object({
  thumb: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A thumbnail size the file field lists in `thumbs` (`100x100`, `400x0`, `80x80t`...): images (JPEG, PNG, WebP, GIF\'s first frame, AVIF) answer that variant, other files themselves; an unlisted size is 400 `FB_ERR_THUMB_SIZE`' })),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'A file token from `POST /files/token`: the download is made as its user (for `<img src>`, which sends no Authorization header)' }))
})

/** The Cache-Control of files anyone may read, unless `files.publicCacheControl` says otherwise. */
export const PUBLIC_CACHE_CONTROL = 'public, no-cache'
const PRIVATE_CACHE_CONTROL = 'private, no-cache'

/**
 * Whether anyone may read `field`'s files: the table's viewRule is the literal `true` and the field
 * is neither `noSelect` nor under a field rule. Anything else (any expression) counts as protected.
 */
function readableByAnyone (table: TableDescriptor, field: TableField): boolean {
  const rule = table.rules.viewRule
  return rule?.type === 'literal' && rule.value === true && field.noSelect !== true && !table.fieldRules.has(field.name)
}

const HEADERS = {
  ETag: { description: 'The file\'s entity tag', schema: { type: 'string' } },
  'Last-Modified': { description: 'When the file was stored', schema: { type: 'string' } },
  'Content-Disposition': { description: '`inline` for images, PDF, plain text, audio and video; `attachment` otherwise', schema: { type: 'string' } },
  'Cache-Control': { description: '`private, no-cache` for protected files and file-token downloads; `files.publicCacheControl` (default `public, no-cache`) for files anyone may read', schema: { type: 'string' } }
}
const BINARY = { '*/*': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file, with its stored Content-Type' } } }

/** The download as the document shows it: a named `{path}`, the tables with files, binary answers. */
function fileDocument (b: DocumentComponents): OperationDocument {
  // Account tables last: the examples name the first table, and an account's files are its own.
  const tables = [...b.views.values()].filter((v) => v.hasFiles && v.table.uid !== undefined)
    .sort((x, y) => Number(x.auth !== undefined) - Number(y.auth !== undefined)).map((v) => v.table)
  return {
    errors: [400, 401, 404, 416, 422, 500, 503],
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
  const { storage, thumbnails, config, auth, executor } = app.fastbase
  const publicCacheControl = config.files?.publicCacheControl ?? PUBLIC_CACHE_CONTROL
  fileTokenRoute(app)

  app.get('/files/:table/:rid/*', {
    schema: {
      tags: ['files'],
      operationId: 'files_download',
      summary: 'Download a file stored in a record\'s file field',
      description: 'A file stored in a record\'s file field: the record must exist, `path` must be the value of one of its file fields, and the caller must pass the table\'s viewRule. ' +
        'Supports conditional GET (ETag, Last-Modified) and single byte ranges. Types a browser could run (HTML, SVG...) are sent as attachments. ' +
        '`thumb` answers a thumbnail size the field lists (made on the first request, then stored); `token` (from `POST /files/token`) downloads as its user, checked against the viewRule now.',
      'x-document': fileDocument(documentComponents(app.fastbase)),
      params: FileParams,
      querystring: FileQuery,
      response: { 200: Type.String({ format: 'binary' }), 206: Type.String({ format: 'binary' }), 304: Type.Null(), 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema, 416: ErrorSchema, 422: ErrorSchema, 503: ErrorSchema }
    }
    // Typed here, not inferred from the schemas: the reply is a stream or a bodiless 304, which the
    // documented response schemas do not describe as TypeScript values.
  }, async (request: FastifyRequest<{ Params: Static<typeof FileParams>, Querystring: Static<typeof FileQuery> }>, reply: FastifyReply) => {
    const { table: name, rid, '*': path } = request.params
    const { thumb, token } = request.query
    const table = app.fastbase.descriptors.get(name)
    if (table === undefined) throw errors.tableNotFound(name)
    const fields = fileFields(table)
    if (fields.length === 0 || table.uid === undefined) throw errors.fileNotFound()
    // A token's user meets the viewRule below like any caller: it never widens what they may see.
    const caller = token === undefined ? callerOf(request) : await fileTokenCaller(executor, auth.tables, token, callerOf(request))
    let record: Record<string, unknown>
    try {
      record = await view(crudContext(executor, table, caller), rid, { select: fields.map((f) => f.name) })
    } catch (error) {
      // Missing, hidden by the viewRule, or the rule is null: all look the same from outside.
      if (error instanceof FastbaseError && (error.statusCode === 404 || error.statusCode === 403)) throw errors.fileNotFound()
      throw error
    }
    const holding = fields.filter((f) => record[f.name] === path)
    if (holding.length === 0) throw errors.fileNotFound()
    // Only a size the config lists (checked at start) is ever made or read: caller text never reaches a key.
    const sizes = holding.flatMap((f) => f.thumbs ?? [])
    if (thumb !== undefined && !sizes.includes(thumb)) throw errors.thumbSize(thumb, sizes)
    const key = fileKey(table, path)
    const object = thumb === undefined ? await storage.stat(key) : await thumbnails.serve(key, thumb)
    if (object === undefined) throw errors.fileNotFound()

    const shared = token === undefined && holding.every((f) => readableByAnyone(table, f))
    void reply.header('ETag', object.etag)
      .header('Last-Modified', object.lastModified.toUTCString())
      .header('Accept-Ranges', 'bytes')
      .header('Cache-Control', shared ? publicCacheControl : PRIVATE_CACHE_CONTROL)
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
    const body = await storage.read(object.key, range).catch((error: { code?: string }) => {
      throw error.code === 'FB_ERR_NOT_FOUND' ? errors.fileNotFound() : error
    })
    if (range === undefined) return await reply.header('Content-Length', object.size).send(body)
    return await reply.code(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`)
      .header('Content-Length', range.end - range.start + 1)
      .send(body)
  })
}
