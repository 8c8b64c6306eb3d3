// File uploads and storage: the storage driver (local disk or S3, `storage` in the config), multipart
// parsing for table writes, and the per-request FileTracker that keeps storage in step with the database.
import fp from 'fastify-plugin'
import fastifyMultipart from '@fastify/multipart'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { createStorage } from '../lib/storage/index.js'
import type { Storage } from '../lib/storage/types.js'
import { storedFileName } from '../lib/storage/file-names.js'
import { FileTracker, fileKey } from '../lib/files/tracker.js'
import type { TableDescriptor } from '../lib/table.js'
import { errors } from '../lib/errors.js'

/** Default `maxUploadSize`: 10 MiB per file. */
export const DEFAULT_MAX_UPLOAD = 10 * 1024 * 1024
const FILE_PART = '@filePayload'
const JSON_PART = '@jsonPayload'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on table writes: what this request uploaded and released. */
    fileTracker?: FileTracker
  }
}

type Row = Record<string, unknown>

/** `values.title` -> body.values.title: browser forms name nested fields with dots. */
function setDotted (body: Row, path: string, value: unknown): void {
  const keys = path.split('.')
  let node = body
  for (const key of keys.slice(0, -1)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return
    node = (node[key] ??= {}) as Row
    if (typeof node !== 'object' || node === null) return
  }
  const last = keys.at(-1)!
  if (last !== '__proto__' && last !== 'constructor' && last !== 'prototype') node[last] = value
}

function merge (target: Row, source: unknown): void {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) throw errors.badRequest(`${JSON_PART} must be a JSON object`)
  for (const [key, value] of Object.entries(source)) {
    const current = target[key]
    if (current !== null && typeof current === 'object' && !Array.isArray(current) && value !== null && typeof value === 'object' && !Array.isArray(value)) merge(current as Row, value)
    else target[key] = value
  }
}

/** `"@filePayload"` / `"@filePayload.N"` anywhere in the body -> the stored name of the N-th uploaded file. */
function resolveFileRefs (value: unknown, stored: string[]): unknown {
  if (typeof value === 'string') {
    const m = /^@filePayload(?:\.(\d+))?$/.exec(value)
    if (m === null) return value
    const name = stored[Number(m[1] ?? 0)]
    if (name === undefined) throw errors.badRequest(`${value} refers to a file that was not uploaded`)
    return name
  }
  if (Array.isArray(value)) return value.map((v) => resolveFileRefs(v, stored))
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveFileRefs(v, stored)]))
  return value
}

async function files (app: FastifyInstance): Promise<void> {
  const { config, options } = app.fastbase
  const storage: Storage = await createStorage(config.storage, options.dataDir)
  const maxUploadSize = config.maxUploadSize ?? DEFAULT_MAX_UPLOAD
  await app.register(fastifyMultipart, { limits: { fileSize: maxUploadSize, fieldSize: 1024 * 1024, parts: 1000 } })
  app.fastbase.storage = storage
  app.addHook('onClose', async () => { await storage.close() })

  /**
   * Streams every `@filePayload` part to storage (never buffered) and builds the body around it: plain
   * form fields (text, converted to the body schema's types) with the typed `@jsonPayload` merged over them.
   */
  async function multipartBody (request: FastifyRequest, table: TableDescriptor, tracker: FileTracker): Promise<Row> {
    const form: Row = {}
    const json: Row = {}
    const stored: string[] = []
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== FILE_PART) {
          part.file.resume()
          throw errors.badRequest(`Unexpected file part "${part.fieldname}": upload files as ${FILE_PART} parts`)
        }
        const name = storedFileName(part.filename)
        tracker.markUploaded(table, name)
        await storage.put(fileKey(table, name), part.file, { contentType: part.mimetype || 'application/octet-stream' })
        if (part.file.truncated) throw errors.payloadTooLarge(`File larger than maxUploadSize (${maxUploadSize} bytes)`)
        stored.push(name)
      } else if (part.fieldname === JSON_PART) {
        try {
          merge(json, JSON.parse(String(part.value)))
        } catch (error) {
          if (error instanceof SyntaxError) throw errors.badRequest(`${JSON_PART} is not valid JSON`)
          throw error
        }
      } else {
        setDotted(form, part.fieldname, part.value)
      }
    }
    const schema = request.routeOptions.schema?.body as TSchema | undefined
    const body = (schema === undefined ? form : Value.Convert(schema, form)) as Row
    merge(body, json)
    return resolveFileRefs(body, stored) as Row
  }

  /** Route hooks for a table write: multipart bodies become JSON bodies; storage is settled before the reply. */
  app.decorate('fastbaseFileHooks', (table: TableDescriptor) => ({
    preValidation: async (request: FastifyRequest) => {
      request.fileTracker = new FileTracker(storage, request.log)
      if (!request.isMultipart()) return
      request.body = await multipartBody(request, table, request.fileTracker)
    },
    onSend: async (request: FastifyRequest, reply: FastifyReply) => {
      await request.fileTracker?.settle(app.fastbase.db, reply.statusCode < 400)
    }
  }))
}

declare module 'fastify' {
  interface FastifyInstance {
    fastbaseFileHooks: (table: TableDescriptor) => {
      preValidation: (request: FastifyRequest) => Promise<void>
      onSend: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    }
  }
}

export default fp(files, { name: 'fastbase-files', dependencies: ['fastbase-tables'] })
