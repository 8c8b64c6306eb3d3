// TypeBox validates every request; errors become the standard 400 body (plugins/errors.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { compileValidator } from '../lib/validation.js'

async function validation (app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = compileValidator(schema as TSchema, httpPart !== 'body')
    return validate as never
  })
}

export default fp(validation, { name: 'fastbase-validation' })
