// Email addresses as auth identifiers.
//
// Normalisation is deliberately only trim + lower-case. teenybase also strips dots and `+tags`
// from gmail/outlook/... local parts, but that merges addresses that are distinct mailboxes
// (or distinct accounts a user created on purpose), and makes the stored email differ from the
// one the user typed; fastbase does not do it.

export const EMAIL_MAX_LENGTH = 255

// The zod 4 default email pattern, which teenybase validates with (§1.8): ASCII only, no leading,
// trailing or doubled dot in the local part, a dotted domain with a 2+ letter TLD.
const EMAIL_PATTERN = /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/

/** Trimmed and lower-cased; nothing else (see above). */
export function normalizeEmail (raw: string): string {
  return raw.trim().toLowerCase()
}

/** Syntax check only, on the value as given (normalise first to accept surrounding spaces). */
export function isValidEmail (s: string): boolean {
  return typeof s === 'string' && s.length > 0 && s.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(s)
}
