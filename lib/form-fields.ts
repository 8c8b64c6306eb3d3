// Form fields (urlencoded bodies and the text parts of multipart ones) as a JSON body, the way
// teenybase reads them: a dotted name is a path (`values.title=x` -> { values: { title: 'x' } }),
// PHP-style brackets too (`values[title]=x`), and a repeated name collects its values in an array.
// Names are bounded (length, depth) and can never reach an object's prototype.
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { errors } from './errors.js'
import { MAX_FIELD_NAME_DEPTH } from './limits.js'
import { isObject } from './plain.js'

type Row = Record<string, unknown>

/** Longest field name read: a name is a path into the body, never data. */
export const MAX_FIELD_NAME = 200
/** Keys that must never become properties of a body built from caller text. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** `values.title` and `values[title]` -> ['values', 'title']; a name out of bounds is a 400. */
export function formFieldPath (name: string): string[] {
  const path = name.length > MAX_FIELD_NAME ? [] : name.replace(/\[([^[\]]*)\]/g, '.$1').split('.')
  if (path.length === 0 || path.length > MAX_FIELD_NAME_DEPTH || path.some((k) => k === '' || FORBIDDEN_KEYS.has(k))) {
    throw errors.badRequest(`Invalid form field name "${name.slice(0, 60)}": at most ${MAX_FIELD_NAME_DEPTH} dot-separated names of at most ${MAX_FIELD_NAME} characters in all`)
  }
  return path
}

/** Sets field `name` of `body` to `value`; a name given before collects both in an array. */
export function setFormField (body: Row, name: string, value: unknown): void {
  const path = formFieldPath(name)
  let node = body
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : (node[key] = {})
    if (!isObject(next)) throw errors.badRequest(`Form field "${name}" conflicts with "${key}"`)
    node = next
  }
  const last = path.at(-1)!
  const given = node[last]
  if (!Object.hasOwn(node, last)) node[last] = value
  else if (Array.isArray(given)) given.push(value)
  else if (typeof given === 'object' && given !== null) throw errors.badRequest(`Form field "${name}" conflicts with a nested field`)
  else node[last] = [given, value]
}

/** Form text converted to the types the body schema asks for (`views=7` -> 7, `published=true` -> true). */
export function typedForm (schema: TSchema | undefined, form: Row): Row {
  return (schema === undefined ? form : Value.Convert(schema, form)) as Row
}

/** An urlencoded body as a JSON body; more than `maxFields` fields is a 413. */
export function urlencodedBody (text: string, maxFields: number, schema: TSchema | undefined): Row {
  const form: Row = {}
  let count = 0
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > maxFields) throw errors.payloadTooLarge(`More than ${maxFields} form fields`)
    setFormField(form, name, value)
  }
  return typedForm(schema, form)
}
