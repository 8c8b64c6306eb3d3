// Table routes, generated per table from the config at boot (Fastify cannot add routes after ready()).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TableDescriptor } from '../../lib/table/descriptor.js'
import { crudContext, type CrudContext } from '../../lib/crud/context.js'
import { assertMayTry, assertMayWrite, gateRules, type GateRules } from '../../lib/crud/write-gate.js'
import { tableSchemas, querySchemas, IdParamsSchema, errorResponses } from '../../schemas/http/table-routes.js'
import { select, list, view } from '../../lib/crud/read.js'
import { insert, update, edit, remove } from '../../lib/crud/write.js'
import { errors } from '../../lib/errors.js'
import { thrownError } from '../../lib/thrown.js'
import { urlencodedBodies } from '../../plugins/request-parsing.js'
import filesPlugin from '../../plugins/files.js'
import type { TypeBoxApp } from '../typebox.js'
import { requestGlobals } from '../../lib/request-globals.js'
import { callerOf } from '../../plugins/auth-context.js'
import { documentComponents } from '../../schemas/openapi/components.js'
import { tableDocument } from './document.js'

const FORM = 'application/x-www-form-urlencoded'

// The rules each write checks before its body is read (lib/crud/write-gate.ts).
const CREATE = gateRules('createRule')
const UPDATE = gateRules('updateRule')
const DELETE = gateRules('deleteRule')
const UPSERT = gateRules('updateRule', 'createRule')

const CatchAllParams = Type.Object({ table: Type.String() })

/**
 * Whether an edit may create the record (`?or=INSERT`). Read by the multipart hook, which runs before
 * validation: the query is still as sent.
 */
function upserts (query: unknown): boolean {
  return typeof query === 'object' && query !== null && 'or' in query && query.or === 'INSERT'
}

/**
 * Rows answer with their keys in the order of the caller's `select` / `returning` list, as teenybase
 * answers: the response schema lists the table's fields in their own order, and the schema's
 * serializer writes keys in that order. Values are already typed by the dialect, so JSON.stringify
 * writes them as the schema's serializer would; answers without a list, or whose list is `*` alone
 * (every visible field in the table's order: lib/crud/columns.ts#outputColumns), keep the faster one.
 * Fastify sets no content type on an answer a custom serializer writes, so it is set here.
 */
function inListOrder (reply: FastifyReply, list: string | string[] | undefined): void {
  if (list === undefined || list.length === 0 || list === '*' || (list.length === 1 && list[0] === '*')) return
  reply.serializer(JSON.stringify).type(JSON_TYPE)
}

const JSON_TYPE = 'application/json; charset=utf-8'

// Registered with Fastify's `prefix` option (e.g. /api/v1), which Fastify adds to every path here.
export default async function tableRoutes (app: TypeBoxApp): Promise<void> {
  const { descriptors: tables, limits } = app.fastbase
  const appUrl = app.fastbase.config.appUrl
  const q = querySchemas(limits)
  // Writes (and select/list) may come as forms, as teenybase clients send them (decision D36).
  urlencodedBodies(app)

  function context (request: FastifyRequest, table: TableDescriptor, write: boolean): CrudContext {
    // A viewer admin may read everything and write nothing (decision D15).
    if (write && callerOf(request).adminRole === 'viewer') throw errors.forbidden()
    return crudContext(app.fastbase.executor, table, callerOf(request), {
      // Built when a plan reads `request.*` (a plan hit that reads no global never does).
      globals: () => ({ request: requestGlobals(request, appUrl) }),
      files: request.fileTracker,
      requestId: request.id
    })
  }

  // Each write's context, built by its preValidation hook (writeOptions). A property, not a WeakMap:
  // a WeakMap entry per request made scavenges cost a write a fifth more CPU.
  app.decorateRequest('tableWriteContext', undefined)
  const writeContext = (request: FastifyRequest): CrudContext => {
    const ctx = request.tableWriteContext
    if (ctx === undefined) throw new Error('fastbase: a table write ran without its preValidation hook')
    return ctx
  }

  /** What a table's read and write routes share: paths, schemas, the document's parts. */
  const shared = (table: TableDescriptor) => {
    const tags = [table.name]
    return {
      base: `/table/${table.name}`,
      s: tableSchemas(table.data, limits),
      doc: tableDocument(documentComponents(app.fastbase), table),
      read: (summary: string, response: unknown) => ({ tags, summary, response: { 200: response, ...errorResponses } })
    }
  }
  const parts = new Map([...tables.values()].map((table) => [table, shared(table)]))

  // select and list take the same parameters as a query string (GET, which has no body) or as a
  // body (POST: JSON or a form; validated, so always there). The read handlers are not async:
  // a SQLite read answers at once and Fastify sends it with no promise (decision D109); Fastify
  // catches what they throw as it catches a rejection.
  for (const [table, { base, s, doc, read }] of parts) {
    const reads = [
      ['select', `Select ${table.name} records`, s.records, select, doc.select],
      ['list', `List ${table.name} records with the total`, s.list, list, doc.list]
    ] as const
    for (const [op, summary, response, run, declared] of reads) {
      app.get(`${base}/${op}`, {
        schema: { ...read(summary, response), ...declared('get'), querystring: q.read }
      }, (request, reply) => {
        inListOrder(reply, request.query.select)
        return run(context(request, table, false), request.query)
      })
    }
    for (const [op, summary, response, run, declared] of reads) {
      app.post(`${base}/${op}`, {
        schema: { ...read(summary, response), ...declared('post'), body: q.read, consumes: ['application/json', FORM] }
      }, (request, reply) => {
        inListOrder(reply, request.body.select)
        return run(context(request, table, false), request.body)
      })
    }
    if (table.uid === undefined) continue
    app.get(`${base}/view/:id`, {
      schema: { ...read(`View one ${table.name} record`, s.record), ...doc.view(), params: IdParamsSchema, querystring: q.view }
    }, (request, reply) => {
      inListOrder(reply, request.query.select)
      return view(context(request, table, false), request.params.id, request.query)
    })
  }

  // The writes in a scope of their own, the only one with the multipart parser (plugins/files.ts):
  // @fastify/multipart runs an async onResponse hook on every request of its scope, which reads
  // then never pay for (decision D133).
  await app.register(async (writes: TypeBoxApp) => {
    await writes.register(filesPlugin)
    for (const [table, { base, s, doc, read }] of parts) {
      // Every table's writes take multipart bodies (`@jsonPayload` and plain fields, as teenybase
      // clients send them to any table); only tables with file fields take file parts (plugins/files.ts).
      // A caller refused whatever the body says hears 403 before the body is validated: a 400 listing
      // required fields would describe a table it may not write. Multipart bodies are checked more
      // strictly before a byte is stored (plugins/files.ts).
      // The write's context is built once, here, after the file tracker it names, and its handler reads
      // it back; a JSON body passes with no promise.
      const writeOptions = (rules: (request: FastifyRequest) => GateRules) => {
        const { track, readMultipart, onSend } = writes.fastbase.fileHooks(table, (request) => assertMayWrite(writeContext(request), rules(request)))
        const preValidation = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
          let read: Promise<void> | undefined
          try {
            track?.(request)
            const ctx = context(request, table, true)
            request.tableWriteContext = ctx
            assertMayTry(ctx, rules(request))
            read = readMultipart(request)
          } catch (error) {
            done(thrownError(error))
            return
          }
          if (read === undefined) done()
          else read.then(() => { done() }, (error: unknown) => { done(thrownError(error)) })
        }
        return onSend === undefined ? { preValidation } : { preValidation, onSend }
      }
      const consumes = { consumes: ['application/json', FORM, 'multipart/form-data'] }
      writes.post(`${base}/insert`, {
        ...writeOptions(() => CREATE),
        schema: { ...read(`Insert ${table.name} records`, s.records), ...doc.insert(), body: s.insertBody, ...consumes }
      }, (request, reply) => {
        inListOrder(reply, request.body.returning)
        return insert(writeContext(request), request.body)
      })
      writes.post(`${base}/update`, {
        ...writeOptions(() => UPDATE),
        schema: { ...read(`Update ${table.name} records`, s.records), ...doc.update(), body: s.updateBody, ...consumes }
      }, async (request, reply) => {
        inListOrder(reply, request.body.returning)
        return await update(writeContext(request), request.body)
      })
      writes.post(`${base}/delete`, {
        ...writeOptions(() => DELETE),
        schema: { ...read(`Delete ${table.name} records`, s.records), ...doc.delete(), body: s.deleteBody, consumes: ['application/json', FORM] }
      }, async (request, reply) => {
        inListOrder(reply, request.body.returning)
        return await remove(writeContext(request), request.body)
      })
      if (table.uid === undefined) continue
      writes.post(`${base}/edit/:id`, {
        ...writeOptions((request) => upserts(request.query) ? UPSERT : UPDATE),
        schema: { ...read(`Edit one ${table.name} record`, s.record), ...doc.edit(), params: IdParamsSchema, querystring: q.edit, body: s.editBody, ...consumes }
      }, (request, reply) => {
        inListOrder(reply, request.query.returning)
        return edit(writeContext(request), request.params.id, request.body ?? {}, request.query)
      })
    }
    // Anything else under /table/: an unknown table, or an unknown operation of a known one. Here, so
    // that an upload to a misspelled table hears that the table is unknown, not that the body is.
    writes.all('/table/:table/*', { schema: { hide: true, params: CatchAllParams } }, async (request) => {
      const name = request.params.table
      if (!tables.has(name)) throw errors.tableNotFound(name)
      throw errors.routeNotFound(request.method, request.url.split('?')[0])
    })
  })
}
