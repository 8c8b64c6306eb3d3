// Dialect-neutral value conversions shared by both dialects (DECISIONS 1).

/** A request value that does not fit its column; the message completes "<field> ...". */
export class ValueError extends Error {}

/** A `json` field accepts any JSON value; a string holding valid JSON text is parsed (teenybase clients send text). */
export function jsonInput (value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
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
