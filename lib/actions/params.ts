// An action's params as a TypeBox schema: strict (unknown keys rejected), no type coercion,
// integer distinct from number, defaults filled for omitted optional params.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { ActionData, ActionParam } from '../../schemas/config.js'
import { issues, validationError } from '../validation.js'
import { errors } from '../errors.js'

type Row = Record<string, unknown>

const TYPES: Record<string, (description?: string) => TSchema> = {
  string: (description) => Type.String({ description }),
  number: (description) => Type.Number({ description }),
  integer: (description) => Type.Integer({ description }),
  boolean: (description) => Type.Boolean({ description })
}

function paramSchema (param: ActionParam): TSchema {
  const full = typeof param === 'string' ? { type: param } : param
  const schema = TYPES[full.type](full.description)
  return full.optional === true ? Type.Optional(schema) : schema
}

export function paramsSchema (action: ActionData): TObject {
  const properties = Object.fromEntries(Object.entries(action.params ?? {}).map(([name, p]) => [name, paramSchema(p)]))
  return Type.Object(properties, { additionalProperties: false, title: `${action.name} params`, description: action.description })
}

/** A checker compiled once: returns the params with defaults, or throws the 400 validation error (decision D19). */
export function paramsValidator (action: ActionData): (input: unknown) => Row {
  const schema = paramsSchema(action)
  const check = TypeCompiler.Compile(schema)
  const defaults = Object.entries(action.params ?? {}).flatMap(([name, p]) =>
    typeof p === 'object' && p.optional === true && p.default !== undefined ? [[name, p.default] as const] : [])
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw errors.badRequest('Invalid request body: expected a JSON object of parameters')
    if (!check.Check(input)) throw validationError(issues(check.Errors(input)))
    const params: Row = { ...input }
    for (const [name, value] of defaults) if (params[name] === undefined) params[name] = value
    return params
  }
}
