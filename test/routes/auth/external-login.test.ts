// External sign-ins on both dialects: one-tap (`<provider>-login`, form with Google's double-submit
// CSRF cookie, or JSON) and `login-token` (an external JWT as bearer). Keys are real: a JWKS served on
// loopback, RS256 tokens signed with its private key, HS256 tokens with a configured secret. Only
// 127.0.0.1 is ever contacted.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, UnsecuredJWT, exportJWK, exportSPKI, generateKeyPair, type JWK } from 'jose'
import { buildApp, forEachDialect } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ID_TOKEN_PRESETS } from '../../../lib/auth/oauth/id-tokens.js'

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>

/** A JWKS (one RS256 key, kid `k1`) on loopback; `hits()` counts fetches. */
async function jwksServer (t: Test): Promise<{ url: string, keys: KeyPair, hits: () => number }> {
  const keys = await generateKeyPair('RS256', { extractable: true })
  const jwk: JWK = { ...await exportJWK(keys.publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  let hits = 0
  const server: Server = createServer((_request, response) => {
    hits++
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs`, keys, hits: () => hits }
}

const GOOGLE_CLIENT = 'fastbase-test.apps.googleusercontent.com'
const APP_ORIGIN = 'https://app.example.com'
const ACME_ISSUER = 'https://id.acme.test'
const HS_ISSUER = 'https://hs.partner.test'
const HS_SECRET = 'partner-shared-secret-0123456789abcdef'
const LEGACY_ISSUER = 'https://legacy.partner.test'
const LEGACY_SECRET = 'legacy-shared-secret-0123456789abcdef'

function configWith (jwksUrl: string, deadJwksUrl: string): DatabaseSettings {
  return {
    jwtSecret: 'global-secret',
    appUrl: APP_ORIGIN,
    rateLimit: false,
    authCookie: { name: 'acme_auth' },
    authProviders: [
      // The preset's issuer, this test's key set instead of Google's.
      { name: 'google', clientId: GOOGLE_CLIENT, jwksUrl },
      // Each client id of a list may come from the environment.
      { name: 'acme', issuer: ACME_ISSUER, clientId: ['acme-web', '$ACME_IOS_CLIENT'], jwksUrl },
      { issuer: HS_ISSUER, secret: HS_SECRET, clientId: 'fastbase-app' },
      { name: 'down', issuer: 'https://down.test', clientId: 'down-app', jwksUrl: deadJwksUrl },
      // A second entry of a name adds its client id to that name's route.
      { name: 'google', clientId: 'second-client.apps.googleusercontent.com', jwksUrl }
    ],
    jwtAllowedIssuers: [{ issuer: LEGACY_ISSUER, secret: LEGACY_SECRET }],
    tables: [{
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600, maxTokenRefresh: 0 },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    }]
  } as DatabaseSettings
}

interface Answer { status: number, body: any, cookies: string[] }

t.test('external sign-ins', async (t) => {
  const jwks = await jwksServer(t)
  // A port nothing listens on: the key set cannot be read.
  const dead = createServer()
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/certs`
  await new Promise<void>((resolve) => dead.close(() => resolve()))
  const otherKeys = await generateKeyPair('RS256', { extractable: true })
  const now = () => Math.floor(Date.now() / 1000)

  /** An RS256 ID token signed with the served key (or `key`). */
  const idToken = async (claims: Record<string, unknown>, opts: { key?: CryptoKey, kid?: string, iss?: string, aud?: string | string[], exp?: number } = {}) =>
    await new SignJWT({ email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? 'k1', typ: 'JWT' })
      .setIssuer(opts.iss ?? 'https://accounts.google.com')
      .setAudience(opts.aud ?? GOOGLE_CLIENT)
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? now() + 600)
      .sign(opts.key ?? jwks.keys.privateKey)
  const hsToken = async (claims: Record<string, unknown>, opts: { secret?: string, iss?: string, aud?: string, exp?: number | null } = {}) => {
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(opts.iss ?? HS_ISSUER).setIssuedAt()
    if (opts.aud !== undefined) jwt.setAudience(opts.aud)
    if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now() + 600)
    return await jwt.sign(new TextEncoder().encode(opts.secret ?? HS_SECRET))
  }

  await forEachDialect(t, 'one-tap and login-token', async (t, dialect) => {
    const app: FastifyInstance = await buildApp(t, configWith(jwks.url, deadUrl), { dialect, env: { ACME_IOS_CLIENT: 'acme-ios' } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1`

    /**
     * Real HTTP: cookies travel as browsers send them. A form is posted from the app's page (its
     * Origin) unless `from` says otherwise (null: no Origin header).
     */
    async function call (path: string, init: { json?: unknown, form?: Record<string, string>, cookie?: string, bearer?: string, from?: string | null, fetchSite?: string }): Promise<Answer> {
      const headers: Record<string, string> = {}
      let body: string | undefined
      if (init.json !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(init.json) }
      if (init.form !== undefined) { headers['content-type'] = 'application/x-www-form-urlencoded'; body = new URLSearchParams(init.form).toString() }
      const from = init.from === undefined ? (init.form === undefined ? undefined : APP_ORIGIN) : init.from
      if (from !== null && from !== undefined) headers.origin = from
      if (init.fetchSite !== undefined) headers['sec-fetch-site'] = init.fetchSite
      if (init.cookie !== undefined) headers.cookie = init.cookie
      if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`
      const response = await fetch(origin + path, { method: 'POST', headers, body })
      return { status: response.status, body: await response.json(), cookies: response.headers.getSetCookie() }
    }
    /** `cookie`: the Cookie header, by default the matching CSRF cookie; null: none. */
    const oneTapForm = async (credential: string, csrf = 'csrf-abc-123', cookie: string | null = `g_csrf_token=${csrf}`) =>
      await call('/table/users/auth/google-login', { form: { credential, g_csrf_token: csrf }, cookie: cookie ?? undefined })
    const loginToken = async (token: string) => await call('/table/users/auth/login-token', { bearer: token })
    /** A session's own record, read with its access token. */
    const viewAs = async (session: { token: string, record: { id: string } }) =>
      await fetch(`${origin}/table/users/view/${session.record.id}`, { headers: { authorization: `Bearer ${session.token}` } })

    await t.test('one-tap form with the matching CSRF cookie: a session and the auth cookie', async (t) => {
      const sources: unknown[] = []
      t.teardown(app.fastbase.hooks.on('users', 'beforeInsert', (event) => { sources.push(event.source) }))
      const res = await oneTapForm(await idToken({ sub: 'g-ada', email: 'ada@example.com', name: 'Ada Lovelace', picture: 'https://img.test/ada.png' }))
      t.equal(res.status, 200, JSON.stringify(res.body))
      t.type(res.body.token, 'string')
      t.type(res.body.refresh_token, 'string')
      t.equal(res.body.record.email, 'ada@example.com')
      t.equal(res.body.verified, true)
      const cookie = res.cookies.find((c) => c.startsWith('__Host-acme_auth='))
      t.ok(cookie, 'the auth cookie is set')
      t.match(cookie, `__Host-acme_auth=${res.body.token as string}`)
      t.match(cookie, /HttpOnly/i)
      t.match(cookie, /Secure/i)
      t.match(cookie, /SameSite=Lax/i)
      t.match(cookie, /Path=\//)
      // The same Google account again: the same user.
      const again = await oneTapForm(await idToken({ sub: 'g-ada', email: 'ada@example.com' }))
      t.equal(again.body.record.id, res.body.record.id)
      t.same(sources, ['auth:one-tap'], 'the account it created met the beforeInsert hook once, told it is a one-tap sign-in')
      // A stale or foreign auth cookie does not stand in the way of signing in.
      const stale = await oneTapForm(await idToken({ sub: 'g-ada', email: 'ada@example.com' }), 'c1', 'g_csrf_token=c1; __Host-acme_auth=not-a-token')
      t.equal(stale.status, 200)
      // Google writes the issuer without the scheme too.
      const bare = await oneTapForm(await idToken({ sub: 'g-ada', email: 'ada@example.com' }, { iss: 'accounts.google.com' }))
      t.equal(bare.status, 200)
      t.equal(bare.body.record.id, res.body.record.id)
    })

    await t.test('one-tap CSRF: the form value must equal the cookie', async (t) => {
      const credential = await idToken({ sub: 'g-csrf', email: 'csrf@example.com' })
      const missingField = await call('/table/users/auth/google-login', { form: { credential }, cookie: 'g_csrf_token=x' })
      t.equal(missingField.status, 400)
      t.same(missingField.body, { code: 400, message: 'g_csrf_token is required', data: {} })
      t.equal((await call('/table/users/auth/google-login', { form: { g_csrf_token: 'x' }, cookie: 'g_csrf_token=x' })).body.message, 'credential is required')
      const noCookie = await oneTapForm(credential, 'x', null)
      t.equal(noCookie.status, 403)
      t.same(noCookie.body, { code: 403, message: 'CSRF token mismatch', data: {} })
      t.equal((await oneTapForm(credential, 'x', 'g_csrf_token=y')).status, 403, 'mismatched')
      t.equal((await oneTapForm(credential, 'x', 'g_csrf_token=')).status, 403, 'empty cookie')
      t.equal((await oneTapForm(credential, 'x', 'other=x')).status, 403, 'another cookie of that value')
      t.equal((await call('/table/users/auth/google-login', { form: { credential, g_csrf_token: '' }, cookie: 'g_csrf_token=' })).status, 400, 'both empty')
      t.equal((await oneTapForm(credential, 'x', 'g_csrf_token=x')).status, 200, 'matching')
    })

    await t.test('one-tap: a g_csrf_token planted by a same-site page signs nobody in', async (t) => {
      // The attacker's own Google account, its ID token taken from the attacker's own browser; a page
      // on a sibling subdomain (or port) plants the matching g_csrf_token and posts the form.
      const credential = await idToken({ sub: 'g-attacker', email: 'attacker@example.com' })
      const planted = 'g_csrf_token=planted'
      const post = async (from: string | null, fetchSite?: string) =>
        await call('/table/users/auth/google-login', { form: { credential, g_csrf_token: 'planted' }, cookie: planted, from, fetchSite })
      for (const [from, fetchSite, what] of [
        ['https://blog.example.com', undefined, 'a sibling subdomain'],
        ['https://app.example.com:8443', undefined, 'another port of the app\'s host'],
        ['null', undefined, 'an opaque origin (sandboxed frame, redirect chain)'],
        [null, 'same-site', 'no Origin, Sec-Fetch-Site: same-site'],
        [null, 'cross-site', 'no Origin, Sec-Fetch-Site: cross-site'],
        [null, undefined, 'a form that says nothing of where it came from']
      ] as Array<[string | null, string | undefined, string]>) {
        const res = await post(from, fetchSite)
        t.equal(res.status, 403, what)
        t.same(res.body, { code: 403, message: 'This sign-in must be posted from the app\'s own pages', data: {} }, what)
        t.notOk(res.cookies.some((c) => c.startsWith('acme_auth=')), `${what}: no auth cookie`)
      }
      const json = await call('/table/users/auth/google-login', { json: { token: credential }, from: 'https://blog.example.com' })
      t.equal(json.status, 403, 'JSON from a sibling page (an embedding app\'s CORS may let it through)')
      // The legitimate posts: the app's page (popup and one-tap), Google's page (redirect mode), a page
      // of this server (Sec-Fetch-Site only), a client that is not a browser (JSON, no Origin).
      t.equal((await post(APP_ORIGIN)).status, 200, 'from appUrl\'s origin')
      t.equal((await post('https://accounts.google.com')).status, 200, 'from the provider (redirect mode)')
      t.equal((await post(null, 'same-origin')).status, 200, 'Sec-Fetch-Site: same-origin')
      t.equal((await call('/table/users/auth/google-login', { json: { token: credential } })).status, 200, 'JSON without Origin')
    })

    await t.test('one-tap JSON { token }: no CSRF cookie needed', async (t) => {
      const res = await call('/table/users/auth/google-login', { json: { token: await idToken({ sub: 'g-json', email: 'json@example.com' }) } })
      t.equal(res.status, 200)
      t.equal(res.body.record.email, 'json@example.com')
      t.ok(res.cookies.some((c) => c.startsWith('__Host-acme_auth=')))
      t.equal((await call('/table/users/auth/google-login', { json: {} })).body.message, 'token is required')
      // A custom provider with several client ids gets its own route.
      const acme = await call('/table/users/auth/acme-login', { json: { token: await idToken({ sub: 'a-1', email: 'acme1@example.com' }, { iss: ACME_ISSUER, aud: 'acme-ios' }) } })
      t.equal(acme.status, 200)
      t.equal((await call('/table/users/auth/down-login', { json: { token: 'x' } })).status, 401, 'a route for every provider with a clientId and a JWKS')
    })

    await t.test('one-tap refuses tokens it must not trust', async (t) => {
      const refused = async (token: string, what: string) => {
        const res = await call('/table/users/auth/google-login', { json: { token } })
        t.equal(res.status, 401, what)
        t.same(res.body, { code: 401, message: 'Invalid or expired token', data: {} }, what)
        t.notMatch(JSON.stringify(res.body), token.slice(-20), 'the token is not echoed')
      }
      const claims = { sub: 'g-bad', email: 'bad@example.com' }
      await refused(await idToken(claims, { aud: 'another-app.apps.googleusercontent.com' }), 'wrong audience')
      t.equal((await call('/table/users/auth/google-login', { json: { token: await idToken(claims, { aud: 'second-client.apps.googleusercontent.com' }) } })).status, 200, 'the second google entry\'s client id')
      await refused(await idToken(claims, { iss: 'https://evil.example' }), 'wrong issuer')
      await refused(await idToken(claims, { iss: ACME_ISSUER, aud: 'acme-web' }), 'another provider\'s token')
      await refused(await idToken(claims, { aud: [GOOGLE_CLIENT, 'another-app'] }), 'several audiences, issued to another party')
      t.equal((await call('/table/users/auth/google-login', { json: { token: await idToken({ ...claims, azp: GOOGLE_CLIENT }, { aud: [GOOGLE_CLIENT, 'another-app'] }) } })).status, 200, 'several audiences, azp = our client')
      await refused(await idToken(claims, { exp: now() - 120 }), 'expired')
      await refused(await idToken(claims, { key: otherKeys.privateKey }), 'bad signature (another key, same kid)')
      await refused(await idToken(claims, { key: otherKeys.privateKey, kid: 'unknown' }), 'unknown kid')
      await refused(new UnsecuredJWT({ ...claims, email_verified: true }).setIssuer('https://accounts.google.com').setAudience(GOOGLE_CLIENT).setExpirationTime('10m').encode(), 'alg none')
      // The classic confusion: HS256 keyed with the provider's public key.
      const pem = await exportSPKI(jwks.keys.publicKey)
      for (const secret of [pem, JSON.stringify(await exportJWK(jwks.keys.publicKey))]) {
        const forged = await new SignJWT({ ...claims, email_verified: true }).setProtectedHeader({ alg: 'HS256', kid: 'k1' })
          .setIssuer('https://accounts.google.com').setAudience(GOOGLE_CLIENT).setExpirationTime('10m').sign(new TextEncoder().encode(secret))
        await refused(forged, 'HS256 signed with the public key')
      }
      await refused(await idToken({ email: 'nosub@example.com' }), 'no sub')
      await refused('not.a.jwt', 'garbage')
      // The provider's key set out of reach is the provider's fault, not the token's.
      const down = await call('/table/users/auth/down-login', { json: { token: await idToken(claims, { iss: 'https://down.test', aud: 'down-app' }) } })
      t.equal(down.status, 502)
      t.equal(down.body.code, 502)
    })

    await t.test('login-token: HS256 secret and JWKS issuers', async (t) => {
      const hs = await loginToken(await hsToken({ sub: 'p-1', email: 'partner@example.com', email_verified: true }, { aud: 'fastbase-app' }))
      t.equal(hs.status, 200, JSON.stringify(hs.body))
      t.equal(hs.body.record.email, 'partner@example.com')
      t.notOk(hs.cookies.some((c) => c.startsWith('__Host-acme_auth=')), 'login-token sets no cookie')
      const rs = await loginToken(await idToken({ sub: 'a-2', email: 'acme2@example.com' }, { iss: ACME_ISSUER, aud: ['acme-web', 'x'] }))
      t.equal(rs.status, 200)
      t.equal(rs.body.record.email, 'acme2@example.com')
      // A Google ID token is trusted here too (the preset issuer, with the configured clientId).
      const google = await loginToken(await idToken({ sub: 'g-ada', email: 'ada@example.com' }))
      t.equal(google.status, 200)
      // jwtAllowedIssuers (deprecated), no clientId: aud is not checked; no email_verified: vouched for.
      const legacy = await loginToken(await hsToken({ sub: 'l-1', email: 'legacy@example.com' }, { iss: LEGACY_ISSUER, secret: LEGACY_SECRET }))
      t.equal(legacy.status, 200)
      t.equal(legacy.body.verified, true)
      // The raw header (no scheme) works as everywhere.
      const raw = await fetch(`${origin}/table/users/auth/login-token`, { method: 'POST', headers: { authorization: await hsToken({ sub: 'p-1' }, { aud: 'fastbase-app' }) } })
      t.equal(raw.status, 200)
    })

    await t.test('login-token refuses what it must not trust', async (t) => {
      const refused = async (token: string, what: string) => {
        const res = await loginToken(token)
        t.equal(res.status, 401, what)
        t.same(res.body, { code: 401, message: 'Invalid or expired token', data: {} }, what)
      }
      const claims = { sub: 'p-2', email: 'p2@example.com' }
      await refused(await hsToken(claims, { iss: 'https://unknown.test', aud: 'fastbase-app' }), 'unknown issuer')
      await refused(await hsToken(claims, { aud: 'fastbase-app', exp: null }), 'no exp')
      await refused(await hsToken(claims, { aud: 'another-app' }), 'wrong aud')
      await refused(await hsToken(claims), 'no aud while a clientId is configured')
      await refused(await hsToken(claims, { aud: 'fastbase-app', exp: now() - 120 }), 'expired')
      await refused(await hsToken(claims, { aud: 'fastbase-app', secret: 'wrong-secret-0123456789abcdef0123' }), 'bad signature')
      await refused(await hsToken(claims, { aud: 'fastbase-app', iss: LEGACY_ISSUER }), 'one issuer\'s token signed with another\'s secret')
      await refused(await idToken(claims, { iss: HS_ISSUER, aud: 'fastbase-app' }), 'RS256 for an HS256 issuer')
      await refused(new UnsecuredJWT(claims).setIssuer(HS_ISSUER).setAudience('fastbase-app').setExpirationTime('10m').encode(), 'alg none')
      await refused(await hsToken({ email: 'p2@example.com' }, { aud: 'fastbase-app' }), 'no sub')
      // This app's own tokens are not external ones.
      const own = await oneTapForm(await idToken({ sub: 'g-own', email: 'own@example.com' }))
      await refused(own.body.token, 'a fastbase token')
      const none = await call('/table/users/auth/login-token', {})
      t.equal(none.status, 401)
    })

    await t.test('find-or-create by verified email', async (t) => {
      const signUp = await call('/table/users/auth/sign-up', { json: { username: 'grace', email: 'grace@example.com', name: 'Grace', password: 'correct horse', passwordConfirm: 'correct horse' } })
      t.equal(signUp.status, 200, JSON.stringify(signUp.body))
      t.equal(signUp.body.verified, false)
      // An unverified address never reaches the existing account (nor signs in at all).
      const unverified = await call('/table/users/auth/google-login', { json: { token: await idToken({ sub: 'g-grace', email: 'grace@example.com', email_verified: false }) } })
      t.same(unverified.body, { code: 400, message: 'Email not verified', data: {} })
      const missingClaim = await call('/table/users/auth/google-login', { json: { token: await idToken({ sub: 'g-grace', email: 'grace@example.com', email_verified: undefined }) } })
      t.equal(missingClaim.status, 400, 'an ID token without email_verified does not vouch for the address')
      const partnerUnverified = await loginToken(await hsToken({ sub: 'p-grace', email: 'grace@example.com', email_verified: 'false' }, { aud: 'fastbase-app' }))
      t.equal(partnerUnverified.status, 400)
      t.equal((await viewAs(signUp.body)).status, 200, 'the refused attempts left the account as it was')
      // The provider verified it: the same account, now verified, taken over (next test).
      const oneTap = await oneTapForm(await idToken({ sub: 'g-grace', email: 'grace@example.com' }))
      t.equal(oneTap.status, 200)
      t.equal(oneTap.body.record.id, signUp.body.record.id)
      t.equal(oneTap.body.verified, true)
      // login-token with another issuer's identity for that now verified email: the same user, joined.
      const partner = await loginToken(await hsToken({ sub: 'p-grace', email: 'grace@example.com', email_verified: true }, { aud: 'fastbase-app' }))
      t.equal(partner.body.record.id, signUp.body.record.id)
      t.equal((await viewAs(oneTap.body)).status, 200, 'joining a verified account ends no session')
      // A new unverified address creates no account: whoever holds the token has not proven it.
      const fresh = await loginToken(await hsToken({ sub: 'p-new', email: 'newbie@example.com', email_verified: false }, { aud: 'fastbase-app' }))
      t.equal(fresh.status, 400)
      const later = await call('/table/users/auth/sign-up', { json: { username: 'newbie', email: 'newbie@example.com', name: 'N', password: 'correct horse', passwordConfirm: 'correct horse' } })
      t.equal(later.status, 200, 'the address is still free for its owner')
      // A new verified address creates a new, verified account.
      const created = await loginToken(await hsToken({ sub: 'p-new2', email: 'Newer@Example.com', email_verified: true, name: 'Newer Person' }, { aud: 'fastbase-app' }))
      t.equal(created.status, 200)
      t.equal(created.body.verified, true)
      t.not(created.body.record.id, signUp.body.record.id)
    })

    // Pre-account takeover: an attacker signs up with the victim's address and never verifies it; the
    // victim later signs in through a provider that verified the address. The victim gets the account,
    // and nothing the attacker holds (access token, refresh token, password) works any more.
    for (const [via, signIn] of [
      ['one-tap form', async (email: string) => await oneTapForm(await idToken({ sub: `g-${email}`, email }))],
      ['one-tap JSON', async (email: string) => await call('/table/users/auth/google-login', { json: { token: await idToken({ sub: `gj-${email}`, email }) } })],
      ['login-token', async (email: string) => await loginToken(await hsToken({ sub: `p-${email}`, email, email_verified: true }, { aud: 'fastbase-app' }))]
    ] as Array<[string, (email: string) => Promise<Answer>]>) {
      await t.test(`pre-account takeover through ${via}: the attacker's credentials die`, async (t) => {
        const email = `victim-${via.replace(/\W/g, '')}@example.com`
        const attacker = await call('/table/users/auth/sign-up', { json: { username: `squat_${via.replace(/\W/g, '')}`, email, name: 'Squatter', password: 'attacker pass', passwordConfirm: 'attacker pass' } })
        t.equal(attacker.status, 200, JSON.stringify(attacker.body))
        t.equal(attacker.body.verified, false)
        const victim = await signIn(email)
        t.equal(victim.status, 200, JSON.stringify(victim.body))
        t.equal(victim.body.record.id, attacker.body.record.id, 'the victim has the account of the address')
        t.equal(victim.body.verified, true)
        t.equal((await viewAs(attacker.body)).status, 401, 'the attacker\'s access token is dead')
        t.equal((await call('/table/users/auth/refresh-token', { json: { refresh_token: attacker.body.refresh_token } })).status, 401, 'and the refresh token')
        const password = await call('/table/users/auth/login-password', { json: { identity: email, password: 'attacker pass' } })
        t.same(password.body, { code: 400, message: 'Invalid username or password', data: {} }, 'and the password')
        t.equal((await viewAs(victim.body)).status, 200, 'the victim\'s session works')
        // The identity is linked now: the next sign-in finds it and ends nothing.
        const again = await signIn(email)
        t.equal(again.body.record.id, victim.body.record.id)
        t.equal((await viewAs(victim.body)).status, 200, 'a linked identity\'s sign-in ends no session')
      })
    }

    await t.test('external sessions refresh and log out like password sessions', async (t) => {
      const session = (await oneTapForm(await idToken({ sub: 'g-sess', email: 'sess@example.com' }))).body
      const view = await fetch(`${origin}/table/users/view/${session.record.id as string}`, { headers: { authorization: `Bearer ${session.token as string}` } })
      t.equal(view.status, 200)
      // The auth cookie alone signs requests in.
      const cookieView = await fetch(`${origin}/table/users/view/${session.record.id as string}`, { headers: { cookie: `__Host-acme_auth=${session.token as string}` } })
      t.equal(cookieView.status, 200)
      const refreshed = await call('/table/users/auth/refresh-token', { json: { refresh_token: session.refresh_token } })
      t.equal(refreshed.status, 200)
      t.not(refreshed.body.refresh_token, session.refresh_token)
      const logout = await call('/table/users/auth/logout', { bearer: refreshed.body.token })
      t.equal(logout.status, 200)
      t.ok(logout.cookies.some((c) => /^__Host-acme_auth=;/.test(c)), 'logout clears the cookie')
      const after = await fetch(`${origin}/table/users/view/${session.record.id as string}`, { headers: { authorization: `Bearer ${refreshed.body.token as string}` } })
      t.equal(after.status, 401, 'the access token is refused after logout')
      t.equal((await call('/table/users/auth/refresh-token', { json: { refresh_token: refreshed.body.refresh_token } })).status, 401, 'and the session cannot be refreshed')
      // Reusing a rotated refresh token ends the whole session, as for password sessions.
      const other = (await call('/table/users/auth/login-token', { bearer: await hsToken({ sub: 'p-sess', email: 'sess2@example.com' }, { aud: 'fastbase-app' }) })).body
      const rotated = await call('/table/users/auth/refresh-token', { json: { refresh_token: other.refresh_token } })
      t.equal(rotated.status, 200)
      t.equal((await call('/table/users/auth/refresh-token', { json: { refresh_token: other.refresh_token } })).status, 401, 'the rotated refresh token is spent')
      t.equal((await call('/table/users/auth/refresh-token', { json: { refresh_token: rotated.body.refresh_token } })).status, 401, 'and its reuse revoked the session')
    })

    await t.test('the routes are documented', async (t) => {
      const doc = await (await fetch(`${origin}/doc`)).json() as { paths: Record<string, any> }
      for (const path of ['/api/v1/table/users/auth/google-login', '/api/v1/table/users/auth/acme-login', '/api/v1/table/users/auth/login-token']) {
        t.ok(doc.paths[path]?.post?.summary, path)
        t.ok(doc.paths[path]?.post?.responses?.['200'], `${path} answers a session`)
      }
      t.ok(doc.paths['/api/v1/table/users/auth/google-login'].post.requestBody.content['application/x-www-form-urlencoded'], 'one-tap takes forms')
      // Other auth routes still take JSON only.
      const form = await fetch(`${origin}/table/users/auth/login-password`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'identity=a&password=b' })
      t.equal(form.status, 415)
    })
  })
  t.ok(jwks.hits() >= 1, 'the key set was fetched')
})

t.test('a provider key that cannot verify as configured stops the start', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  const base = configWith('http://127.0.0.1:9/certs', 'http://127.0.0.1:9/certs')
  const withProvider = (provider: Record<string, unknown>) => ({ ...base, authProviders: [provider] }) as DatabaseSettings
  await t.rejects(buildApp(t, withProvider({ issuer: 'https://x.test', secret: await exportJWK(privateKey), algorithm: 'RS256' })), /only a public key/)
  await t.rejects(buildApp(t, withProvider({ issuer: 'https://x.test', secret: 'abc', algorithm: 'RS256' })), /HS256 only/)
  await t.rejects(buildApp(t, withProvider({ issuer: 'https://x.test', jwksUrl: 'http://127.0.0.1:9/certs', algorithm: 'HS256' })), /JWKS verifies only/)
  await t.rejects(buildApp(t, withProvider({ issuer: '$db', secret: 'abc' })), /own issuer/)
  await t.rejects(buildApp(t, { ...base, authProviders: [], jwtAllowedIssuers: [{ issuer: 'https://x.test', secret: 'abc', algorithm: 'RS256' }] } as DatabaseSettings), /jwtAllowedIssuers\[0\]\.algorithm/)
  // Google's issuer without a clientId trusts nothing: any Google app's token would do.
  for (const google of [{ name: 'google', jwksUrl: 'http://127.0.0.1:9/certs' }, { issuer: 'https://accounts.google.com', jwksUrl: 'http://127.0.0.1:9/certs' }]) {
    const app = await buildApp(t, withProvider(google))
    t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/google-login', payload: { token: 'x' } })).statusCode, 404, 'no one-tap route')
    const token = await new SignJWT({ sub: 's', email: 'e@example.com' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://accounts.google.com').setAudience('any-app').setExpirationTime('10m').sign(privateKey)
    t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-token', headers: { authorization: `Bearer ${token}` } })).statusCode, 401, 'login-token does not trust the issuer')
  }
  // A public JWK or PEM is fine; an EC JWK without `alg` is ES256 by its curve.
  const ec = await generateKeyPair('ES256', { extractable: true })
  const { kty, crv, x, y } = await exportJWK(ec.publicKey)
  const ecApp = await buildApp(t, withProvider({ issuer: 'https://ec.test', secret: { kty, crv, x, y } }))
  const ecToken = await new SignJWT({ sub: 'ec-1', email: 'ec@example.com' }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://ec.test').setExpirationTime('10m').sign(ec.privateKey)
  t.equal((await ecApp.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-token', headers: { authorization: `Bearer ${ecToken}` } })).statusCode, 200, 'ES256 with an inline EC JWK')
  await buildApp(t, withProvider({ issuer: 'https://x.test', secret: await exportJWK(publicKey) }))
  await buildApp(t, withProvider({ issuer: 'https://x.test', secret: await exportSPKI(publicKey) }))
})

t.test('one-tap and login-token are rate limited like login', async (t) => {
  const config = { ...configWith('http://127.0.0.1:9/certs', 'http://127.0.0.1:9/certs'), rateLimit: { max: 2, timeWindow: 60_000 } } as DatabaseSettings
  const app = await buildApp(t, config, { env: { ACME_IOS_CLIENT: 'acme-ios' } })
  for (const [url, headers] of [['/api/v1/table/users/auth/login-token', { authorization: 'Bearer x.y.z' }], ['/api/v1/table/users/auth/google-login', {}]] as const) {
    const codes: number[] = []
    for (let i = 0; i < 3; i++) codes.push((await app.inject({ method: 'POST', url, headers, payload: { token: 'x.y.z' } })).statusCode)
    t.same(codes, [401, 401, 429], url)
  }
})

t.test('presets: Google\'s issuers and key set', async (t) => {
  t.same(ID_TOKEN_PRESETS.google, { issuers: ['https://accounts.google.com', 'accounts.google.com'], jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs' })
  t.notOk(ID_TOKEN_PRESETS.github, 'GitHub issues no ID tokens')
})
