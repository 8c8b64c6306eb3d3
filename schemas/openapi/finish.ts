// The finishing pass over the document @fastify/swagger builds from the route schemas (plugins/docs.ts
// runs it as `transformObject`). Every per-route fact is the route's own (schemas/openapi/operation.ts);
// this applies what routes declared in `x-document`, answers every declared error status with its shared
// response, and adds what belongs to the whole document: tag descriptions, info, servers, components.
import { ERROR_CODE_HEADER } from '../../lib/errors.js'
import type { DatabaseSettings } from '../config.js'
import type { DocumentComponents } from './components.js'
import type { Json, OperationDocument } from './operation.js'

export interface DocumentSource {
  prefix: string
  config: DatabaseSettings
  components: DocumentComponents
  version: string
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const JSON_TYPE = 'application/json'

/** Descriptions of the tags no table names (table tags describe their table). */
const TAG_TEXT: Record<string, string> = {
  meta: 'Health of the server',
  files: 'Downloads of stored files (uploads are multipart writes of the tables)',
  actions: 'Server-side actions of the project',
  admin: 'Admin endpoints (service token or an admin token from /admin/login)',
  auth: 'Cookie sign-out'
}

/** `op` as its route declared it: `declared` applied over what swagger derived. */
function applyDeclared (op: Json, declared: OperationDocument, b: DocumentComponents): void {
  const parameters: Json[] = op.parameters ?? []
  for (const param of parameters) if (param.name === '*' && declared.wildcard !== undefined) param.name = declared.wildcard
  for (const [name, patch] of Object.entries(declared.parameters ?? {})) {
    const derived = parameters.find((p) => p.name === name)
    if (derived === undefined) parameters.push(patch)
    else Object.assign(derived, patch)
  }
  if (parameters.length > 0) op.parameters = parameters
  const shared = declared.sharedQuery
  if (shared !== undefined) {
    op.parameters = parameters.map((p) => {
      if (p.in !== 'query') return p
      const name: string = p.name
      b.parameters[`${shared}.${name}`] ??= p
      return { $ref: `#/components/parameters/${shared}.${name}` }
    })
  }
  if (declared.requestBody !== undefined) op.requestBody = declared.requestBody
  const media = op.requestBody?.content?.[JSON_TYPE]
  if (declared.bodyExample !== undefined && media !== undefined) media.example = declared.bodyExample
  if (declared.bodyOptional === true && op.requestBody !== undefined) op.requestBody.required = false
  // Success answers as derived or declared; every error status the shared response.
  const responses: Json = Object.fromEntries(Object.entries(op.responses ?? {}).filter(([code]) => code.startsWith('2') || code.startsWith('3')))
  Object.assign(responses, declared.responses)
  for (const status of declared.errors) responses[status] = b.response(status)
  op.responses = responses
}

/** Finishes the document @fastify/swagger built (in place) and returns it, typed as it came. */
export function finishDocument<D extends Json> (document: D, source: DocumentSource): D {
  const doc: Json = document
  const { prefix, config, components: b } = source
  const paths: Json = {}
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    let named = path
    for (const method of METHODS) {
      const op: Json | undefined = item[method]
      if (op === undefined) continue
      // What the route declared in its schema's `x-document` (schemas/openapi/operation.ts).
      const declared: OperationDocument | undefined = op['x-document']
      delete op['x-document']
      if (declared !== undefined) {
        applyDeclared(op, declared, b)
        if (declared.wildcard !== undefined) named = path.replace('{*}', `{${declared.wildcard}}`)
      }
      op.description ??= op.summary
      for (const [code, response] of Object.entries<Json>(op.responses ?? {})) {
        if (response.description === 'Default Response') response.description = code.startsWith('2') ? 'Success' : `Status ${code}`
      }
    }
    paths[named] = item
  }
  doc.paths = paths
  const tags = new Set<string>()
  for (const item of Object.values<Json>(paths)) for (const m of METHODS) for (const tag of item[m]?.tags ?? []) tags.add(tag)
  doc.tags = [...tags].map((name) => {
    const table = b.views.get(name)
    const accounts = name.endsWith(' auth') ? b.views.get(name.slice(0, -5)) : undefined
    return { name, description: table !== undefined ? `Records of the \`${name}\` table` : accounts !== undefined ? `Accounts of the \`${accounts.table.name}\` table: sign-up, sign-in, sessions, password and email flows` : TAG_TEXT[name] ?? name }
  })
  const appName = config.appName ?? 'fastbase'
  doc.info = {
    title: appName,
    version: source.version,
    description: `The HTTP API of ${appName}, served by fastbase. Tables are read and written under \`${prefix}/table/{table}/\` subject to each table's rules; ` +
      'accounts live under `.../auth/`; files are uploaded with multipart writes and downloaded from `/files/`. ' +
      `Every error answers \`{ code, message, data? }\` with \`code\` equal to the HTTP status, and its stable code (\`FB_ERR_...\`) in the \`${ERROR_CODE_HEADER}\` header. ` +
      'Send a user\'s access token, or the admin service token, as `Authorization: Bearer <token>`; without one the caller is anonymous.',
    contact: { name: appName, url: config.appUrl },
    license: { name: 'MIT (fastbase, the server software)', identifier: 'MIT' }
  }
  doc.servers = [{ url: '/', description: `This server (paths carry the API prefix ${prefix})` }]
  doc.components = { ...(doc.components ?? {}), schemas: { ...(doc.components?.schemas ?? {}), ...b.schemas }, responses: { ...(doc.components?.responses ?? {}), ...b.responses }, parameters: { ...(doc.components?.parameters ?? {}), ...b.parameters } }
  return document
}
