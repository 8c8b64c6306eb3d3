// TypeBox validation with error messages people can act on: union failures are resolved to the
// branch that matched the value's shape, and every error is reported under the field it belongs to.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { FormatRegistry, type TSchema } from '@sinclair/typebox'
import { ValueErrorType, type ValueError, type ValueErrorIterator } from '@sinclair/typebox/errors'
import { isDateText } from './values.js'
import { addFieldError, errors, type FastbaseError, type FieldErrors } from './errors.js'
import { isObject } from './plain.js'

// Formats the record schemas use (TypeBox ships none).
// Dot-separated domain labels that cannot contain dots: one way to match, so linear time on any
// input (`[^\s@]+\.[^\s@]+` backtracks quadratically on `a@a.a.a...@`). Addresses longer than
// RFC 5321's 254 characters are refused before the pattern runs.
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/
const EMAIL_MAX_LENGTH = 254
FormatRegistry.Set('email', (v) => v.length <= EMAIL_MAX_LENGTH && EMAIL.test(v))
FormatRegistry.Set('uri', (v) => { try { return /^[a-z][a-z0-9+.-]*:/i.test(v) && Boolean(new URL(v)) } catch { return false } })
FormatRegistry.Set('date-time', (v) => isDateText(v))

export interface Issue { path: string, message: string }

function branchIssues (error: ValueError): Issue[] {
  if (error.type !== ValueErrorType.Union || error.errors.length === 0) return [{ path: error.path, message: friendly(error) }]
  const branches = error.errors.map((it: ValueErrorIterator) => [...it])
  // The branch whose errors are all inside the value matched its shape: report those.
  const inside = branches.filter((b) => b.length > 0 && b.every((e) => e.path.length > error.path.length))
  if (inside.length > 0) {
    const best = inside.reduce((a, b) => (b.length < a.length ? b : a))
    return best.flatMap(branchIssues)
  }
  const expected = branches.flatMap((b) => b.filter((e) => e.path === error.path).map((e) => friendly(e).replace(/^Expected /, '')))
  return [{ path: error.path, message: `Expected ${[...new Set(expected)].join(' or ')}` }]
}

function friendly (error: ValueError): string {
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty: return requiredMessage(error.path)
    case ValueErrorType.ObjectAdditionalProperties: return 'Unknown field'
    case ValueErrorType.StringFormat: return `Expected ${error.schema.format === 'uri' ? 'a URL' : error.schema.format === 'date-time' ? 'a date-time such as 2026-11-21T15:07:47Z' : `a valid ${String(error.schema.format)}`}`
    default: return error.message
  }
}

/** A missing property, worded as teenybase words its own (`passwordConfirm is required`). */
function requiredMessage (path: string): string {
  return `${path.split('/').at(-1) ?? 'value'} is required`
}

export function issues (errors: Iterable<ValueError>): Issue[] {
  const all = [...errors].flatMap(branchIssues)
  // A missing property also fails its type check; "<name> is required" says it all.
  const isMissing = (i: Issue): boolean => i.message === requiredMessage(i.path)
  const missing = new Set(all.filter(isMissing).map((i) => i.path))
  return all.filter((i) => isMissing(i) || !missing.has(i.path))
}

/**
 * The validation error for these issues: each under `data.<field>._errors`, the field being the last
 * non-index segment of its path; an issue about the whole value goes in the root's `_errors`.
 */
export function validationError (list: Issue[]): FastbaseError {
  const fields: FieldErrors = {}
  const root: string[] = []
  for (const issue of list) {
    const field = issue.path.split('/').filter((s) => s !== '' && !/^\d+$/.test(s)).at(-1)
    if (field === undefined) root.push(issue.message)
    else addFieldError(fields, field, issue.message)
  }
  return errors.validation(fields, root)
}

/**
 * What a validator answers, as Fastify reads it: `true` when the value passes as it is (no result
 * object per request: most do), the converted value, or the errors.
 */
export type ValidatorResult = true | { value: unknown, error?: undefined } | { error: Array<{ instancePath: string, message: string }> }

/**
 * A Fastify validator: bodies are checked as sent; query strings and params are converted from text
 * first. Conversion only changes what fails the schema as sent (`limit=20` to a number), so a value
 * that passes as sent is taken as it is, without TypeBox's conversion (a walk over schema and value
 * per request, most of a plain read's validation cost: decision D134). The exception is a union
 * that admits text and also a number, boolean or null: conversion may pick the other branch.
 */
export function compileValidator (schema: TSchema, coerce: boolean): (value: unknown) => ValidatorResult {
  const check = TypeCompiler.Compile(schema)
  const convertAlways = coerce && convertsText(schema)
  return (input) => {
    const value = coerce && (convertAlways || !check.Check(input)) ? Value.Convert(schema, input) : input
    if (check.Check(value)) return value === input ? true : { value }
    return { error: issues(check.Errors(value)).map((i) => ({ instancePath: i.path, message: i.message })) }
  }
}

const SCALARS = new Set(['number', 'integer', 'boolean', 'null'])

/** Whether `schema` holds a union with a branch that takes text and one that takes a number, boolean or null. */
export function convertsText (schema: unknown, depth = 0): boolean {
  if (!isObject(schema) || depth > 32) return false
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf.filter(isObject) : []
  const text = branches.some((b) => b.type === 'string' || b.type === undefined)
  const other = branches.some((b) => SCALARS.has(String(b.type)) || (b.const !== undefined && typeof b.const !== 'string'))
  if (text && other) return true
  return Object.values(schema).some((v) => convertsText(v, depth + 1))
}
