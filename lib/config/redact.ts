// The effective config with its secrets taken out, for `GET /settings` (DECISIONS 15, 33). Works on
// resolved values: by the time a config reaches the app its `$NAME` references hold the secrets.
//
// A value is replaced by REDACTED, whole (an object or a list too: a provider `secret` may be a JWK),
// when it sits at one of the positions lib/config/secrets.ts resolves `$NAME` references in (one list
// of secret positions for both), when its key names a credential (keys the schema lets through
// unchecked: extra provider or email settings), or when it is a URL carrying a password.
import { isSecretPosition } from './secrets.js'

export const REDACTED = '***'

type Segment = string | number

/**
 * Keys that name a credential wherever they appear (`apiKey`, `MAILGUN_API_KEY`, `privateKey`,
 * `accessToken`...). Anchored at the end, so settings about credentials (`passwordType`,
 * `jwtTokenDuration`) are not taken for them.
 */
const CREDENTIAL_KEY = /(?:secret|password|passwd|passphrase|api_?key|access_?key|private_?key|signing_?key|credentials?|(?:access|refresh|auth|api|bearer|service)_?token)$/i

const URL_WITH_USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^\s@/]*:[^\s@]*@/i

/** A copy of `config` with every secret value replaced by `"***"`; the input is not modified. */
export function redactSecrets<T> (config: T): T {
  return copy(config, []) as T
}

function copy (node: unknown, path: Segment[]): unknown {
  if (Array.isArray(node)) return node.map((child, i) => redacted(child, [...path, i]))
  if (typeof node !== 'object' || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(node)) {
    if (child === undefined) continue
    // defineProperty: a config parsed from JSON may have an own `__proto__` key.
    Object.defineProperty(out, key, { value: redacted(child, [...path, key]), enumerable: true, writable: true, configurable: true })
  }
  return out
}

function redacted (value: unknown, path: Segment[]): unknown {
  if (isSecret(value, path)) return REDACTED
  return copy(value, path)
}

function isSecret (value: unknown, path: Segment[]): boolean {
  // Nothing to hide in an unset value or a flag; an empty string says only that no secret is set.
  if (value === null || value === undefined || value === '' || typeof value === 'boolean') return false
  if (isSecretPosition(path)) return true
  const key = path[path.length - 1]
  if (typeof key === 'string' && CREDENTIAL_KEY.test(key)) return true
  return typeof value === 'string' && hasPassword(value)
}

/** `smtp://user:pass@host`, `postgres://u:p@h/db` and the like. */
function hasPassword (value: string): boolean {
  if (!value.includes('@') || !value.includes('://')) return false
  try {
    return new URL(value).password !== ''
  } catch {
    // An unencoded `/` or `#` in a password makes the URL unparsable: fall back to the pattern.
    return URL_WITH_USERINFO.test(value)
  }
}
