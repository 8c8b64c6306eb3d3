// The effective config with its secrets taken out, for `GET /settings` (decisions D15, D33), which any
// admin, a viewer included, may read. Works on resolved values: by the time a config reaches the app
// its `$NAME` references hold the secrets.
//
// An allow-list: a value is shown only where the config schema (schemas/config.ts) describes it, so
// the list stays in step with the schema. Everything else becomes REDACTED, whole: keys the schema
// lets through unchecked (extra email or provider settings, a rate-limit object), values at the
// positions lib/config/secrets.ts resolves `$NAME` references in (one list of secret positions for
// both), and values of a shape the schema does not expect. Inside values that are shown, URLs keep
// their scheme, host and path; a password in them hides the whole URL, query values and fragments
// become REDACTED (API keys travel there).
import { KindGuard, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { DatabaseSettingsSchema } from '../../schemas/config.js'
import { isSecretPosition } from './secrets.js'

export const REDACTED = '***'

type Segment = string | number

/** A copy of `config` with everything not known to be harmless replaced by `"***"`; the input is not modified. */
export function redactSecrets<T> (config: T, schema: TSchema = DatabaseSettingsSchema): T {
  return shown(config, schema, []) as T
}

function shown (value: unknown, schema: TSchema | undefined, path: Segment[]): unknown {
  // Nothing to hide in an unset value or a flag; an empty string says only that no secret is set.
  if (value === null || typeof value === 'boolean' || value === '') return value
  if (schema === undefined || isSecretPosition(path)) return REDACTED
  if (KindGuard.IsUnion(schema)) return shown(value, schema.anyOf.find((candidate) => Value.Check(candidate, value)), path)
  if (KindGuard.IsArray(schema)) return Array.isArray(value) ? value.map((item, i) => shown(item, schema.items, [...path, i])) : REDACTED
  if (KindGuard.IsObject(schema)) {
    const { properties } = schema
    return isObject(value) ? entries(value, path, (key) => Object.hasOwn(properties, key) ? properties[key] : undefined) : REDACTED
  }
  if (KindGuard.IsRecord(schema)) {
    const values = Object.values(schema.patternProperties)[0]
    return isObject(value) ? entries(value, path, () => values) : REDACTED
  }
  // The developer's own data in the config (SQL literals, parameter defaults): shown, with its URLs masked.
  if (KindGuard.IsUnknown(schema) || KindGuard.IsAny(schema)) return developerData(value)
  if (Array.isArray(value) || typeof value === 'object') return REDACTED
  return typeof value === 'string' ? maskedUrls(value) : value
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function entries (value: Record<string, unknown>, path: Segment[], schemaOf: (key: string) => TSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue
    // defineProperty: a config parsed from JSON may have an own `__proto__` key.
    Object.defineProperty(out, key, { value: shown(child, schemaOf(key), [...path, key]), enumerable: true, writable: true, configurable: true })
  }
  return out
}

function developerData (value: unknown): unknown {
  if (typeof value === 'string') return maskedUrls(value)
  if (Array.isArray(value)) return value.map(developerData)
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: developerData(child), enumerable: true, writable: true, configurable: true })
  }
  return out
}

// A URL inside a text: a scheme, `://`, then everything up to white space or a quote.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/** `text` with each URL in it masked (maskedUrl). */
function maskedUrls (text: string): string {
  if (!text.includes('://')) return text
  return text.replace(URL_IN_TEXT, maskedUrl)
}

/**
 * A URL with a password is REDACTED whole (an unparsable one too when its authority holds `:` and
 * `@`: an unencoded `/` or `#` in a password breaks parsing); otherwise each query value and the
 * fragment become REDACTED.
 */
function maskedUrl (text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return /^[^/]*:\/\/[^@/]*:[^@]*@/.test(text) ? REDACTED : text
  }
  if (url.password !== '') return REDACTED
  if (url.search === '' && url.hash === '') return text
  const query = url.search === '' ? '' : '?' + url.search.slice(1).split('&').map((pair) => `${pair.split('=')[0]}=${REDACTED}`).join('&')
  const base = text.slice(0, text.search(/[?#]/))
  return base + query + (url.hash === '' ? '' : `#${REDACTED}`)
}
