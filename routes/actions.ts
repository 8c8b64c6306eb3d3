// POST /action/{name}: one documented operation per action (its params as the body schema), and a
// JSON 404 for unknown names. Params are validated inside runAction, after requireAuth and the guard
// (decision D19), so the route itself does not validate the body.
import { Type, type TSchema } from '@sinclair/typebox'
import type { CompiledAction } from '../lib/actions/run.js'
import { errorResponses } from '../schemas/http/table-routes.js'
import { errors } from '../lib/errors.js'
import type { TypeBoxApp } from './typebox.js'
import { requestGlobals } from '../lib/request-globals.js'
import { callerOf } from '../plugins/auth-context.js'
import { json } from '../schemas/openapi/components.js'

const UnknownActionParams = Type.Object({ name: Type.String() })

const ResultSchema = Type.Array(Type.Array(Type.Record(Type.String(), Type.Unknown())), { description: 'One array of rows per query or step, in order' })
// What a config action answers, as clients read it: rows of any columns.
const ROWS = { type: 'array', items: { type: 'array', items: { type: 'object', additionalProperties: true } } }
const AnyResult = Type.Unknown({ description: 'What the action\'s handler returns' })

/** A value of each param type, for examples. */
const TYPE_EXAMPLES = { string: 'example', number: 1, integer: 1, boolean: true }

/** The body's example: each param's default, else a value of its type (optional ones without a default left out). */
function paramsExample (action: CompiledAction): Record<string, unknown> {
  const example: Record<string, unknown> = {}
  for (const [name, p] of Object.entries(action.data.params ?? {})) {
    const full: Exclude<typeof p, string> | { type: Extract<typeof p, string>, optional?: undefined, default?: undefined } = typeof p === 'string' ? { type: p } : p
    if (full.optional === true && full.default === undefined) continue
    example[name] = full.default ?? TYPE_EXAMPLES[full.type]
  }
  return example
}

/** A config action answers rows per statement; a code action what its handler returns (its `result` schema, else any JSON). */
function resultSchemaOf (action: CompiledAction): TSchema {
  return action.code === undefined ? ResultSchema : action.code.result ?? AnyResult
}

export default async function actionRoutes (app: TypeBoxApp): Promise<void> {
  for (const [name, action] of app.fastbase.actions) {
    app.post(`/action/${name}`, {
      schema: {
        tags: ['actions'],
        operationId: `action_${name.replace(/[^A-Za-z0-9_]+/g, '_')}`,
        summary: action.data.description ?? `Run the ${name} action`,
        description: action.data.description ?? `Runs the \`${name}\` action${action.data.requireAuth === true ? ' (a signed-in user is required)' : ''}.`,
        'x-document': {
          errors: [400, 401, 403, 404, 413, 415, 500, 503],
          bodyExample: paramsExample(action),
          ...(action.code === undefined ? { responses: { 200: { description: 'One array of rows per query or step, in order', content: json(ROWS, [[{ n: 1 }]]) } } } : {})
        },
        ...(action.data.requireAuth === true ? { security: [{ bearerAuth: [] }] } : {}),
        body: action.schema,
        response: { 200: resultSchemaOf(action), ...errorResponses, 500: errorResponses[400] }
      },
      // Documented, not validated here: see the header comment.
      validatorCompiler: () => (value: unknown) => ({ value })
    }, async (request): Promise<unknown> => {
      // A viewer admin reads and never writes (decision D15); an action may write, so viewers run none.
      const auth = callerOf(request)
      if (auth.adminRole === 'viewer') throw errors.forbidden('Viewers cannot run actions')
      // The body as sent, typed as runAction takes it: nothing has checked it yet (runAction does).
      return await app.fastbase.runAction(name, (request.body ?? {}) as Record<string, unknown>, {
        auth,
        request: requestGlobals(request, app.fastbase.config.appUrl),
        requestId: request.id
      })
    })
  }
  app.post('/action/:name', { schema: { hide: true, params: UnknownActionParams } }, async (request) => {
    throw errors.actionNotFound(request.params.name)
  })
}
