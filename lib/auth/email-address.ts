// Email addresses as auth identifiers.
//
// Normalisation is deliberately only trim + lower-case. teenybase also strips dots and `+tags`
// from gmail/outlook/... local parts, but that merges addresses that are distinct mailboxes
// (or distinct accounts a user created on purpose), and makes the stored email differ from the
// one the user typed; fastbase does not do it. Accounts teenybase created are stored in its form,
// though, so logins fall back to it (teenybaseEmail, decision D36).

export const EMAIL_MAX_LENGTH = 255

// The zod 4 default email pattern, which teenybase validates with: ASCII only, no leading,
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

// teenybase's provider rules: which domains lose dots and which lose `+tags` from the local part,
// and googlemail.com, which becomes gmail.com.
const DOTS_AND_TAGS = new Set(['gmail.com', 'googlemail.com', 'live.com'])
const TAGS_ONLY = new Set(['hotmail.com', 'outlook.com', 'yahoo.com'])

/**
 * The form teenybase stored `raw` in (`A.B+news@GoogleMail.com` -> `ab@gmail.com`), or undefined when
 * it is not an address. Only for finding accounts a teenybase project created; never stored.
 */
export function teenybaseEmail (raw: string): string | undefined {
  const email = normalizeEmail(raw)
  const at = email.indexOf('@')
  if (at <= 0 || at !== email.lastIndexOf('@') || at === email.length - 1) return undefined
  let local = email.slice(0, at)
  const domain = email.slice(at + 1)
  if (DOTS_AND_TAGS.has(domain)) local = local.replaceAll('.', '')
  if (DOTS_AND_TAGS.has(domain) || TAGS_ONLY.has(domain)) local = local.split('+')[0]
  return `${local}@${domain === 'googlemail.com' ? 'gmail.com' : domain}`
}
