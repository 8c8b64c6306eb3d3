// PostgreSQL's text form of a timestamptz, as fastbase's sessions produce it (DateStyle ISO, TimeZone
// UTC: `2026-11-27 01:21:06.434567+00`), turned straight into the ISO text answers carry
// (`2026-11-27T01:21:06.434Z`). pg's own parser makes a Date of it (a regex match, a Date, then
// toISOString again), which was the largest allocation of a read of dated rows.

// Only what a UTC session writes for years 0000–9999; anything else (another offset, BC, a
// five-digit year, infinity) goes to pg's parser, which handles every form.
const UTC_TEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?\+00$/

// Where the fraction starts: `YYYY-MM-DD HH:MM:SS.`
const FRACTION_AT = 20

/**
 * The ISO text of a UTC timestamptz, or undefined when the text is in another form. Milliseconds are
 * the first three digits of the fraction, as a Date made from it keeps them (truncated, not rounded).
 */
export function isoFromUtcText (text: string): string | undefined {
  if (!UTC_TEXT.test(text)) return undefined
  // The common form, three fraction digits or more: two pieces of the text, no padding (a dated row
  // makes this string per date, and pieces are objects the collector then has to copy or free).
  if (text.length >= FRACTION_AT + 3 + 3) return `${text.slice(0, 10)}T${text.slice(11, FRACTION_AT + 3)}Z`
  // Without a fraction the slice is empty: its end (before `+00`) comes before its start.
  const fraction = text.slice(FRACTION_AT, text.length - 3)
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(3, '0')}Z`
}

/** Whether a text is already in the form isoFromUtcText answers (so a decoder need not parse it again). */
export function isCanonicalIso (text: string): boolean {
  return text.length === 24 && text.charCodeAt(10) === 84 /* T */ && text.charCodeAt(23) === 90 /* Z */
}
