// lib/validation.ts: what the request validators let through and how they convert query text. A
// value that passes as sent is taken as sent; only what fails is converted (decision D134).
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { compileValidator, convertsText, type ValidatorResult } from '../../lib/validation.js'
import { querySchemas, IdParamsSchema } from '../../schemas/http/table-routes.js'
import { DEFAULT_LIMITS } from '../../lib/limits.js'

/** The errors a validator answered, if any. */
function errorsOf (result: ValidatorResult) {
  return result === true ? undefined : result.error
}

/** The value a request goes on with: `true` means the input as it now is (TypeBox converts in place). */
function passed (result: ValidatorResult, input: unknown): unknown {
  if (result === true) return input
  if (result.error !== undefined) throw new Error('refused')
  return result.value
}

t.test('query text: converted where the schema needs it, kept as sent where it already passes', async (t) => {
  const read = compileValidator(querySchemas(DEFAULT_LIMITS).read, true)
  const input = { limit: '20', order: '-id', distinct: 'true' }
  t.same(passed(read(input), input), { limit: 20, order: '-id', distinct: true }, 'numbers and booleans come from text')
  const plain = { order: '-id', select: ['id', 'title'] }
  t.equal(read(plain), true, 'a value that passes as sent is taken as it is: no converted copy, no result object')
  t.same(errorsOf(read({ limit: 'ten' }))?.map((e) => e.instancePath), ['/limit'], 'text that cannot be a number is refused')
  t.same(errorsOf(read({ limit: '-1' }))?.map((e) => e.instancePath), ['/limit'], 'a converted value is still checked')
  const id = compileValidator(IdParamsSchema, true)
  t.equal(id({ id: '5000' }), true)
  t.same(errorsOf(id({ id: '' }))?.map((e) => e.instancePath), ['/id'])
})

t.test('bodies are checked as sent, never converted', async (t) => {
  const body = compileValidator(Type.Object({ n: Type.Integer() }), false)
  t.equal(body({ n: 3 }), true)
  t.same(errorsOf(body({ n: '3' }))?.map((e) => e.instancePath), ['/n'], 'a number sent as text is an error in a body')
})

t.test('a union that admits text and a number is converted even when the text passes', async (t) => {
  const schema = Type.Object({ v: Type.Union([Type.Integer(), Type.String()]) })
  t.equal(convertsText(schema), true)
  const five = { v: '5' }
  t.same(passed(compileValidator(schema, true)(five), five), { v: 5 }, 'as TypeBox converts it: the first branch that takes it')
  const word = { v: 'five' }
  t.same(passed(compileValidator(schema, true)(word), word), { v: 'five' })
  t.equal(convertsText(Type.Object({ v: Type.Union([Type.Literal(1), Type.Literal('one')]) })), true, 'a numeric literal beside text')
  t.equal(convertsText(Type.Object({ v: Type.Array(Type.Union([Type.Null(), Type.String()])) })), true, 'found at any depth')
})

t.test('the read schemas hold no such union: their passing values are never converted', async (t) => {
  const q = querySchemas(DEFAULT_LIMITS)
  t.equal(convertsText(q.read), false)
  t.equal(convertsText(q.view), false)
  t.equal(convertsText(q.edit), false)
  t.equal(convertsText(IdParamsSchema), false)
  t.equal(convertsText(Type.Object({ v: Type.Union([Type.String(), Type.Array(Type.String())]) })), false, 'text or a list of text')
})
