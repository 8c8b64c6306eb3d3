// Signing keys for the tokens fastbase issues (lib/auth/types.ts TokenKey), made with fast-jwt (the
// library @fastify/jwt wraps; used directly, the keys are built without an app). One algorithm signs
// and only that one verifies: a token re-signed with another HMAC (HS512 with the same key) is
// refused, whatever its header claims.
import { createSigner, createVerifier } from 'fast-jwt'
import type { Row, TokenKey } from '../types.js'

export type TokenAlgorithm = 'HS256' | 'HS384' | 'HS512'

type Signer = (claims: Row) => string

export function tokenKey (secret: string, algorithm: TokenAlgorithm): TokenKey {
  if (secret === '') throw new Error('fastbase: a token key needs a secret')
  const plain: Signer = createSigner({ key: secret, algorithm })
  // One signer per lifetime: the lifetimes come from the config and the code (a handful).
  const expiring = new Map<number, Signer>()
  const signerFor = (seconds: number): Signer => {
    let signer = expiring.get(seconds)
    if (signer === undefined) expiring.set(seconds, signer = createSigner({ key: secret, algorithm, expiresIn: seconds * 1000 }))
    return signer
  }
  const strict = createVerifier({ key: secret, algorithms: [algorithm] })
  const lenient = createVerifier({ key: secret, algorithms: [algorithm], ignoreExpiration: true })
  return {
    sign: (claims, expiresInSeconds) => (expiresInSeconds === undefined ? plain : signerFor(expiresInSeconds))(claims),
    verify: (token, options) => (options?.allowExpired === true ? lenient : strict)(token)
  }
}
