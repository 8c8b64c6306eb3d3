// The claims of a JWT read without verifying it: only to choose which key verifies it (the `cid`
// names the auth table, an admin token's `aud` its role). Nothing read here is trusted until that key has verified the token.
import { isObject } from '../../plain.js'

type Row = Record<string, unknown>

export function unverifiedClaims (token: string): Row | null {
  const parts = token.split('.')
  if (parts.length !== 3) return null
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
    return isObject(claims) ? claims : null
  } catch {
    return null
  }
}
