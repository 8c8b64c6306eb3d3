// lib/config/redact.ts: what GET /settings hides (everything the config schema does not describe as
// harmless), on plain values (no app, no database).
import t from 'tap'
import { Value } from '@sinclair/typebox/value'
import { REDACTED, redactSecrets } from '../../../lib/config/redact.js'
import { DatabaseSettingsSchema, type DatabaseSettings } from '../../../schemas/config.js'

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

t.test('only what the schema describes is shown: unknown keys and shapes are redacted', async (t) => {
  const out = redactSecrets({
    jwtSecret: '',
    appUrl: 'https://app.example.com',
    tables: [],
    // nodemailer-style settings and provider API keys the schema lets through unchecked.
    email: { from: 'a@example.com', auth: { user: 'mailer', pass: 'email-auth-pass' }, apiKey: 'email-api-key', MAILGUN_API_KEY: 'mg-key', mock: true },
    authProviders: [{ name: 'custom', clientId: 'c', privateKey: { kty: 'RSA', d: 'private-exponent' }, tenant: 'tenant-id-value', tokenUrl: 'https://idp.test/token' }],
    rateLimit: { max: 5, timeWindow: 1000, keyGenerator: 'kg-value' },
    somethingNew: 'unknown-top-level-value',
    appName: { unexpected: 'shape-value' }
  } as Record<string, unknown>) as Record<string, any>
  t.equal(out.jwtSecret, '', 'an empty secret says only that none is set')
  t.same(out.email, { from: 'a@example.com', auth: REDACTED, apiKey: REDACTED, MAILGUN_API_KEY: REDACTED, mock: true }, 'email.auth.pass and API keys: not in the schema, not shown')
  t.same(out.authProviders[0], { name: 'custom', clientId: REDACTED, privateKey: REDACTED, tenant: REDACTED, tokenUrl: 'https://idp.test/token' })
  t.same(out.rateLimit, { max: REDACTED, timeWindow: REDACTED, keyGenerator: REDACTED }, 'an open object shows no values')
  t.equal(out.somethingNew, REDACTED, 'an unknown key')
  t.equal(out.appName, REDACTED, 'a value of a shape the schema does not describe')
  const text = JSON.stringify(out)
  for (const secret of ['email-auth-pass', 'mailer', 'email-api-key', 'mg-key', 'private-exponent', 'tenant-id-value', 'kg-value', 'unknown-top-level-value', 'shape-value']) {
    t.notOk(text.includes(secret), `${secret} is nowhere in the answer`)
  }
})

t.test('URLs: a password hides the URL, query values and fragments are masked', async (t) => {
  const out = redactSecrets({
    jwtSecret: '',
    appUrl: 'https://app.example.com/?key=app-url-key',
    allowedRedirectUrls: ['https://ok.example.com/done', 'https://user:redirect-pass@example.com/x', 'https://example.com/cb#token=frag-token'],
    authProviders: [{ name: 'acme', jwksUrl: 'https://idp.test/jwks?api_key=jwks-api-key&v=2', userinfoUrl: 'https://u:p/ss@idp.test/me' }],
    tables: [{
      name: 'notes',
      description: 'synced from https://api.example.com/feed?token=description-token every hour',
      fields: [{ name: 'link', type: 'url', sqlType: 'text', default: { l: 'postgres://app:literal-pass@db/x' } }]
    }]
  }) as Record<string, any>
  t.equal(out.appUrl, `https://app.example.com/?key=${REDACTED}`)
  t.same(out.allowedRedirectUrls, ['https://ok.example.com/done', REDACTED, `https://example.com/cb#${REDACTED}`])
  t.equal(out.authProviders[0].jwksUrl, `https://idp.test/jwks?api_key=${REDACTED}&v=${REDACTED}`)
  t.equal(out.authProviders[0].userinfoUrl, REDACTED, 'an unparsable URL with a password in it')
  t.equal(out.tables[0].description, `synced from https://api.example.com/feed?token=${REDACTED} every hour`, 'a URL inside text')
  t.same(out.tables[0].fields[0].default, { l: REDACTED }, 'a URL in a SQL literal')
  const text = JSON.stringify(out)
  for (const secret of ['app-url-key', 'redirect-pass', 'frag-token', 'jwks-api-key', 'ss@idp', 'description-token', 'literal-pass']) {
    t.notOk(text.includes(secret), `${secret} is nowhere in the answer`)
  }
})

t.test('what is known to be harmless is shown as it is', async (t) => {
  const config: DatabaseSettings = {
    jwtSecret: 'global-secret-value',
    appUrl: 'https://app.example.com',
    appName: 'Acme',
    jwtIssuer: 'acme',
    jwtAlgorithm: 'HS512',
    allowedRedirectUrls: ['https://app.example.com/done'],
    authCookie: { name: 'acme_auth', sameSite: 'Lax', path: '/', maxAge: 3600 },
    email: { from: 'Acme <noreply@example.com>', variables: { company: 'Acme' }, tags: ['auth'] },
    authProviders: [{ name: 'google', scopes: ['email', 'profile'], redirectUrl: 'https://app.example.com/cb' }],
    limits: { maxLimit: 100, bodySize: 65536 },
    maxUploadSize: 1024,
    storage: { driver: 'local' },
    realtime: { enabled: true, heartbeatSeconds: 20 },
    autoMigrate: false,
    '//': 'a comment',
    tables: [{
      name: 'notes',
      autoSetUid: true,
      description: 'Notes',
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true, noUpdate: true },
        { name: 'owner', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'kind', type: 'select', sqlType: 'text', values: ['a', 'b'], default: { l: 'a' } },
        { name: 'score', type: 'number', sqlType: 'real', check: { q: 'score >= 0' } },
        { name: 'password', type: 'text', sqlType: 'text', noSelect: true }
      ],
      indexes: [{ fields: ['owner', 'kind'], where: { q: 'kind = {:k}', p: { k: 'a' } } }],
      triggers: [{ name: 'touch', event: 'UPDATE', body: 'SELECT 1', dialect: 'sqlite' }],
      fullTextSearch: { fields: ['kind'], tokenize: 'porter', prefix: '2 3' },
      extensions: [
        { name: 'auth', jwtSecret: 'table-secret-value', jwtTokenDuration: 600, passwordType: 'scrypt', passwordConfirmSuffix: 'Confirm', emailTemplates: { verification: { subject: 'Hi', variables: { x: 'y' } } } },
        { name: 'rules', listRule: 'auth.uid == owner', viewRule: 'true', createRule: "auth.uid != null & kind == 'a'", updateRule: null, deleteRule: null }
      ]
    }],
    actions: [
      { name: 'report', params: { n: 'integer', q: { type: 'string', optional: true, default: 'x' } }, requireAuth: true, sql: { type: 'SELECT', table: 'notes', selects: ['kind'], where: { q: 'score > {:n}' } } },
      { name: 'bump', guard: 'auth.uid != null', steps: [{ type: 'UPDATE', table: 'notes', where: 'id == params.id', set: { score: 'score + 1' } }] }
    ]
  }
  t.ok(Value.Check(DatabaseSettingsSchema, config), 'the example is a valid config')
  const out = redactSecrets(config)
  const expected = structuredClone(config) as any
  expected.jwtSecret = REDACTED
  expected.tables[0].extensions[0].jwtSecret = REDACTED
  // All of `storage` is a secret position (any of it may be a `$NAME` reference).
  expected.storage.driver = REDACTED
  t.same(out, expected, 'everything but the secrets, unchanged: tables, fields, rules, indexes, triggers, actions, settings')
})

t.test('an own __proto__ key stays data', async (t) => {
  const input = JSON.parse('{"tables": [], "__proto__": {"secret": "proto-secret"}, "appName": "x"}')
  const out = redactSecrets(input) as Record<string, unknown>
  t.equal(Object.getPrototypeOf(out), Object.prototype)
  t.equal(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, REDACTED, 'not a config key: redacted')
  t.equal(out.appName, 'x')
  t.notOk(JSON.stringify(out).includes('proto-secret'))
})
