// Dialect-neutral value conversions shared by both dialects (decision D1).

/** A request value that does not fit its column; the message completes "<field> ...". */
export class ValueError extends Error {
  override name = 'ValueError'
}

/** A `json` field accepts any JSON value; a string holding valid JSON text is parsed (teenybase clients send text). */
export function jsonInput (value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

/**
 * Nesting a stored `json` value may have. SQLite's and PostgreSQL's JSON functions give up near 1000
 * levels (errors on rows a rule may hide) and JSON.stringify a few thousand levels in (a stack overflow).
 */
export const MAX_JSON_DEPTH = 64

/** The text stored for a `json` field. */
export function jsonText (value: unknown): string {
  const tooDeep = () => new ValueError(`must be JSON nested at most ${MAX_JSON_DEPTH} levels deep`)
  let text: string
  try {
    text = JSON.stringify(jsonInput(value))
  } catch {
    throw tooDeep()
  }
  if (nesting(text) > MAX_JSON_DEPTH) throw tooDeep()
  return text
}

/** Deepest bracket nesting of JSON text, strings skipped; one pass, no recursion. */
function nesting (text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 91 || c === 123) {
      deepest = Math.max(deepest, ++depth)
    } else if (c === 93 || c === 125) {
      depth--
    }
  }
  return deepest
}

const NUMBER_TEXT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * A value for a number column: numbers as they are, numeric text as its number, anything else
 * refused, so `views == 'abc'` is the same 400 on both databases (PostgreSQL would fail the cast,
 * SQLite would quietly compare text with numbers).
 */
export function numberInput (value: unknown, integer = false): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && NUMBER_TEXT.test(value.trim()) ? Number(value) : undefined
  if (number === undefined || !Number.isFinite(number)) throw new ValueError('must be a number')
  // Past 64 bits PostgreSQL's cast fails, and only when a row reaches it: refused up front on both.
  if (integer && Math.abs(number) >= 2 ** 63) throw new ValueError('is out of range for a 64-bit integer')
  return number
}

// `2026-11-21 15:07:47` (SQLite's CURRENT_TIMESTAMP) and ISO 8601 with or without zone; no zone means UTC.
const DATE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/** Parses a date value from a request or from SQLite storage. Throws TypeError when it is not a date. */
export function toDate (value: unknown): Date {
  if (value instanceof Date) return value
  if (typeof value === 'string' && DATE_RE.test(value)) {
    let text = value.replace(' ', 'T')
    if (text.length === 10) text += 'T00:00:00'
    if (!/(?:Z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z'
    const date = new Date(text)
    if (!Number.isNaN(date.getTime())) return date
  }
  throw new ValueError('must be a date-time such as 2026-11-21T15:07:47Z')
}

/** SQLite storage format of dates: sortable text, UTC, milliseconds (matches strftime('%Y-%m-%d %H:%M:%f')). */
export function sqliteDateText (date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '')
}

export function isDateText (value: string): boolean {
  return DATE_RE.test(value)
}
