// Actions written in code: a TypeBox params schema and a handler, registered with the plugin's
// `actions` option. They are served, documented and guarded as the config's actions are (the same
// route, requireAuth, guard expression, strict params, viewers refused), and the handler runs in one
// transaction with the caller and the in-process table API bound to it.
import type { Knex } from 'knex'
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import type { ActionData, ActionParam } from '../../schemas/config.js'
import type { AuthContext } from '../auth-context.js'
import { ConfigError, errors } from '../errors.js'
import { validationError, issues } from '../validation.js'

type Row = Record<string, unknown>

/** What a code action's handler gets. */
export interface CodeActionContext<Params = Row, Tables = unknown> {
  /** The params, checked against the action's schema (defaults filled). */
  params: Params
  /** Who runs it: pass it as `as` to act on their behalf, under their rules. */
  caller: AuthContext
  /** The in-process table API inside the action's transaction. */
  tables: Tables
  /** The action's transaction: everything the handler does through it commits or rolls back together. */
  db: Knex.Transaction
  /** `request.*` as expressions read it (empty when run from server code without a request). */
  request: Row
}

export interface CodeAction<P extends TObject = TObject, Result = unknown, Tables = unknown> {
  name: string
  description?: string
  /** A TypeBox object schema; keys it does not name are refused, as for config actions. */
  params: P
  /** The answer's schema, for the API document (and the reply's serializer); default: any JSON. */
  result?: TSchema
  /** Anonymous callers get 401. */
  requireAuth?: boolean
  /** An expression over `auth.*`, `params.*` and `request.*`, as a config action's guard: false is 403. */
  guard?: string
  handler: (context: CodeActionContext<Static<P>, Tables>) => Promise<Result> | Result
}

const NAME = /^[a-zA-Z_][a-zA-Z0-9_-]*$/

/** The config shape of a code action, for the API document and the panel (which read config actions). */
function describedAs (action: CodeAction): ActionData {
  const params: Record<string, ActionParam> = {}
  const required = new Set(action.params.required ?? [])
  for (const [name, schema] of Object.entries(action.params.properties)) {
    const type = (['string', 'number', 'integer', 'boolean'] as const).find((t) => t === schema.type) ?? 'string'
    const param: Extract<ActionParam, object> = { type }
    if (!required.has(name)) param.optional = true
    if (typeof schema.description === 'string') param.description = schema.description
    if (schema.default !== undefined) param.default = schema.default
    params[name] = param
  }
  return { name: action.name, description: action.description, params, requireAuth: action.requireAuth, guard: action.guard }
}

export interface CompiledCode {
  data: ActionData
  schema: TObject
  result?: TSchema
  validate: (input: unknown) => Row
  handler: CodeAction['handler']
}

/** Checks each code action (name, schema, handler) once, at start; problems stop the start as a config error would. */
export function compileCodeActions (actions: ReadonlyArray<CodeAction<any, any, any>>, taken: ReadonlySet<string>): Map<string, CompiledCode> {
  const problems: string[] = []
  const compiled = new Map<string, CompiledCode>()
  for (const [i, action] of actions.entries()) {
    const at = `actions option [${i}]${typeof action?.name === 'string' ? ` (${action.name})` : ''}`
    if (typeof action?.name !== 'string' || !NAME.test(action.name) || action.name.length > 255) { problems.push(`${at}: name must match ${String(NAME)}`); continue }
    if (taken.has(action.name) || compiled.has(action.name)) { problems.push(`${at}: another action is named ${action.name}`); continue }
    if (typeof action.handler !== 'function') { problems.push(`${at}: handler must be a function`); continue }
    if (action.params?.type !== 'object' || typeof action.params.properties !== 'object') { problems.push(`${at}: params must be a TypeBox object schema (Type.Object)`); continue }
    // Strict as config actions' params: a key the schema does not name is refused, not ignored.
    const schema = action.params.additionalProperties === undefined ? Type.Object(action.params.properties, { ...action.params, additionalProperties: false }) : action.params
    compiled.set(action.name, { data: describedAs(action), schema, result: action.result, validate: validator(schema), handler: action.handler })
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return compiled
}

function validator (schema: TObject): (input: unknown) => Row {
  const check = TypeCompiler.Compile(schema)
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw errors.badRequest('Invalid request body: expected a JSON object of parameters')
    const params = Value.Default(schema, structuredClone(input))
    if (!check.Check(params)) throw validationError(issues(check.Errors(params)))
    return params
  }
}
