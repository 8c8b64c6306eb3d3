// File uploads for table writes: multipart parsing (each file streamed to the kernel's storage, local
// disk or S3) and the per-request FileTracker that keeps storage in step with the database.
import fp from 'fastify-plugin'
import multipartPlugin from './external/multipart.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { storedFileName } from '../lib/files/storage/file-names.js'
import { FileTracker, fileKey, fileFields } from '../lib/files/tracker.js'
import { DELETED_FILES_HEADER as DELETED_HEADER, UPLOADED_FILES_HEADER as UPLOADED_HEADER } from '../lib/files/headers.js'
import type { TableDescriptor } from '../lib/table/descriptor.js'
import { errors, FastbaseError } from '../lib/errors.js'
import { FORBIDDEN_KEYS, MAX_FIELD_NAME, formFieldPath, setFormField, typedForm } from '../lib/form-fields.js'
import { PassThrough, pipeline, type Readable } from 'node:stream'
import { errorMessage } from '../lib/thrown.js'
import { isObject } from '../lib/plain.js'
import type { KernelServices } from '../lib/kernel/index.js'
import type { FileHooks } from './types.js'
import { requestLog } from './server-log.js'

const FILE_PART = '@filePayload'
const JSON_PART = '@jsonPayload'
// How deep in the body `@filePayload` references are looked for: body -> values -> [row] -> field.
const FILE_REF_DEPTH = 4

type Row = Record<string, unknown>

/** Deep merge of `@jsonPayload` over the form fields; recursion follows the form's own (bounded) depth. */
function merge (target: Row, source: unknown): void {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) throw errors.badRequest(`${JSON_PART} must be a JSON object`)
  for (const [key, value] of Object.entries(source)) {
    if (FORBIDDEN_KEYS.has(key)) continue
    const current = Object.hasOwn(target, key) ? target[key] : undefined
    if (isObject(current) && isObject(value)) merge(current, value)
    else target[key] = value
  }
}

/** `"@filePayload"` / `"@filePayload.N"` where a field value can be -> the stored name of the N-th uploaded file. */
function resolveFileRefs (value: unknown, stored: string[], depth = 0): unknown {
  if (typeof value === 'string') {
    const m = /^@filePayload(?:\.(\d{1,4}))?$/.exec(value)
    if (m === null) return value
    const name = stored[Number(m[1] ?? 0)]
    if (name === undefined) throw errors.badRequest(`${value} refers to a file that was not uploaded`)
    return name
  }
  if (depth >= FILE_REF_DEPTH || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v) => resolveFileRefs(v, stored, depth + 1))
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveFileRefs(v, stored, depth + 1)]))
}

/** Errors of the multipart parser (busboy, @fastify/multipart) are the caller's malformed body: 400/413. */
function multipartError (error: unknown): unknown {
  if (error instanceof FastbaseError) return error
  const { statusCode, message }: Record<string, unknown> = isObject(error) ? error : {}
  if (statusCode === 413) return errors.payloadTooLarge(errorMessage(error))
  return errors.badRequest(`Malformed multipart body: ${typeof message === 'string' ? message : 'unreadable'}`)
}

/** Registers the multipart parser (the host's own when it has one) in the scope of the table writes (routes/tables/index.ts). */
async function files (app: FastifyInstance): Promise<void> {
  await app.register(multipartPlugin)
}

/** The route hooks of table writes that may carry files, over the kernel's storage and limits. */
export function fileHooksOf ({ storage, limits, db }: Pick<KernelServices, 'storage' | 'limits' | 'db'>): FileHooks {
  // Per call rather than per plugin: the plugin may be the host app's, with its own limits.
  const partLimits = { limits: { fileSize: limits.uploadSize, files: limits.files, fields: limits.fields, parts: limits.files + limits.fields, fieldNameSize: MAX_FIELD_NAME, fieldSize: limits.bodySize } }

  /**
   * Streams every file part to storage (never buffered) and builds the body around it: plain form
   * fields (text, converted to the body schema's types; a file part named after a file field holds
   * its stored name) with the typed `@jsonPayload` merged over them.
   */
  async function multipartBody (request: FastifyRequest, table: TableDescriptor, tracker: FileTracker | undefined): Promise<Row> {
    const form: Row = {}
    const json: Row = {}
    const stored: string[] = []
    const fileFieldNames = new Set(fileFields(table).map((f) => f.name))
    // Every non-file part together stays within the JSON body limit (busboy bounds each one alone).
    let fieldBytes = 0
    for await (const part of request.parts(partLimits)) {
      if (typeof part.fieldname !== 'string' || part.fieldname === '') throw errors.badRequest('Multipart part without a field name')
      // Swagger UI and FormData clients that append the JSON as a Blob send it as a file part.
      const value = part.type === 'file' && part.fieldname === JSON_PART ? await jsonFilePart(part.file, limits.bodySize - fieldBytes) : undefined
      if (part.type === 'file' && value === undefined) {
        if (tracker === undefined) throw errors.badRequest(`Unexpected file part "${part.fieldname}": table ${table.name} has no file field`)
        // teenybase clients also send a file as the value of its field: `values.cover`, or `cover` on edit.
        const inField = part.fieldname !== FILE_PART
        const fieldName = formFieldPath(part.fieldname).at(-1)
        if (inField && (fieldName === undefined || !fileFieldNames.has(fieldName))) {
          throw errors.badRequest(`Unexpected file part "${part.fieldname}": upload files as ${FILE_PART} parts or as the value of a file field (values.<field>)`)
        }
        // A body that ended inside this part has already closed its stream; a pipe set up now would wait forever.
        if (part.file.destroyed) throw errors.badRequest('Malformed multipart body: it ends inside a file part')
        const name = storedFileName(part.filename)
        tracker.markUploaded(table, name, part.filename)
        await storage.put(fileKey(table, name), guarded(part.file), { contentType: part.mimetype || 'application/octet-stream' })
        if (part.file.truncated) throw errors.payloadTooLarge(`File larger than maxUploadSize (${limits.uploadSize} bytes)`)
        if (inField) setFormField(form, part.fieldname, name)
        else stored.push(name)
        continue
      }
      const text = value ?? String((part as { value: unknown }).value)
      fieldBytes += Buffer.byteLength(text)
      if (fieldBytes > limits.bodySize) throw errors.payloadTooLarge(`Multipart fields larger than ${limits.bodySize} bytes in all`)
      if (part.fieldname === JSON_PART) {
        try {
          merge(json, JSON.parse(text))
        } catch (error) {
          if (error instanceof SyntaxError) throw errors.badRequest(`${JSON_PART} is not valid JSON`)
          throw error
        }
      } else {
        setFormField(form, part.fieldname, text)
      }
    }
    const body = typedForm(request.routeOptions.schema?.body as TSchema | undefined, form)
    merge(body, json)
    return resolveFileRefs(body, stored) as Row
  }

  /**
   * Route hooks for a table write: `authorize` settles the caller's right to write before a byte is
   * stored; multipart bodies become JSON bodies; storage is settled before the reply. Only a table
   * with file fields stores or releases files, so only its writes get a tracker and the settling hook.
   * Any other body costs one check and no promise.
   */
  return (table: TableDescriptor, authorize: (request: FastifyRequest) => void) => {
    const tracked = fileFields(table).length > 0
    const readMultipart = (request: FastifyRequest): Promise<void> | undefined => {
      if (!request.isMultipart()) return undefined
      authorize(request)
      return multipartBody(request, table, request.fileTracker).then((body) => { request.body = body }, (error: unknown) => { throw multipartError(error) })
    }
    if (!tracked) return { readMultipart }
    // Its logger is made only if it logs (nearly no write does).
    const track = (request: FastifyRequest): void => { request.fileTracker = new FileTracker(storage, { error: (obj, msg) => { requestLog(request).error(obj, msg) } }) }
    const onSend = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const report = await request.fileTracker?.settle(db, reply.statusCode < 400)
      if (report === undefined) return
      // As teenybase answers: the files this write stored (key -> the name they were sent under)
      // and the stored files it removed. ASCII JSON: a header value cannot carry other characters.
      if (Object.keys(report.uploaded).length > 0) void reply.header(UPLOADED_HEADER, asciiJson(report.uploaded))
      if (report.deleted.length > 0) void reply.header(DELETED_HEADER, asciiJson(report.deleted))
    }
    return { track, readMultipart, onSend }
  }
}

/** JSON with every character beyond ASCII escaped (`\uXXXX`), still the same JSON value. */
function asciiJson (value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A file part's text, read up to `max` bytes (413 beyond). */
async function jsonFilePart (file: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  // A file part's stream has no encoding set: it reads Buffers.
  const stream: AsyncIterable<Buffer> = file
  for await (const chunk of stream) {
    size += chunk.length
    if (size > max) {
      file.resume()
      throw errors.payloadTooLarge(`Multipart fields larger than the body limit in all`)
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The part's stream behind a PassThrough piped at once: if the body ends or the client goes away
 * mid-file, the error reaches the storage driver (which removes its temporary file) instead of
 * leaving it waiting on a stream that will never end.
 */
function guarded (file: Readable): Readable {
  const pass = new PassThrough()
  pipeline(file, pass, () => {})
  return pass
}


export default fp(files, { name: 'fastbase-files' })
