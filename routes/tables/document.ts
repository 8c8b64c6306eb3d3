// What the API document says of one table's routes (routes/tables/index.ts spreads each into its
// route's schema): operationIds, descriptions, the error statuses, and the bodies and answers as
// clients see them, from the table's components (schemas/openapi/components.ts).
import type { FastifySchema } from 'fastify'
import type { TableDescriptor } from '../../lib/table/descriptor.js'
import { body, exampleId, form, json, writeContent, type DocumentComponents } from '../../schemas/openapi/components.js'

const COMMON = [400, 401, 403, 500, 503]
const BODIED = [413, 415]

type Declared = Pick<FastifySchema, 'operationId' | 'description' | 'x-document'>

/** The document's part of each table route's schema, by operation. */
export function tableDocument (b: DocumentComponents, table: TableDescriptor) {
  const view = b.view(table)
  const t = table.name
  const uid = table.uid?.name ?? 'id'
  const rule = (name: keyof typeof table.rules) => table.rules[name] === null ? 'admins only (no rule)' : `the ${name}`
  const record = b.recordExample(view)
  const answered = (description: string) => ({ 200: { description, content: json(b.records(view), [record]) } })
  /** A write body's example with the first writable file field taking the first `@filePayload` part. */
  const withFile = (values: object, noWrite: 'noInsert' | 'noUpdate') =>
    ({ ...values, ...Object.fromEntries(table.fieldList.filter((f) => f.type === 'file' && f[noWrite] !== true).slice(0, 1).map((f) => [f.name, '@filePayload.0'])) })

  const read = (kind: 'select' | 'list', method: 'get' | 'post'): Declared => {
    const isList = kind === 'list'
    const readBody = { limit: 10 }
    return {
      operationId: `${t}_${kind}${method === 'post' ? '_post' : ''}`,
      description: `${isList ? 'A page of' : 'The'} \`${t}\` records the caller may see (${rule('listRule')}), filtered, ordered and paged by the ${method === 'get' ? 'query parameters' : 'body'}${isList ? ', with the total of matching rows' : ''}.`,
      'x-document': {
        errors: [...COMMON, ...(method === 'post' ? BODIED : [])],
        responses: { 200: isList
          ? { description: 'The page and the total', content: json(b.list(view), { items: [record], total: 1 }) }
          : { description: 'The records', content: json(b.records(view), [record]) } },
        // The query parameters and the body are the same for every table: shared components.
        ...(method === 'get' ? { sharedQuery: 'read' } : { requestBody: body({ ...json(b.readQuery(), readBody), ...form(b.readQuery(), readBody) }) })
      }
    }
  }

  const insert = b.writeExample(view, 'insert')
  const update = { where: b.whereExample(view), setValues: b.writeExample(view, 'update'), returning: '*' }
  const remove = { where: b.whereExample(view), returning: '*' }
  const edit = b.writeExample(view, 'update')
  // Functions: a component exists once a route refers to it (a table without a uid has no view or edit).
  return {
    select: (method: 'get' | 'post') => read('select', method),
    list: (method: 'get' | 'post') => read('list', method),
    insert: (): Declared => ({
      operationId: `${t}_insert`,
      description: `Inserts one record or a batch (${rule('createRule')}, checked against each new row). Without \`returning\` the answer is \`[]\`.` +
        (view.hasFiles ? ' Files are uploaded as multipart `@filePayload` parts referenced from the `@jsonPayload` part.' : ''),
      'x-document': {
        errors: [...COMMON, ...BODIED],
        requestBody: body(writeContent(view, b.requestSchema(view, 'insert'), { values: insert, returning: '*' }, { values: withFile(insert, 'noInsert'), returning: '*' },
          form(b.insertForm(view), { values: insert, returning: '*' }, ['values']))),
        responses: answered('The `returning` columns of the inserted records (`[]` without `returning`)')
      }
    }),
    update: (): Declared => ({
      operationId: `${t}_update`,
      description: `Updates the rows \`where\` selects that the ${rule('updateRule')} lets the caller change. Without \`returning\` the answer is \`[]\`.`,
      'x-document': {
        errors: [...COMMON, ...BODIED],
        requestBody: body(writeContent(view, b.requestSchema(view, 'update'), update, { ...update, setValues: withFile(update.setValues, 'noUpdate') },
          form(b.requestSchema(view, 'update'), update, ['setValues', 'set']))),
        responses: answered('The `returning` columns of the changed records (`[]` without `returning`)')
      }
    }),
    delete: (): Declared => ({
      operationId: `${t}_delete`,
      description: `Deletes the rows \`where\` selects that the ${rule('deleteRule')} lets the caller delete (their files too). Without \`returning\` the answer is \`[]\`.`,
      'x-document': {
        errors: [...COMMON, ...BODIED],
        requestBody: body({ ...json(b.requestSchema(view, 'delete'), remove), ...form(b.requestSchema(view, 'delete'), remove) }),
        responses: answered('The `returning` columns of the deleted records (`[]` without `returning`)')
      }
    }),
    view: (): Declared => ({
      operationId: `${t}_view`,
      description: `One \`${t}\` record by its ${uid} (${rule('viewRule')}; a hidden record is a 404).`,
      'x-document': {
        errors: [...COMMON, 404],
        responses: { 200: { description: 'The record', content: json(b.record(view), record) } },
        parameters: { id: { example: exampleId(table) } }
      }
    }),
    edit: (): Declared => ({
      operationId: `${t}_edit`,
      description: `Changes one record by its ${uid} (${rule('updateRule')}); the body is the bare fields. \`or=INSERT\` creates it when missing (createRule). Answers the \`returning\` columns (default: the ${uid}).`,
      'x-document': {
        errors: [...COMMON, ...BODIED, 404],
        requestBody: body(writeContent(view, b.fields(view, 'update'), edit, withFile(edit, 'noUpdate'))),
        responses: { 200: { description: `The record's ${uid} (the \`returning\` columns when given)`, content: json(b.edited(view), { [uid]: exampleId(table) }) } },
        parameters: { id: { example: exampleId(table) } }
      }
    })
  }
}
