// The OAuth redirect flow over real HTTP on both dialects: the app on 127.0.0.1 and a real OpenID
// provider (oauth2-mock-server) beside it, driven by a small cookie jar over fetch.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OAuth2Server } from 'oauth2-mock-server'
import { SignJWT, generateKeyPair } from 'jose'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'
import { oauthConfigProblems, OAUTH_PRESETS } from '../../../lib/auth/oauth/oauth-providers.js'
import { checkAppUrl } from '../../../lib/config/checks/app.js'
import { OAUTH_STATES } from '../../../lib/auth/stores/store-tables.js'
import { purgeExpired, KEEP_EXPIRED_FOR } from '../../../lib/auth/stores/purge.js'
import { totpNow } from '../../fixtures/totp.js'

const APP_URL = 'https://app.example.com'
/** The state cookie under an https appUrl: a `__Host-` cookie, which no sibling page can set. */
const STATE = '__Host-fastbase_oauth_state'
const CLIENT_ID = 'fastbase-client'

interface Provider {
  issuer: string
  server: OAuth2Server
  /** Changes to the next ID tokens' claims (undefined deletes a claim). */
  idClaims: Record<string, unknown>
  userinfo: Record<string, unknown>
  /** Replaces the next token response's id_token. */
  forgedIdToken?: string
}

async function provider (t: Test): Promise<Provider> {
  const server = new OAuth2Server()
  await server.issuer.keys.generate('RS256')
  await server.start(0, '127.0.0.1')
  t.teardown(() => server.stop())
  const p: Provider = { issuer: server.issuer.url!, server, idClaims: {}, userinfo: {} }
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    // The ID token is the one without `amr` (the access token has it).
    if ('amr' in token.payload) return
    for (const [k, v] of Object.entries(p.idClaims)) {
      if (v === undefined) delete token.payload[k]
      else token.payload[k] = v
    }
  })
  server.service.on('beforeUserinfo', (response: { body: Record<string, unknown> }) => {
    response.body = { ...response.body, ...p.userinfo }
  })
  server.service.on('beforeResponse', (response: { body: Record<string, unknown> }) => {
    if (p.forgedIdToken === undefined) return
    response.body.id_token = p.forgedIdToken
    p.forgedIdToken = undefined
  })
  return p
}

function configWith (p: Provider, extra: Partial<DatabaseSettings> = {}): DatabaseSettings {
  return {
    jwtSecret: 'global-secret',
    appUrl: APP_URL,
    rateLimit: false,
    authCookie: { name: 'acme_auth' },
    allowedRedirectUrls: ['https://admin.example.com:8443/panel'],
    authProviders: [
      // The google preset pointed at the mock provider: config overrides preset fields.
      { name: 'google', clientId: CLIENT_ID, clientSecret: 'shh', issuer: p.issuer, authorizeUrl: `${p.issuer}/authorize`, tokenUrl: `${p.issuer}/token`, jwksUrl: `${p.issuer}/jwks` },
      // A custom OpenID provider known only by its issuer: discovery.
      { name: 'disco', clientId: CLIENT_ID, clientSecret: 'shh', issuer: p.issuer },
      // A plain OAuth 2 provider read through its userinfo endpoint.
      { name: 'plain', clientId: CLIENT_ID, clientSecret: 'shh', authorizeUrl: `${p.issuer}/authorize`, tokenUrl: `${p.issuer}/token`, userinfoUrl: `${p.issuer}/userinfo` },
      // One-tap only (no secret): not served by the redirect flow.
      { name: 'onetap', clientId: CLIENT_ID, issuer: p.issuer, jwksUrl: `${p.issuer}/jwks` }
    ],
    tables: [{
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600 },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    }],
    ...extra
  }
}

/** Cookies by name and path, as a browser keeps them for one host. */
class Jar {
  cookies = new Map<string, { name: string, value: string, path: string, attributes: string }>()
  take (response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attrs] = header.split(';').map((s) => s.trim())
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]
      const path = attrs.find((a) => /^path=/i.test(a))?.slice(5) ?? '/'
      const key = `${name};${path}`
      if (/max-age=0\b/i.test(header) || value === '') this.cookies.delete(key)
      else this.cookies.set(key, { name, value, path, attributes: header })
    }
  }

  header (url: string): string {
    const path = new URL(url).pathname
    return [...this.cookies.values()].filter((c) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`).join('; ')
  }

  get (name: string): string | undefined {
    return [...this.cookies.values()].find((c) => c.name === name)?.value
  }

  set (name: string, value: string, path: string): void {
    this.cookies.set(`${name};${path}`, { name, value, path, attributes: '' })
  }
}

async function get (url: string, jar?: Jar): Promise<Response> {
  const cookie = jar?.header(url)
  const response = await fetch(url, { redirect: 'manual', headers: cookie === undefined || cookie === '' ? {} : { cookie } })
  jar?.take(response)
  return response
}

async function listening (app: FastifyInstance): Promise<string> {
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

interface Flow { jar: Jar, start: Response, authorize: URL, callback: string }

/**
 * Start (app) -> authorize (provider) -> the callback URL the provider sends the browser to (not yet
 * visited). The provider sends it to appUrl's origin; here that origin is the app on loopback (as a
 * reverse proxy in front of it would be).
 */
async function startFlow (base: string, providerName: string, query = '', jar = new Jar(), appUrl = APP_URL): Promise<Flow> {
  const start = await get(`${base}/api/v1/table/users/auth/oauth/${providerName}${query}`, jar)
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${await start.text()}`)
  const authorize = new URL(start.headers.get('location')!)
  const back = await get(authorize.href)
  const callback = back.headers.get('location')!
  if (!callback.startsWith(`${appUrl}/`)) throw new Error(`the provider was sent to ${callback}, not to appUrl`)
  return { jar, start, authorize, callback: base + callback.slice(appUrl.length) }
}

const location = (r: Response): URL => new URL(r.headers.get('location')!)

forEachDialect(t, 'oauth redirect flow', async (t, dialect) => {
  const p = await provider(t)
  const app = await buildApp(t, configWith(p), { dialect })
  const base = await listening(app)
  const reset = () => { p.idClaims = { email: 'ada@example.com', email_verified: true, name: 'Ada' }; p.userinfo = {} }
  reset()

  t.test('the whole flow: start, provider, callback, cookie', async (t) => {
    const sources: unknown[] = []
    t.teardown(app.fastbase.hooks.on('users', 'beforeInsert', (event) => { sources.push(event.source) }))
    const flow = await startFlow(base, 'google', '?redirect=/dashboard')
    const { authorize, jar } = flow
    t.equal(`${authorize.origin}${authorize.pathname}`, `${p.issuer}/authorize`)
    const q = authorize.searchParams
    t.equal(q.get('response_type'), 'code')
    t.equal(q.get('client_id'), CLIENT_ID)
    t.equal(q.get('redirect_uri'), `${APP_URL}/api/v1/table/users/auth/oauth/google/callback`, 'built from appUrl')
    t.equal(q.get('code_challenge_method'), 'S256')
    t.match(q.get('code_challenge'), /^[\w-]{43}$/)
    t.equal(q.get('scope'), 'openid email profile')
    t.ok(q.get('nonce'))
    t.match(q.get('state'), /^v1\./)
    const stateCookie = [...jar.cookies.values()].find((c) => c.name === STATE)!
    t.ok(stateCookie, 'state cookie set, __Host- prefixed (appUrl is https)')
    t.equal(stateCookie.path, '/', '__Host- cookies are for / only')
    t.match(stateCookie.attributes, /; Secure/)
    t.notMatch(stateCookie.attributes, /Domain=/i)
    t.match(stateCookie.attributes, /HttpOnly/)
    t.match(stateCookie.attributes, /SameSite=Lax/)
    t.match(stateCookie.attributes, /Max-Age=600/)
    t.notOk(q.get('state')!.includes(stateCookie.value), 'the nonce is not in the state')
    t.equal(flow.start.headers.get('cache-control'), 'no-store')
    t.equal(flow.start.headers.get('referrer-policy'), 'no-referrer')

    const done = await get(flow.callback, jar)
    t.equal(done.status, 302, await done.clone().text())
    t.equal(done.headers.get('location'), `${APP_URL}/dashboard`)
    t.equal(jar.get(STATE), undefined, 'state cookie cleared')
    const auth = [...jar.cookies.values()].find((c) => c.name === '__Host-acme_auth')!
    t.ok(auth, 'auth cookie set')
    t.match(auth.attributes, /HttpOnly/)
    t.match(auth.attributes, /SameSite=Lax/)
    const mine = await get(`${base}/api/v1/table/users/list`, jar)
    t.equal(mine.status, 200)
    const list = await mine.json() as { items: Array<Record<string, unknown>> }
    t.match(list.items, [{ email: 'ada@example.com', name: 'Ada', email_verified: true }], 'the cookie authenticates the new user')

    // The same provider account again: the same user.
    const again = await startFlow(base, 'google')
    const second = await get(again.callback, again.jar)
    t.equal(second.headers.get('location'), `${APP_URL}/`, 'default redirect: appUrl')
    const list2 = await (await get(`${base}/api/v1/table/users/list`, again.jar)).json() as { items: Array<Record<string, unknown>> }
    t.equal(list2.items[0].id, list.items[0].id, 'same user on the second sign-in')
    t.same(sources, ['auth:oauth'], 'the account it created met the beforeInsert hook once, told it is an OAuth sign-in')
  })

  t.test('refusals', async (t) => {
    reset()
    // Replay: the same callback with the same cookie, after it succeeded.
    const flow = await startFlow(base, 'google')
    const nonce = flow.jar.get(STATE)!
    t.equal((await get(flow.callback, flow.jar)).status, 302)
    const replayJar = new Jar()
    replayJar.set(STATE, nonce, '/')
    const replay = await get(flow.callback, replayJar)
    t.equal(replay.status, 400)
    t.same(await replay.json(), { code: 400, message: 'OAuth state already used, sign in again', data: {} })

    // Tampered state: another redirect in the payload, same signature.
    const f2 = await startFlow(base, 'google')
    const url = new URL(f2.callback)
    const [v, payload, mac] = url.searchParams.get('state')!.split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    claims.redirect = 'https://evil.example/'
    url.searchParams.set('state', `${v}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`)
    const tampered = await get(url.href, f2.jar)
    t.same(await tampered.json(), { code: 400, message: 'Invalid OAuth state', data: {} })
    t.equal(tampered.headers.get('location'), null)

    // Missing state cookie; missing state.
    const f3 = await startFlow(base, 'google')
    const noCookie = await get(f3.callback)
    t.equal(noCookie.status, 403)
    t.match(await noCookie.json(), { code: 403, message: /does not belong to this browser/ })
    const noState = new URL(f3.callback)
    noState.searchParams.delete('state')
    t.same(await (await get(noState.href, f3.jar)).json(), { code: 400, message: 'Missing OAuth state', data: {} })
    // The flow still works after those refusals (they did not use the state up).
    t.equal((await get(f3.callback, f3.jar)).status, 302, 'a refused attempt does not use the state')

    // The cookie of another flow (another sign-in in the same or another browser).
    const a = await startFlow(base, 'google')
    const b = await startFlow(base, 'google')
    const crossed = await get(a.callback, b.jar)
    t.equal(crossed.status, 403)

    // A state of one provider at another's callback.
    const g = await startFlow(base, 'google')
    const other = new URL(g.callback.replace('/oauth/google/', '/oauth/plain/'))
    const jar = new Jar()
    jar.set(STATE, g.jar.get(STATE)!, '/')
    t.same(await (await get(other.href, jar)).json(), { code: 400, message: 'Invalid OAuth state', data: {} })

    // The provider's error=: back to the app with the error.
    const denied = await startFlow(base, 'google', '?redirect=/after')
    const deniedUrl = new URL(denied.callback)
    deniedUrl.searchParams.delete('code')
    deniedUrl.searchParams.set('error', 'access_denied')
    deniedUrl.searchParams.set('error_description', 'The user said no')
    const refused = await get(deniedUrl.href, denied.jar)
    t.equal(refused.status, 302)
    const back = location(refused)
    t.equal(`${back.origin}${back.pathname}`, `${APP_URL}/after`)
    t.equal(back.searchParams.get('error'), 'access_denied')
    t.match(back.searchParams.get('error_description'), /The user said no/)
    t.equal([...denied.jar.cookies.values()].find((c) => c.name === '__Host-acme_auth'), undefined, 'no auth cookie')

    // ID tokens that must not sign anyone in.
    const idTokenRefused = async (what: string, change: () => Promise<void> | void): Promise<void> => {
      reset()
      await change()
      const f = await startFlow(base, 'google')
      const r = await get(f.callback, f.jar)
      t.equal(r.status, 302, what)
      t.equal(location(r).searchParams.get('error'), 'login_failed', what)
      t.equal(location(r).searchParams.get('error_description'), 'Invalid ID token', what)
      t.equal([...f.jar.cookies.values()].find((c) => c.name === '__Host-acme_auth'), undefined, `${what}: no auth cookie`)
      reset()
    }
    await idTokenRefused('wrong audience', () => { p.idClaims.aud = 'someone-else' })
    const past = Math.floor(Date.now() / 1000) - 3600
    await idTokenRefused('expired ID token', () => { p.idClaims.exp = past; p.idClaims.iat = past - 600 })
    await idTokenRefused('another issuer', () => { p.idClaims.iss = 'https://evil.example' })
    await idTokenRefused('wrong nonce', () => { p.idClaims.nonce = 'not-the-flow-nonce' })
    await idTokenRefused('bad signature', async () => {
      // Signed by another key under the provider's key id.
      const { privateKey } = await generateKeyPair('RS256')
      const kid = p.server.issuer.keys.get()!.kid
      const now = Math.floor(Date.now() / 1000)
      p.forgedIdToken = await new SignJWT({ sub: 'johndoe', email: 'ada@example.com', email_verified: true })
        .setProtectedHeader({ alg: 'RS256', kid }).setIssuer(p.issuer).setAudience(CLIENT_ID).setIssuedAt(now).setExpirationTime(now + 600).sign(privateKey)
    })

    // An authorization response naming another issuer (RFC 9207), and a code the provider does not know.
    const mixUp = await startFlow(base, 'google')
    const mixUrl = new URL(mixUp.callback)
    mixUrl.searchParams.set('iss', 'https://evil.example')
    const mixed = await get(mixUrl.href, mixUp.jar)
    t.equal(location(mixed).searchParams.get('error_description'), 'The response comes from another issuer')
    const badCode = await startFlow(base, 'google')
    const badUrl = new URL(badCode.callback)
    badUrl.searchParams.set('code', 'not-a-code')
    const exchanged = await get(badUrl.href, badCode.jar)
    t.equal(exchanged.status, 302)
    t.match(location(exchanged).searchParams.get('error_description'), /^Token exchange failed/)

    // Unknown provider, and one configured for one-tap only.
    for (const name of ['nope', 'onetap']) {
      const unknown = await get(`${base}/api/v1/table/users/auth/oauth/${name}`)
      t.equal(unknown.status, 404)
      t.same(await unknown.json(), { code: 404, message: `OAuth provider not found - ${name}`, data: {} })
    }
    const unknownCallback = await get(`${base}/api/v1/table/users/auth/oauth/nope/callback?code=x&state=y`)
    t.equal(unknownCallback.status, 404)
  })

  t.test('redirect tricks are refused at the start', async (t) => {
    const tricks = ['//evil.example', 'https://app.example.com.evil', 'https://app.example.com@evil', '/\\evil.example', 'https:\\\\evil.example',
      'javascript:alert(1)', 'https://app.example.com%2f@evil', 'https://evil.example/https://app.example.com', 'http://app.example.com/',
      'https://admin.example.com:8443/panelx', 'https://admin.example.com/panel', '%2f%2fevil.example', 'https://app.example.com/%2f%2fevil']
    for (const trick of tricks) {
      const r = await get(`${base}/api/v1/table/users/auth/oauth/google?redirect=${encodeURIComponent(trick)}`)
      t.equal(r.status, 400, trick)
      t.match(await r.json(), { code: 400, message: /Redirect URL not allowed/ }, trick)
      t.equal(r.headers.getSetCookie().length, 0, `${trick}: no state cookie`)
    }
    const ok = await startFlow(base, 'google', `?redirect=${encodeURIComponent('https://admin.example.com:8443/panel/users?x=1')}`)
    const done = await get(ok.callback, ok.jar)
    t.equal(done.headers.get('location'), 'https://admin.example.com:8443/panel/users?x=1', 'an allowedRedirectUrls entry')
  })

  t.test('a custom provider by discovery, and a plain OAuth 2 provider by userinfo', async (t) => {
    reset()
    p.idClaims = { email: 'disco@example.com', email_verified: true, sub: 'disco-user' }
    const disco = await startFlow(base, 'disco')
    t.equal(new URL(disco.authorize).origin, new URL(p.issuer).origin)
    t.equal((await get(disco.callback, disco.jar)).status, 302)
    const mine = await (await get(`${base}/api/v1/table/users/list`, disco.jar)).json() as { items: Array<Record<string, unknown>> }
    t.match(mine.items, [{ email: 'disco@example.com' }])

    reset()
    p.userinfo = { sub: 'plain-42', email: 'plain@example.com', email_verified: true, name: 'Plain' }
    const plain = await startFlow(base, 'plain')
    t.equal(plain.authorize.searchParams.get('nonce'), null, 'no nonce for a provider without ID tokens')
    t.equal((await get(plain.callback, plain.jar)).status, 302)
    const me = await (await get(`${base}/api/v1/table/users/list`, plain.jar)).json() as { items: Array<Record<string, unknown>> }
    t.match(me.items, [{ email: 'plain@example.com', name: 'Plain' }])
  })

  t.test('find-or-create by verified email', async (t) => {
    const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'grace', email: 'grace@example.com', password: 'correct horse', passwordConfirm: 'correct horse', name: 'Grace' } })
    t.equal(signUp.statusCode, 200)
    const id = signUp.json().record.id
    // Unverified by the provider: the existing account is not taken over.
    p.idClaims = { sub: 'grace-google', email: 'grace@example.com', email_verified: false }
    const unverified = await startFlow(base, 'google')
    const refused = await get(unverified.callback, unverified.jar)
    t.equal(location(refused).searchParams.get('error'), 'login_failed')
    t.equal(location(refused).searchParams.get('error_description'), 'Email not verified')
    t.equal([...unverified.jar.cookies.values()].find((c) => c.name === '__Host-acme_auth'), undefined)
    // Verified: the same user.
    p.idClaims = { sub: 'grace-google', email: 'Grace@example.com', email_verified: true }
    const verified = await startFlow(base, 'google')
    t.equal((await get(verified.callback, verified.jar)).status, 302)
    const me = await (await get(`${base}/api/v1/table/users/list`, verified.jar)).json() as { items: Array<Record<string, unknown>> }
    t.match(me.items, [{ id, username: 'grace', email: 'grace@example.com', email_verified: true }], 'the signed-up user, now verified')
    // Nobody had proven the address: whoever signed up with it (an attacker, say) holds nothing now.
    const view = async (token: string) => (await app.inject({ method: 'GET', url: `/api/v1/table/users/view/${id as string}`, headers: { authorization: `Bearer ${token}` } })).statusCode
    t.equal(await view(signUp.json().token), 401, 'the sign-up\'s access token is dead')
    const refresh = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/refresh-token', payload: { refresh_token: signUp.json().refresh_token } })
    t.equal(refresh.statusCode, 401, 'and its refresh token')
    const password = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { identity: 'grace@example.com', password: 'correct horse' } })
    t.same(password.json(), { code: 400, message: 'Invalid username or password', data: {} }, 'and the password')
    // The linked identity signs in again without ending the session it opened.
    const again = await startFlow(base, 'google')
    t.equal((await get(again.callback, again.jar)).status, 302)
    t.equal((await get(`${base}/api/v1/table/users/list`, verified.jar)).status, 200, 'the first Google session still works')
    reset()
  })

  t.test('a state cookie planted by a same-site page does not finish the attacker\'s sign-in', async (t) => {
    p.idClaims = { sub: 'mallory', email: 'mallory@example.com', email_verified: true }
    // The attacker starts a flow in their own browser, signs in at the provider, and stops at the
    // callback URL; a page on a sibling subdomain then plants the attacker's nonce in the victim's
    // browser (any cookie without the __Host- prefix, Domain=example.com, any path) and sends the
    // victim to that callback URL.
    const attacker = await startFlow(base, 'google')
    const nonce = attacker.jar.get(STATE)!
    const victim = new Jar()
    victim.set('fastbase_oauth_state', nonce, '/api/v1/table/users/auth/oauth/google/callback')
    victim.set('fastbase_oauth_state', nonce, '/')
    const planted = await get(attacker.callback, victim)
    t.equal(planted.status, 403, 'refused: the planted cookie is not the __Host- one')
    t.equal(victim.get('acme_auth'), undefined, 'the victim is not signed in as the attacker')
    t.equal((await get(attacker.callback, attacker.jar)).status, 302, 'the attacker\'s own browser still finishes (the refusal used nothing up)')
    reset()
  })

  t.test('the redirect_uri comes from appUrl, whatever Host the request names', async (t) => {
    for (const headers of [{ host: 'evil.example' }, { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }]) {
      const start = await app.inject({ method: 'GET', url: '/api/v1/table/users/auth/oauth/google', headers })
      t.equal(start.statusCode, 302)
      const authorize = new URL(start.headers.location as string)
      t.equal(authorize.searchParams.get('redirect_uri'), `${APP_URL}/api/v1/table/users/auth/oauth/google/callback`, headers.host)
    }
  })

  t.test('used states are purged after their expiry', async (t) => {
    const used = await app.fastbase.db(OAUTH_STATES).count({ n: '*' }).first()
    t.ok(Number(used?.n) > 0, 'used states recorded')
    await app.fastbase.db(OAUTH_STATES).update({ expires_at: Math.floor(Date.now() / 1000) - KEEP_EXPIRED_FOR - 1 })
    const purged = await purgeExpired(app.fastbase.db)
    t.equal(purged[OAUTH_STATES], Number(used?.n))
  })
})

forEachDialect(t, 'oauth without authCookie answers the session as JSON', async (t, dialect) => {
  const p = await provider(t)
  p.idClaims = { email: 'json@example.com', email_verified: true }
  const app = await buildApp(t, configWith(p, { authCookie: undefined }), { dialect })
  const base = await listening(app)
  const flow = await startFlow(base, 'google')
  const done = await get(flow.callback, flow.jar)
  t.equal(done.status, 200)
  const session = await done.json() as { token: string, refresh_token: string, record: Record<string, unknown> }
  t.match(session, { token: String, refresh_token: String, record: { email: 'json@example.com' } })
  const me = await app.inject({ method: 'GET', url: '/api/v1/table/users/list', headers: { authorization: `Bearer ${session.token}` } })
  t.match(me.json().items, [{ email: 'json@example.com' }])
  // Refusals after the state are the standard error body here.
  p.idClaims = { aud: 'someone-else' }
  const bad = await startFlow(base, 'google')
  const refused = await get(bad.callback, bad.jar)
  t.equal(refused.status, 401)
  t.same(await refused.json(), { code: 401, message: 'Invalid ID token', data: {} })
})

/** A config of configWith's with TOTP on for its users table. */
function withTotp (config: DatabaseSettings): DatabaseSettings {
  return { ...config, tables: config.tables.map((table) => ({ ...table, extensions: table.extensions?.map((e) => e.name === 'auth' ? { ...e, totp: { issuer: 'Acme' } } : e) })) }
}

forEachDialect(t, 'oauth with a second factor: a challenge, never a session, before the code', async (t, dialect) => {
  const p = await provider(t)
  const post = async (app: FastifyInstance, url: string, payload: object, token?: string) => {
    const reply = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return { status: reply.statusCode, code: reply.headers['fastbase-error-code'], body: reply.json() }
  }
  /** TOTP on for the user a session token belongs to; answers the secret. */
  const enrol = async (app: FastifyInstance, token: string): Promise<string> => {
    const { secret } = (await post(app, '/table/users/auth/mfa/totp/enroll', {}, token)).body
    t.equal((await post(app, '/table/users/auth/mfa/totp/confirm', { code: totpNow(secret) }, token)).status, 200)
    return secret
  }
  const as = (sub: string) => { p.idClaims = { sub, email: `${sub}@example.com`, email_verified: true, name: sub } }

  t.test('with authCookie: the callback redirects with the challenge and sets no cookie', async (t) => {
    const app = await buildApp(t, withTotp(configWith(p)), { dialect })
    const base = await listening(app)
    // Signed in once through the flow (no factor yet: a cookie, which holds the session's token), then enrolled.
    const secrets: Record<string, string> = {}
    for (const sub of ['ann', 'ben']) {
      as(sub)
      const first = await startFlow(base, 'google')
      t.equal((await get(first.callback, first.jar)).status, 302)
      secrets[sub] = await enrol(app, first.jar.get('__Host-acme_auth')!)
    }

    as('ann')
    const flow = await startFlow(base, 'google', '?redirect=/dashboard')
    const back = await get(flow.callback, flow.jar)
    t.equal(back.status, 302)
    const target = location(back)
    t.equal(`${target.origin}${target.pathname}`, `${APP_URL}/dashboard`, 'to the flow\'s redirect')
    const challenge = target.searchParams.get('mfa_challenge')!
    t.match(challenge, /\S{20,}/, 'with the challenge')
    t.same([...target.searchParams.keys()], ['mfa_challenge'], 'and nothing else: no token in the address')
    t.notOk(back.headers.getSetCookie().some((c) => c.includes('acme_auth')), 'no auth cookie set')
    t.equal(flow.jar.get('__Host-acme_auth'), undefined)
    const listed = await get(`${base}/api/v1/table/users/list`, flow.jar)
    t.same([listed.status, (await listed.json() as { items: unknown[] }).items], [200, []], 'the browser is not signed in')

    const stolen = await post(app, '/table/users/auth/mfa/verify', { challenge, code: totpNow(secrets.ben, 1) })
    t.same([stolen.status, stolen.code], [400, 'FB_ERR_MFA_INVALID'], 'another account\'s current code does not complete it')
    const done = await post(app, '/table/users/auth/mfa/verify', { challenge, code: totpNow(secrets.ann, 1) })
    t.equal(done.status, 200, JSON.stringify(done.body))
    t.match(done.body, { aal: 2, token: String, refresh_token: String, record: { email: 'ann@example.com' } }, 'ann\'s own code does')
    t.equal((await post(app, '/table/users/auth/mfa/verify', { challenge, code: totpNow(secrets.ann, 1) })).code, 'FB_ERR_MFA_INVALID', 'once')
  })

  t.test('without authCookie: the callback answers the challenge as JSON', async (t) => {
    const app = await buildApp(t, withTotp(configWith(p, { authCookie: undefined })), { dialect })
    const base = await listening(app)
    as('cid')
    const first = await startFlow(base, 'google')
    const session = await (await get(first.callback, first.jar)).json() as { token: string, aal: number }
    t.equal(session.aal, 1, 'not enrolled: a session')
    const secret = await enrol(app, session.token)
    const flow = await startFlow(base, 'google')
    const back = await get(flow.callback, flow.jar)
    t.equal(back.status, 200)
    const body = await back.json() as Record<string, unknown>
    t.match(body, { mfa_required: true, challenge: String, methods: ['totp', 'recovery_code'] })
    t.notOk('token' in body || 'refresh_token' in body, 'no session before the code')
    const done = await post(app, '/table/users/auth/mfa/verify', { challenge: String(body.challenge), code: totpNow(secret, 1) })
    t.match(done.body, { aal: 2, record: { email: 'cid@example.com' } })
  })
})

forEachDialect(t, 'oauth across two instances on one database', async (t, dialect: DialectName) => {
  const p = await provider(t)
  p.idClaims = { email: 'fleet@example.com', email_verified: true }
  const databaseUrl = sharedDatabase(t, dialect)
  const one = await buildApp(t, configWith(p), { dialect, databaseUrl })
  const two = await buildApp(t, configWith(p), { dialect, databaseUrl })
  const [baseOne, baseTwo] = [await listening(one), await listening(two)]
  // Started on instance one; the provider sends the browser back to instance two (a load balancer).
  const flow = await startFlow(baseOne, 'google')
  const onTwo = flow.callback.replace(baseOne, baseTwo)
  const nonce = flow.jar.get(STATE)!
  const done = await get(onTwo, flow.jar)
  t.equal(done.status, 302)
  t.equal(done.headers.get('location'), `${APP_URL}/`)
  t.ok(flow.jar.get('__Host-acme_auth'))
  // Replayed to instance one: already used there too.
  const jar = new Jar()
  jar.set(STATE, nonce, '/')
  const replay = await get(flow.callback, jar)
  t.equal(replay.status, 400)
  t.same(await replay.json(), { code: 400, message: 'OAuth state already used, sign in again', data: {} })
})

t.test('GitHub and Discord presets read the user from their APIs', async (t) => {
  const p = await provider(t)
  // Their APIs on loopback: the presets' endpoints overridden (as for GitHub Enterprise).
  const seen: string[] = []
  let emails: unknown[] = [{ email: 'octo@old.example', primary: false, verified: true }, { email: 'octo@example.com', primary: true, verified: true }]
  const api = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization?.slice(0, 6)} ${req.headers['user-agent']}`)
    const body = req.url === '/gh/user'
      ? { id: 583231, login: 'octocat', name: 'The Octocat', avatar_url: 'https://avatars.example/u/583231' }
      : req.url === '/gh/user/emails'
        ? emails
        : req.url === '/discord/users/@me' ? { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'nelly@example.com', verified: true, avatar: '8342729096ea3675442027381ff50dfe' } : null
    res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => api.close(() => resolve())))
  const apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
  const endpoints = { authorizeUrl: `${p.issuer}/authorize`, tokenUrl: `${p.issuer}/token` }
  const app = await buildApp(t, configWith(p, {
    authCookie: undefined,
    authProviders: [
      { name: 'github', clientId: CLIENT_ID, clientSecret: 'shh', ...endpoints, userinfoUrl: `${apiBase}/gh/user` },
      { name: 'discord', clientId: CLIENT_ID, clientSecret: 'shh', ...endpoints, userinfoUrl: `${apiBase}/discord/users/@me` }
    ]
  }))
  const base = await listening(app)
  const gh = await startFlow(base, 'github')
  t.equal(gh.authorize.searchParams.get('scope'), 'read:user user:email')
  t.equal(gh.authorize.searchParams.get('nonce'), null)
  const session = await (await get(gh.callback, gh.jar)).json() as { record: Record<string, unknown> }
  t.match(session.record, { email: 'octo@example.com', email_verified: true, name: 'The Octocat' }, 'the primary verified address')
  t.match(seen, [/^\/gh\/user Bearer fastbase$/, /^\/gh\/user\/emails Bearer fastbase$/])
  const link = await app.fastbase.db('_fastbase_identities').where({ provider: 'github' }).first()
  t.equal(link.subject, '583231', 'GitHub\'s numeric id as text')

  // No verified address: refused, nothing created.
  emails = [{ email: 'octo2@example.com', primary: true, verified: false }]
  await app.fastbase.db('_fastbase_identities').del()
  await app.fastbase.db('users').del()
  const gh2 = await startFlow(base, 'github')
  const unverified = await get(gh2.callback, gh2.jar)
  t.equal(unverified.status, 400)
  t.same(await unverified.json(), { code: 400, message: 'Email not verified', data: {} })
  t.equal((await app.fastbase.db('users').count({ n: '*' }).first())?.n, 0, 'no account created')

  const dc = await startFlow(base, 'discord')
  t.equal(dc.authorize.searchParams.get('scope'), 'identify email')
  const nelly = await (await get(dc.callback, dc.jar)).json() as { record: Record<string, unknown> }
  t.match(nelly.record, { email: 'nelly@example.com', email_verified: true, name: 'Nelly' })
})

t.test('discovery failures are the provider\'s (502)', async (t) => {
  const p = await provider(t)
  const dead = createServer()
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`
  await new Promise<void>((resolve) => dead.close(() => resolve()))
  const app = await buildApp(t, configWith(p, {
    authProviders: [
      { name: 'gone', clientId: CLIENT_ID, clientSecret: 'shh', issuer: deadUrl },
      // The document names the issuer without the trailing slash: not the issuer configured.
      { name: 'other', clientId: CLIENT_ID, clientSecret: 'shh', issuer: `${p.issuer}/` }
    ]
  }))
  for (const name of ['gone', 'other']) {
    const r = await app.inject({ method: 'GET', url: `/api/v1/table/users/auth/oauth/${name}` })
    t.equal(r.statusCode, 502, name)
    t.match(r.json(), { code: 502, message: /identity provider did not answer/ }, name)
  }
})

t.test('rate limited like the other auth routes', async (t) => {
  const p = await provider(t)
  const app = await buildApp(t, configWith(p, { rateLimit: { max: 2, timeWindow: 60_000 } }))
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await app.inject({ method: 'GET', url: '/api/v1/table/users/auth/oauth/google' })).statusCode)
  t.same(codes, [302, 302, 429])
  const callback = await app.inject({ method: 'GET', url: '/api/v1/table/users/auth/oauth/google/callback' })
  t.equal(callback.statusCode, 400, 'the callback has its own counter')
})

t.test('a config whose redirect-flow provider lacks its client id does not start', async (t) => {
  const p = await provider(t)
  const config = configWith(p, { authProviders: [{ name: 'github', clientSecret: 'x' }] })
  await t.rejects(buildApp(t, config), /authProviders\[0\]\.clientId: is required for the OAuth redirect flow/)
})

t.test('OpenAPI document lists the flow', async (t) => {
  const p = await provider(t)
  const app = await buildApp(t, configWith(p))
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/doc' })).json()
  const start = doc.paths['/api/v1/table/users/auth/oauth/{provider}']?.get
  const callback = doc.paths['/api/v1/table/users/auth/oauth/{provider}/callback']?.get
  t.ok(start?.summary)
  t.ok(callback?.summary)
  t.same(start.tags, ['users auth'])
  t.ok(callback.responses['200'] && callback.responses['302'] && start.responses['302'])
})

forEachDialect(t, 'oauth under a plain http appUrl (local development)', async (t, dialect) => {
  const p = await provider(t)
  p.idClaims = { email: 'dev@example.com', email_verified: true }
  const appUrl = 'http://localhost:3000'
  const app = await buildApp(t, configWith(p, { appUrl, allowedRedirectUrls: [] }), { dialect })
  const base = await listening(app)
  const flow = await startFlow(base, 'google', '', new Jar(), appUrl)
  t.equal(flow.authorize.searchParams.get('redirect_uri'), `${appUrl}/api/v1/table/users/auth/oauth/google/callback`)
  // No __Host- prefix without https: the plain cookie, scoped to the callback's path.
  const state = [...flow.jar.cookies.values()].find((c) => c.name === 'fastbase_oauth_state')!
  t.ok(state, 'the plain state cookie')
  t.equal(state.path, '/api/v1/table/users/auth/oauth/google/callback')
  t.notMatch(state.attributes, /Secure/)
  const done = await get(flow.callback, flow.jar)
  t.equal(done.status, 302)
  t.equal(done.headers.get('location'), `${appUrl}/`)
  t.equal(flow.jar.get('fastbase_oauth_state'), undefined, 'cleared')
})

t.test('the redirect flow needs a usable appUrl', async (t) => {
  const github = { name: 'github', clientId: 'a', clientSecret: 'x' }
  for (const appUrl of ['localhost:3000', 'ftp://files.example', 'https://user:pw@app.example']) {
    t.match(checkAppUrl({ appUrl, authProviders: [github] } as any), [/^appUrl: must .* \(email links, OAuth callbacks and the origin cookie-authenticated writes come from are built from it\)$/], appUrl)
  }
  const p = await provider(t)
  await t.rejects(buildApp(t, configWith(p, { appUrl: 'app.example.com' })), /appUrl: must be an absolute http\(s\) URL \(email links, OAuth callbacks/)
})

t.test('start-up checks of providers for the redirect flow', async (t) => {
  const problems = oauthConfigProblems({
    appUrl: APP_URL,
    allowedRedirectUrls: ['app.example.com', 'https://ok.example/x?q=1'],
    authProviders: [
      { name: 'google', clientSecret: 'x' },
      { clientId: 'a', clientSecret: 'x' },
      { name: 'custom', clientId: 'a', clientSecret: 'x' },
      { name: 'custom2', clientId: 'a', clientSecret: 'x', authorizeUrl: 'https://c.example/a', tokenUrl: 'https://c.example/t' },
      { name: 'github', clientId: 'a', clientSecret: 'x', redirectUrl: 'https://evil.example/' },
      { name: 'custom3', clientId: 'a', clientSecret: 'x', issuer: 'not a url' },
      { name: 'google', clientId: 'one-tap-only' },
      { name: 'discord', clientId: 'a', clientSecret: 'x', redirectUrl: '/welcome' }
    ]
  })
  t.same(problems, [
    'allowedRedirectUrls[0]: must be an absolute http(s) URL',
    'allowedRedirectUrls[1]: must not carry a query or fragment',
    'authProviders[0].clientId: is required for the OAuth redirect flow (clientSecret is set)',
    'authProviders[1].name: is required for the OAuth redirect flow (clientSecret is set)',
    'authProviders[2]: custom provider "custom" needs authorizeUrl and tokenUrl, or issuer (its OpenID discovery document gives them)',
    'authProviders[3]: custom provider "custom2" needs userinfoUrl, or jwksUrl and issuer to verify its ID tokens',
    'authProviders[4].redirectUrl: must be under appUrl or an allowedRedirectUrls entry (same scheme, host and port; path prefix)',
    'authProviders[5].issuer: must be an absolute http(s) URL'
  ])
  // The presets' real endpoints (never called in tests).
  t.match(OAUTH_PRESETS.google, { authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth', tokenUrl: 'https://oauth2.googleapis.com/token', jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs', issuers: ['https://accounts.google.com', 'accounts.google.com'], source: 'id_token' })
  t.match(OAUTH_PRESETS.github, { authorizeUrl: 'https://github.com/login/oauth/authorize', tokenUrl: 'https://github.com/login/oauth/access_token', userinfoUrl: 'https://api.github.com/user', source: 'github' })
  t.match(OAUTH_PRESETS.discord, { authorizeUrl: 'https://discord.com/oauth2/authorize', tokenUrl: 'https://discord.com/api/oauth2/token', userinfoUrl: 'https://discord.com/api/users/@me', scopes: ['identify', 'email'] })
  t.match(OAUTH_PRESETS.linkedin, { authorizeUrl: 'https://www.linkedin.com/oauth/v2/authorization', tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken', jwksUrl: 'https://www.linkedin.com/oauth/openid/jwks', scopes: ['openid', 'profile', 'email'] })
  for (const preset of Object.values(OAUTH_PRESETS)) {
    for (const url of [preset.authorizeUrl, preset.tokenUrl, preset.userinfoUrl, preset.jwksUrl]) if (url !== undefined) t.match(url, /^https:\/\/[a-z0-9.]+\//)
  }
})
