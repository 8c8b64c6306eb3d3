// GET /settings and POST /setup-db (decisions D15, D33) on both dialects: who may call them, that no
// secret value leaves the server (those from `$ENV` included), and that setup-db recreates what is missing.
import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { generateKeyPair, exportJWK } from 'jose'
import { buildApp, forEachDialect, adminToken } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import { ONE_TIME_TOKENS } from '../../lib/auth/stores/store-tables.js'
import { RATE_LIMITS } from '../../lib/auth/stores/rate-limit-store.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const ENV_JWT_SECRET = 'env-jwt-secret-value-0123456789abcdef'
const SECRETS = {
  usersJwt: 'users-table-secret-value',
  smtpPassword: 'smtp-password-value',
  googleClientId: 'google-client-id-value.apps.googleusercontent.com',
  googleClientSecret: 'google-client-secret-value',
  legacySecret: 'legacy-issuer-hs-secret-value-0123456789',
  s3AccessKey: 'AKIAS3ACCESSKEYVALUE',
  s3SecretKey: 's3-secret-access-key-value',
  viewerPassword: 'viewer-password-value',
  editorPassword: 'editor-password-value'
}

async function config (): Promise<{ config: DatabaseSettings, jwkX: string }> {
  const { publicKey } = await generateKeyPair('ES256', { extractable: true })
  const { kty, crv, x, y } = await exportJWK(publicKey)
  return {
    jwkX: x as string,
    config: {
      jwtSecret: '$FB_TEST_SETTINGS_JWT_SECRET',
      appUrl: 'https://app.example.com',
      appName: 'Acme',
      rateLimit: false,
      email: { from: 'Acme <noreply@example.com>', smtp: `smtp://mailer:${SECRETS.smtpPassword}@127.0.0.1:9` },
      authProviders: [
        { name: 'google', clientId: SECRETS.googleClientId, clientSecret: SECRETS.googleClientSecret },
        { issuer: 'https://ec.test', secret: { kty, crv, x, y } }
      ],
      jwtAllowedIssuers: [{ issuer: 'https://legacy.test', secret: SECRETS.legacySecret }],
      storage: { driver: 's3', bucket: 'uploads', endpoint: 'http://127.0.0.1:9', accessKeyId: SECRETS.s3AccessKey, secretAccessKey: SECRETS.s3SecretKey },
      admin: { viewerPassword: SECRETS.viewerPassword, editorPassword: SECRETS.editorPassword },
      tables: [
        {
          name: 'users',
          autoSetUid: true,
          fields: [...baseFields, ...authFields],
          extensions: [
            { name: 'auth', jwtSecret: SECRETS.usersJwt },
            { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
          ]
        },
        {
          name: 'notes',
          autoSetUid: true,
          fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
          extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
        }
      ]
    }
  }
}

function call (app: FastifyInstance) {
  return async (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, payload?: unknown) => {
    const options: InjectOptions = { method, url: `/api/v1${url}`, headers }
    if (payload !== undefined) options.payload = payload as InjectOptions['payload']
    return await app.inject(options)
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

forEachDialect(t, 'admin endpoints', async (t, dialect) => {
  const { config: settings, jwkX } = await config()
  const app = await buildApp(t, settings, { dialect, env: { FB_TEST_SETTINGS_JWT_SECRET: ENV_JWT_SECRET } })
  const request = call(app)
  t.equal(app.fastbase.config.jwtSecret, ENV_JWT_SECRET, 'the app holds the secret resolved from $ENV')

  const login = async (password: string): Promise<string> => {
    const res = await request('POST', '/admin/login', {}, { password })
    t.equal(res.statusCode, 200, 'admin login')
    return res.json().token
  }
  const editor = await login(SECRETS.editorPassword)
  const viewer = await login(SECRETS.viewerPassword)
  const signUp = await request('POST', '/table/users/auth/sign-up', {}, { username: 'ada', email: 'ada@example.com', password: 'correct horse', passwordConfirm: 'correct horse', name: 'Ada' })
  t.equal(signUp.statusCode, 200, 'sign-up')
  const user = signUp.json().token as string

  t.test('GET /settings: any admin; secrets redacted', async (t) => {
    const answers: string[] = []
    for (const [who, headers] of [
      ['superadmin (Bearer)', bearer(adminToken)],
      ['superadmin (raw Authorization)', { authorization: adminToken }],
      ['editor', bearer(editor)],
      ['viewer', bearer(viewer)]
    ] as const) {
      const res = await request('GET', '/settings', headers)
      t.equal(res.statusCode, 200, who)
      answers.push(res.body)
    }
    t.ok(answers.every((a) => a === answers[0]), 'every admin role gets the same answer')

    const body = JSON.parse(answers[0])
    t.match(body, {
      jwtSecret: '***',
      appUrl: 'https://app.example.com',
      appName: 'Acme',
      email: { from: 'Acme <noreply@example.com>', smtp: '***' },
      authProviders: [{ name: 'google', clientId: '***', clientSecret: '***' }, { issuer: 'https://ec.test', secret: '***' }],
      jwtAllowedIssuers: [{ issuer: 'https://legacy.test', secret: '***' }],
      storage: { accessKeyId: '***', secretAccessKey: '***' },
      admin: { viewerPassword: '***', editorPassword: '***' },
      tables: [{ name: 'users', extensions: [{ name: 'auth', jwtSecret: '***' }, { name: 'rules', listRule: 'auth.uid == id' }] }, { name: 'notes' }]
    })
    t.same(body.tables[0].fields.map((f: { name: string }) => f.name), settings.tables[0].fields.map((f) => f.name), 'the schema is all there')
    for (const [name, value] of Object.entries({ ...SECRETS, envJwtSecret: ENV_JWT_SECRET, jwkX, adminServiceToken: adminToken })) {
      t.notOk(answers[0].includes(value), `no ${name} in the answer`)
    }
    t.notOk(/adminServiceToken|ADMIN_SERVICE_TOKEN|databaseUrl|dataDir/.test(answers[0]), 'no runtime option either')
  })

  t.test('POST /setup-db: superadmin only; recreates missing tables, idempotently', async (t) => {
    const db = app.fastbase.db
    await db.schema.dropTable('notes')
    await db.schema.dropTable(ONE_TIME_TOKENS)
    t.notOk(await db.schema.hasTable('notes'), 'notes dropped by hand')

    // Teenybase clients send `{}` with a JSON content type; an empty JSON body means the same.
    const first = await request('POST', '/setup-db', bearer(adminToken), {})
    t.equal(first.statusCode, 200)
    t.equal(typeof first.json().message, 'string')
    t.same([...first.json().created].sort(), [ONE_TIME_TOKENS, 'notes'].sort(), 'created what was missing')
    t.ok(await db.schema.hasTable('notes'))
    t.ok(await db.schema.hasTable(ONE_TIME_TOKENS))

    const second = await request('POST', '/setup-db', { authorization: adminToken, 'content-type': 'application/json' }, '')
    t.equal(second.statusCode, 200, 'raw Authorization, empty JSON body')
    t.same(second.json().created, [], 'nothing is missing the second time')
    const third = await request('POST', '/setup-db', bearer(adminToken))
    t.equal(third.statusCode, 200, 'no body at all')
    t.same(third.json(), { message: third.json().message, created: [] })

    const insert = await request('POST', '/table/notes/insert', bearer(adminToken), { values: { body: 'back' }, returning: ['body'] })
    t.equal(insert.statusCode, 200, 'the recreated table works')
    t.same(insert.json(), [{ body: 'back' }])
  })

  t.test('who is refused', async (t) => {
    const refused: Array<[string, Record<string, string>, number]> = [
      ['anonymous', {}, 401],
      ['X-Service-Token is not read', { 'x-service-token': adminToken }, 401],
      ['an invalid token', bearer('not-the-token'), 401],
      ['a signed-in user', bearer(user), 403]
    ]
    for (const [who, headers, status] of refused) {
      const settingsRes = await request('GET', '/settings', headers)
      t.equal(settingsRes.statusCode, status, `settings: ${who}`)
      t.equal(settingsRes.json().code, status)
      const setupRes = await request('POST', '/setup-db', headers, {})
      t.equal(setupRes.statusCode, status, `setup-db: ${who}`)
      t.notOk(settingsRes.body.includes(SECRETS.usersJwt) || settingsRes.body.includes(ENV_JWT_SECRET), 'no config in the error')
    }
    for (const [who, token] of [['editor', editor], ['viewer', viewer]]) {
      const res = await request('POST', '/setup-db', bearer(token), {})
      t.equal(res.statusCode, 403, `setup-db: ${who}`)
      t.equal(res.json().code, 403)
    }
  })

  t.test('the OpenAPI document lists both routes', async (t) => {
    const doc = (await request('GET', '/doc')).json()
    const settingsDoc = doc.paths['/api/v1/settings']?.get
    const setupDoc = doc.paths['/api/v1/setup-db']?.post
    t.ok(settingsDoc, 'GET /settings')
    t.ok(setupDoc, 'POST /setup-db')
    for (const route of [settingsDoc, setupDoc]) {
      t.ok(route.responses['200'] && route.responses['401'] && route.responses['403'], 'declares 200, 401 and 403')
      t.same(route.tags, ['admin'])
    }
    t.ok(setupDoc.responses['200'].content['application/json'].schema.properties.created, 'setup-db answer schema')
  })
})

// On PostgreSQL rate-limit counters live in a table of their own (shared by every instance); SQLite keeps them in memory.
forEachDialect(t, 'setup-db and the rate-limit counters', async (t, dialect) => {
  const app = await buildApp(t, {
    jwtSecret: '',
    appUrl: 'https://app.example.com',
    rateLimit: { max: 1000, timeWindow: 60_000 },
    tables: [{ name: 'notes', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true }] }]
  }, { dialect })
  const db = app.fastbase.db
  t.equal(await db.schema.hasTable(RATE_LIMITS), dialect === 'postgres', 'the counters table exists where it is used')
  await db.schema.dropTableIfExists(RATE_LIMITS)
  const res = await app.inject({ method: 'POST', url: '/api/v1/setup-db', headers: bearer(adminToken), payload: {} })
  t.equal(res.statusCode, 200)
  t.same(res.json().created, dialect === 'postgres' ? [RATE_LIMITS] : [])
  t.equal(await db.schema.hasTable(RATE_LIMITS), dialect === 'postgres')
  const again = await app.inject({ method: 'POST', url: '/api/v1/setup-db', headers: bearer(adminToken) })
  t.same(again.json().created, [], 'nothing the second time')
})
