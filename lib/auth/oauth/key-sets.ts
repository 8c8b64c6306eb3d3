// Providers' public key sets (JWKS), one per URL per app, shared by every flow that verifies their
// tokens (the OAuth callback, one-tap, login-token). jose keeps the keys and refetches on an unknown
// `kid`, at most once per cooldown, so a caller sending made-up `kid`s cannot make us hammer the provider.
// jose is loaded on the first verification, not at start: most servers never verify a provider's token.
import type { JWTVerifyGetKey } from 'jose'

const FETCH_TIMEOUT = 5000
const KEEP_KEYS = 10 * 60_000
const REFETCH_COOLDOWN = 30_000

export class RemoteKeySets {
  private readonly sets = new Map<string, JWTVerifyGetKey>()

  constructor (private readonly timeoutMs = FETCH_TIMEOUT) {}

  get (url: string | URL): JWTVerifyGetKey {
    const href = new URL(url).href
    let keySet = this.sets.get(href)
    if (keySet === undefined) {
      let remote: Promise<JWTVerifyGetKey> | undefined
      const options = { timeoutDuration: this.timeoutMs, cacheMaxAge: KEEP_KEYS, cooldownDuration: REFETCH_COOLDOWN }
      keySet = async (header, token) => {
        remote ??= import('jose').then(({ createRemoteJWKSet }) => createRemoteJWKSet(new URL(href), options))
        return await (await remote)(header, token)
      }
      this.sets.set(href, keySet)
    }
    return keySet
  }
}
