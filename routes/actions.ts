// POST /action/{name}: one documented operation per action (its params as the body schema), and a
// JSON 404 for unknown names. Params are validated inside runAction, after requireAuth and the guard
// (decision D19), so the route itself does not validate the body.
import { Type, type TSchema } from '@sinclair/typebox'
import type { CompiledAction } from '../lib/actions/run.js'
import { errorResponses } from '../schemas/tables.js'
import { errors } from '../lib/errors.js'
import type { TypeBoxApp } from './typebox.js'
import { requestGlobals } from '../lib/request-globals.js'
import { callerOf } from '../plugins/auth-context.js'

const UnknownActionParams = Type.Object({ name: Type.String() })

const ResultSchema = Type.Array(Type.Array(Type.Record(Type.String(), Type.Unknown())), { description: 'One array of rows per query or step, in order' })
const AnyResult = Type.Unknown({ description: 'What the action\'s handler returns' })

/** A config action answers rows per statement; a code action what its handler returns (its `result` schema, else any JSON). */
function resultSchemaOf (action: CompiledAction): TSchema {
  return action.code === undefined ? ResultSchema : action.code.result ?? AnyResult
}

export default async function actionRoutes (app: TypeBoxApp): Promise<void> {
  for (const [name, action] of app.fastbase.actions) {
    app.post(`/action/${name}`, {
      schema: {
        tags: ['actions'],
        summary: action.data.description ?? `Run the ${name} action`,
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
