// lib/config/redact.ts: what GET /settings hides, on plain values (no app, no database).
import t from 'tap'
import { REDACTED, redactSecrets } from '../lib/config/redact.js'

t.test('every secret position of lib/config/secrets.ts is redacted, whole', async (t) => {
  const jwk = { kty: 'EC', crv: 'P-256', x: 'jwk-x-coordinate', y: 'jwk-y-coordinate' }
  const input = {
    jwtSecret: 'global-secret-value',
    appUrl: 'https://app.example.com',
    tables: [{
      name: 'users',
      fields: [{ name: 'password', type: 'text', sqlType: 'text', usage: 'auth_password', noSelect: true }],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret-value', jwtTokenDuration: 600, passwordType: 'scrypt', passwordConfirmSuffix: 'Confirm' },
        { name: 'rules', listRule: 'auth.uid == id' }
      ]
    }],
    email: { from: 'noreply@example.com', smtp: 'smtps://mailer:smtp-pass@smtp.example.com', variables: { company: 'Acme' } },
    authProviders: [
      { name: 'google', clientId: 'google-client-id', clientSecret: 'google-client-secret', scopes: ['email'] },
      { name: 'acme', issuer: 'https://acme.test', clientId: ['acme-web', 'acme-ios'], jwksUrl: 'https://acme.test/jwks' },
      { issuer: 'https://ec.test', secret: jwk, algorithm: 'ES256' }
    ],
    jwtAllowedIssuers: ['https://plain-issuer.test', { issuer: 'https://legacy.test', secret: 'legacy-hs-secret' }],
    storage: { driver: 's3', bucket: 'b', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 's3-secret-key', forcePathStyle: true },
    admin: { viewerPassword: 'viewer-pass', editorPassword: 'editor-pass' },
    rateLimit: false
  }
  const before = structuredClone(input)
  const out = redactSecrets(input)
  t.same(input, before, 'the input is not modified')

  t.equal(out.jwtSecret, REDACTED)
  t.equal(out.tables[0].extensions[0].jwtSecret, REDACTED)
  t.same(out.tables[0].extensions[0], { name: 'auth', jwtSecret: REDACTED, jwtTokenDuration: 600, passwordType: 'scrypt', passwordConfirmSuffix: 'Confirm' },
    'settings about passwords and tokens are not secrets')
  t.same(out.tables[0].fields, input.tables[0].fields, 'a field named password is a field, not a secret')
  t.equal(out.email.smtp, REDACTED)
  t.same(out.email.variables, { company: 'Acme' })
  t.same(out.authProviders[0], { name: 'google', clientId: REDACTED, clientSecret: REDACTED, scopes: ['email'] })
  t.equal(out.authProviders[1].clientId, REDACTED, 'a list of client ids goes whole')
  t.equal(out.authProviders[1].jwksUrl, 'https://acme.test/jwks')
  t.equal(out.authProviders[2].secret, REDACTED, 'a JWK object goes whole')
  t.equal(out.authProviders[2].algorithm, 'ES256')
  t.same(out.jwtAllowedIssuers, ['https://plain-issuer.test', { issuer: 'https://legacy.test', secret: REDACTED }])
  t.equal(out.storage.accessKeyId, REDACTED)
  t.equal(out.storage.secretAccessKey, REDACTED)
  t.equal(out.storage.forcePathStyle, true, 'a flag hides nothing')
  t.same(out.admin, { viewerPassword: REDACTED, editorPassword: REDACTED })
  t.equal(out.rateLimit, false)
  t.equal(out.appUrl, 'https://app.example.com')

  const text = JSON.stringify(out)
  for (const secret of ['global-secret-value', 'users-secret-value', 'smtp-pass', 'google-client-secret', 'google-client-id', 'acme-ios',
    'jwk-x-coordinate', 'legacy-hs-secret', 'AKIAEXAMPLE', 's3-secret-key', 'viewer-pass', 'editor-pass']) {
    t.notOk(text.includes(secret), `${secret} is nowhere in the answer`)
  }
})

t.test('credentials the schema lets through under other keys', async (t) => {
  const out = redactSecrets({
    jwtSecret: '',
    email: { from: 'a@example.com', apiKey: 'email-api-key', MAILGUN_API_KEY: 'mg-key', password: 'mail-pass' },
    authProviders: [{ name: 'custom', clientId: 'c', privateKey: { kty: 'RSA', d: 'private-exponent' }, access_token: 'static-token', tokenUrl: 'https://idp.test/token' }],
    tables: [],
    actions: [{ name: 'report', sql: { type: 'SELECT', selects: ['1'] } }]
  } as Record<string, unknown>) as Record<string, any>
  t.equal(out.jwtSecret, '', 'an empty secret says only that none is set')
  t.same(out.email, { from: 'a@example.com', apiKey: REDACTED, MAILGUN_API_KEY: REDACTED, password: REDACTED })
  t.equal(out.authProviders[0].privateKey, REDACTED)
  t.equal(out.authProviders[0].access_token, REDACTED)
  t.equal(out.authProviders[0].tokenUrl, 'https://idp.test/token')
  t.same(out.actions, [{ name: 'report', sql: { type: 'SELECT', selects: ['1'] } }])
})

t.test('a URL carrying a password is redacted wherever it is', async (t) => {
  const out = redactSecrets({
    a: 'postgres://app:db-pass@db.internal/prod',
    b: 'smtp://user:pa/ss@mail.test',
    c: 'https://user@example.com/path',
    d: 'https://example.com:8443/p?x=a@b',
    e: 'not a url: x:y@z',
    list: ['redis://:redis-pass@cache:6379']
  })
  t.same(out, {
    a: REDACTED,
    b: REDACTED,
    c: 'https://user@example.com/path',
    d: 'https://example.com:8443/p?x=a@b',
    e: 'not a url: x:y@z',
    list: [REDACTED]
  })
})

t.test('an own __proto__ key stays data', async (t) => {
  const input = JSON.parse('{"__proto__": {"secret": "proto-secret"}, "x": 1}')
  const out = redactSecrets(input) as Record<string, unknown>
  t.equal(Object.getPrototypeOf(out), Object.prototype)
  t.same(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { secret: REDACTED })
  t.notOk(JSON.stringify(out).includes('proto-secret'))
})
