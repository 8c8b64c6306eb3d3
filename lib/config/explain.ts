// Schema problems (TypeBox), rewritten into messages a developer can act on: `path: message`,
// with the path written the way a developer would index the config (`tables[1].fields[3].type`),
// unions explained by the variant that fits best, and "did you mean" for misspelt keys and values.
import { Value } from '@sinclair/typebox/value'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { KindGuard, type TSchema } from '@sinclair/typebox'
import { DatabaseSettingsSchema, SqlValueSchema } from '../../schemas/config.js'
import { formatPath } from './paths.js'
import { isObject } from '../plain.js'

/** TypeBox's JSON pointer (`/tables/1/name`) as segments, numbers where the value is an array. */
function pointerSegments (pointer: string, root: unknown): (string | number)[] {
  const segments: (string | number)[] = []
  let node: unknown = root
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const index = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : undefined
    segments.push(index ?? key)
    node = Array.isArray(node) ? (index === undefined ? undefined : node[index]) : isObject(node) ? node[key] : undefined
  }
  return segments
}

interface Problem { pointer: string, message: string }

/** Every problem the schema finds in `config`, one `path: message` line each, without repeats. */
export function schemaProblems (config: unknown): string[] {
  const seen = new Set<string>()
  const problems: string[] = []
  const required = new Set<string>()
  for (const problem of explain([...Value.Errors(DatabaseSettingsSchema, config)])) {
    // A missing key is reported once as "is required", not again as "must be a string".
    if (required.has(problem.pointer) && problem.message !== 'is required') continue
    if (problem.message === 'is required') required.add(problem.pointer)
    const text = `${formatPath(pointerSegments(problem.pointer, config))}: ${problem.message}`
    if (!seen.has(text)) problems.push(text)
    seen.add(text)
  }
  return problems
}

function * explain (errors: ValueError[]): Iterable<Problem> {
  for (const error of errors) {
    if (error.type === ValueErrorType.Union) yield * explainUnion(error)
    else if (error.type === ValueErrorType.ObjectAdditionalProperties) yield unknownKey(error)
    else yield { pointer: error.path, message: messageFor(error) }
  }
}

function unknownKey (error: ValueError): Problem {
  const cut = error.path.lastIndexOf('/')
  const key = error.path.slice(cut + 1).replace(/~1/g, '/').replace(/~0/g, '~')
  const patterns = Object.keys(error.schema.patternProperties ?? {})
  if (patterns.length > 0) {
    // A record whose keys must match a pattern (action param names): say what a key must look like.
    const rule = PATTERN_HINTS[patterns[0]] ?? `must match ${patterns[0]}`
    return { pointer: error.path.slice(0, cut), message: `key ${JSON.stringify(key)} ${rule}` }
  }
  const known = Object.keys(error.schema.properties ?? {})
  const guess = suggest(key, known)
  return {
    pointer: error.path.slice(0, cut),
    message: `unknown key ${JSON.stringify(key)}${guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`}`
  }
}

/**
 * TypeBox says only "Expected union value". Instead: a union of literals lists its values; for
 * other unions the variant that fits the value best (same JSON kind, same discriminator such as
 * an extension's `name`, fewest errors) explains what is wrong inside it.
 */
function * explainUnion (error: ValueError): Iterable<Problem> {
  const variants = KindGuard.IsUnion(error.schema) ? error.schema.anyOf : []
  const kindMatches = variants.map((variant, i) => ({ variant, errors: [...error.errors[i]] }))
    .filter(({ variant }) => fitsKind(variant, error.value))
  const candidates = kindMatches.filter(({ variant }) => sameDiscriminator(variant, error.value))
  if (candidates.length > 0) {
    // Fewest distinct paths: a missing key yields two errors at one path, which should count once.
    const weight = (errors: ValueError[]): number => new Set(errors.map((e) => e.path)).size
    candidates.sort((a, b) => weight(a.errors) - weight(b.errors))
    yield * explain(candidates[0].errors)
    return
  }
  // Optional() copies the union object, but keeps its variant list.
  if (error.schema.anyOf === SqlValueSchema.anyOf) {
    const hint = error.value === null || typeof error.value !== 'object' ? ` (for a literal write sqlValue(${JSON.stringify(error.value)}))` : ''
    yield { pointer: error.path, message: `must be sql\`...\` ({ q }), sqlValue(x) ({ l }) or a SQL string${hint}` }
    return
  }
  const discriminator = kindMatches.length > 0 ? discriminatorKey(kindMatches.map((m) => m.variant)) : undefined
  if (discriminator !== undefined) {
    const allowed = variants.map((v) => literalOf(KindGuard.IsObject(v) ? v.properties[discriminator] : v))
    yield { pointer: `${error.path}/${discriminator}`, message: `must be one of ${allowed.join(', ')}` }
    return
  }
  yield { pointer: error.path, message: describeChoices(variants) + typoHint(variants, error.value) }
}

/** ` (did you mean "integer"?)` when a string is close to one of a union's string literals. */
function typoHint (variants: TSchema[], value: unknown): string {
  if (typeof value !== 'string') return ''
  const literals = variants.flatMap((v) => typeof v.const === 'string' ? [v.const] : [])
  const guess = suggest(value, literals)
  return guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`
}

/** Does the value have the JSON kind the schema accepts (for literals: is it that literal)? */
function fitsKind (schema: TSchema, value: unknown): boolean {
  if ('const' in schema) return schema.const === value
  if (KindGuard.IsUnion(schema)) return schema.anyOf.some((s) => fitsKind(s, value))
  switch (schema.type) {
    case 'string': return typeof value === 'string'
    case 'number': return typeof value === 'number'
    case 'integer': return typeof value === 'number'
    case 'boolean': return typeof value === 'boolean'
    case 'null': return value === null
    case 'array': return Array.isArray(value)
    case 'object': return isObject(value)
    default: return true
  }
}

/** False when an object variant's literal property (e.g. `name: 'auth'`) disagrees with the value. */
function sameDiscriminator (schema: TSchema, value: unknown): boolean {
  if (!KindGuard.IsObject(schema) || !isObject(value)) return true
  return Object.entries(schema.properties)
    .every(([key, property]) => !('const' in property) || !(key in value) || property.const === value[key])
}

function discriminatorKey (variants: TSchema[]): string | undefined {
  const [first, ...rest] = variants
  const keys = Object.entries(KindGuard.IsObject(first) ? first.properties : {})
    .filter(([, property]) => 'const' in property).map(([key]) => key)
  return keys.find((key) => rest.every((v) => v.properties?.[key] !== undefined && 'const' in v.properties[key]))
}

function literalOf (schema: TSchema): string {
  return String(schema.const)
}

/** "must be one of text, number, ..." / "must be a string or an array" / "must be false or an object". */
function describeChoices (variants: TSchema[]): string {
  const literals: string[] = []
  const kinds: string[] = []
  const collect = (schema: TSchema): void => {
    if ('const' in schema) literals.push(literalOf(schema))
    else if (KindGuard.IsUnion(schema)) schema.anyOf.forEach(collect)
    else {
      const kind = KIND_NAMES[String(schema.type)] ?? 'something else'
      if (!kinds.includes(kind)) kinds.push(kind)
    }
  }
  variants.forEach(collect)
  const literalText = literals.length === 1 ? literals[0] : `one of ${literals.join(', ')}`
  return `must be ${alternatives(literals.length === 0 ? kinds : [literalText, ...kinds])}`
}

/** `a`, `a or b`, `a, b or c`. */
function alternatives (items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}

const KIND_NAMES: Record<string, string> = {
  string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', null: 'null', array: 'an array', object: 'an object'
}

const PATTERN_HINTS: Record<string, string> = {
  '^[a-zA-Z_][a-zA-Z0-9_]*$': 'must start with a letter or underscore and contain only letters, digits and underscores',
  '^[a-zA-Z_][a-zA-Z0-9_-]*$': 'must start with a letter or underscore and contain only letters, digits, underscores and hyphens',
  '^_[a-zA-Z0-9_]*$': 'must start with an underscore and contain only letters, digits and underscores'
}

function messageFor (error: ValueError): string {
  const s: Record<string, unknown> = error.schema
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty: return 'is required'
    case ValueErrorType.String: return 'must be a string'
    case ValueErrorType.Number: return 'must be a number'
    case ValueErrorType.Integer: return 'must be an integer'
    case ValueErrorType.Boolean: return 'must be a boolean'
    case ValueErrorType.Null: return 'must be null'
    case ValueErrorType.Array: return 'must be an array'
    case ValueErrorType.Object: return 'must be an object'
    case ValueErrorType.Literal: return `must be ${String(s.const)}`
    case ValueErrorType.StringPattern: return PATTERN_HINTS[String(s.pattern)] ?? `must match ${String(s.pattern)}`
    case ValueErrorType.StringMinLength: return s.minLength === 1 ? 'must not be empty' : `must be at least ${String(s.minLength)} characters`
    case ValueErrorType.StringMaxLength: return `must be at most ${String(s.maxLength)} characters`
    case ValueErrorType.ArrayMinItems: return s.minItems === 1 ? 'must not be empty' : `must have at least ${String(s.minItems)} items`
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum: return `must be at least ${String(s.minimum)}`
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum: return `must be at most ${String(s.maximum)}`
    default: return error.message
  }
}

/** The known key closest to a misspelt one, if it is close enough to be a plausible typo. */
export function suggest (key: string, known: readonly string[]): string | undefined {
  const limit = key.length <= 4 ? 1 : key.length <= 8 ? 2 : 3
  let best: string | undefined
  let bestDistance = limit + 1
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) { best = candidate; bestDistance = d }
  }
  return best
}

/** Levenshtein distance, one row at a time. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}
