// Schema compilers for every route: TypeBox validates requests (errors become the standard 400 body in
// plugins/errors.ts) and fast-json-stringify serializes responses. Compiling them for every generated
// route at boot made start-up with 100 tables take 3 s, so each is compiled on first use, and once per
// schema (the routes share the error body, a table's record, the read params).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import fastJson from 'fast-json-stringify'
import { compileValidator } from '../lib/validation.js'

type Fn = (value: unknown) => unknown

/** A function built from `schema` the first time it is called, and shared by every route using that schema. */
function lazyCompiler (build: (schema: object, variant: string) => Fn): (schema: object, variant: string) => Fn {
  const cache = new WeakMap<object, Map<string, Fn>>()
  const compiled = (schema: object, variant: string): Fn => {
    let variants = cache.get(schema)
    if (variants === undefined) cache.set(schema, variants = new Map())
    let fn = variants.get(variant)
    if (fn === undefined) variants.set(variant, fn = build(schema, variant))
    return fn
  }
  return (schema, variant) => {
    let fn: Fn | undefined
    return (value) => (fn ??= compiled(schema, variant))(value)
  }
}

async function validation (app: FastifyInstance): Promise<void> {
  // Query strings and params are converted from text; bodies are checked as sent.
  const validator = lazyCompiler((schema, part) => compileValidator(schema as TSchema, part !== 'body'))
  const serializer = lazyCompiler((schema) => fastJson(schema) as Fn)
  app.setValidatorCompiler(({ schema, httpPart }) => validator(schema, httpPart ?? 'body') as never)
  app.setSerializerCompiler(({ schema }) => serializer(schema, '') as (data: unknown) => string)
}

export default fp(validation, { name: 'fastbase-validation' })
