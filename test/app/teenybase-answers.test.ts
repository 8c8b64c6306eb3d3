// Answers a teenybase client reads the way teenybase gives them (docs/teenybase.md): `$APP_URL` as the app's
// URL, keys in the order of the select list, `request.url` in rules, 403 before a body is validated.
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import fastbase from '../../app.js'
import { buildApp, forEachDialect, adminToken, freshDir, sharedDatabase } from '../helper.js'
import type { DatabaseSettings } from '../../schemas/config.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'

const admin = { authorization: `Bearer ${adminToken}` }

function config (): DatabaseSettings {
  return {
    appUrl: '$APP_URL',
    jwtSecret: 'answers-test-secret',
    tables: [
      {
        name: 'people',
        autoSetUid: true,
        fields: [
          { name: 'uid', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true },
          { name: 'name', type: 'text', sqlType: 'text', notNull: true },
          { name: 'email', type: 'text', sqlType: 'text' },
          { name: 'age', type: 'integer', sqlType: 'integer' }
        ],
        // Readable only through the app's own origin, as a rule written for teenybase's request.url does.
        extensions: [{ name: 'rules', listRule: "request.url.origin == 'https://app.example.com'", viewRule: 'true', createRule: null, updateRule: null, deleteRule: null }]
      },
      {
        name: 'items',
        fields: [
          { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, notNull: true },
          { name: 'label', type: 'text', sqlType: 'text' }
        ],
        extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
      }
    ]
  } as DatabaseSettings
}

const env = { APP_URL: 'https://app.example.com' }

forEachDialect(t, 'appUrl from $APP_URL; keys in select-list order; request.url in rules; 403 before validation', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect, env })
  t.equal(app.fastbase.config.appUrl, 'https://app.example.com', '$APP_URL is read from the environment')

  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/people/insert', headers: admin, payload: { values: { name: 'Ada', email: 'ada@example.com', age: 36 }, returning: 'email,uid,name' } })
  t.equal(inserted.statusCode, 200, inserted.body)
  t.same(Object.keys(inserted.json()[0]), ['email', 'uid', 'name'], 'returning: keys in the order asked')
  const json = 'application/json; charset=utf-8'
  t.equal(inserted.headers['content-type'], json, 'an answer in list order is still declared JSON')
  const uid = inserted.json()[0].uid

  const selected = await app.inject({ method: 'GET', url: '/api/v1/table/people/select?select=uid,name,email' })
  t.equal(selected.statusCode, 200, selected.body)
  t.same(Object.keys(selected.json()[0]), ['uid', 'name', 'email'], 'select: keys in the order asked')
  t.equal(selected.headers['content-type'], json, 'select with a list: declared JSON')
  t.same(selected.json()[0], { uid, name: 'Ada', email: 'ada@example.com' })

  const listed = await app.inject({ method: 'POST', url: '/api/v1/table/people/list', payload: { select: ['age', 'name', 'upper(name) as shout'] } })
  t.same(listed.json().items, [{ age: 36, name: 'Ada', shout: 'ADA' }])
  t.same(Object.keys(listed.json().items[0]), ['age', 'name', 'shout'], 'list: keys in the order asked, computed ones in place')
  const viewed = await app.inject({ method: 'GET', url: `/api/v1/table/people/view/${uid}?select=name,uid` })
  t.same(Object.keys(viewed.json()), ['name', 'uid'], 'view: keys in the order asked')
  const plain = await app.inject({ method: 'GET', url: '/api/v1/table/people/select' })
  t.same(Object.keys(plain.json()[0]), ['uid', 'name', 'email', 'age'], 'without a list: the table\'s field order')
  const edited = await app.inject({ method: 'POST', url: `/api/v1/table/people/edit/${uid}?returning=age,uid`, headers: admin, payload: { age: 37 } })
  t.same(Object.keys(edited.json()), ['age', 'uid'], 'edit returning: keys in the order asked')
  t.equal(edited.headers['content-type'], json, 'edit with a returning list: declared JSON')

  // request.url: the app's origin with this request's path and query; a forged Host changes nothing.
  const forged = await app.inject({ method: 'GET', url: '/api/v1/table/people/select?select=name', headers: { host: 'evil.example.net' } })
  t.same(forged.json(), [{ name: 'Ada' }], 'request.url.origin is appUrl\'s, whatever the Host header says')
  const urlParts = await app.inject({ method: 'GET', url: '/api/v1/table/people/select?select=' + encodeURIComponent("request.url.href as href, request.url.pathname as path, request.url.search as search, request.url.host as host") + '&limit=1' })
  t.equal(urlParts.statusCode, 200, urlParts.body)
  const parts = urlParts.json()[0]
  t.match(parts.href, /^https:\/\/app\.example\.com\/api\/v1\/table\/people\/select\?select=/, 'href is set')
  t.same({ path: parts.path, host: parts.host }, { path: '/api/v1/table/people/select', host: 'app.example.com' })
  t.match(parts.search, /^\?select=/)

  // createRule null: anonymous hears 403, not a 400 about the required `name` it may never write.
  const anonymous = await app.inject({ method: 'POST', url: '/api/v1/table/people/insert', payload: { values: {} } })
  t.equal(anonymous.statusCode, 403, anonymous.body)
  const anonymousEdit = await app.inject({ method: 'POST', url: `/api/v1/table/people/edit/${uid}`, payload: { unknown_field: 1 } })
  t.equal(anonymousEdit.statusCode, 403, anonymousEdit.body)
  const adminBad = await app.inject({ method: 'POST', url: '/api/v1/table/people/insert', headers: admin, payload: { values: {} } })
  t.equal(adminBad.statusCode, 400, 'a caller who may write still gets the validation error')
})

t.test('an unset $APP_URL is a config error naming the variable, not a stack trace', async (t) => {
  await t.rejects(buildApp(t, config(), { env: {} }), { message: /appUrl: environment variable APP_URL is not set/ })
})

forEachDialect(t, 'the same value on both databases: text concatenated with a whole number, a column as a condition', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect, env })
  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/people/insert', headers: admin, payload: { values: [{ name: 'Ada', email: '', age: 0 }, { name: 'Bob', email: 'abc', age: 7 }] } })
  t.equal(inserted.statusCode, 200, inserted.body)
  const concat = await app.inject({ method: 'GET', url: '/api/v1/table/people/select?order=name&select=' + encodeURIComponent('concat(name, "1") || 100 as c, name || 2.5 as d'), headers: admin })
  t.same(concat.json(), [{ c: 'Ada1100', d: 'Ada2.5' }, { c: 'Bob1100', d: 'Bob2.5' }], 'a whole number concatenates without ".0"')
  const names = async (where: string) => (await app.inject({ method: 'GET', url: `/api/v1/table/people/select?order=name&select=name&where=${encodeURIComponent(where)}`, headers: admin })).json()
  t.same(await names('!email'), [{ name: 'Ada' }], 'a text column is false when empty (not read as a number)')
  t.same(await names('email'), [{ name: 'Bob' }], "'abc' is true")
  t.same(await names('!age'), [{ name: 'Ada' }], 'a number column is false when 0')
  t.same(await names('age & email'), [{ name: 'Bob' }])
  t.same(await names("!'asdf'"), [], "a constant reads the same way: !'asdf' is false")
})

t.test('start-up says "not set" only for rules left out; a rule written as null is noted, not warned about', async (t) => {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  const app = Fastify({ logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  const withUnset = config()
  withUnset.tables[0].extensions = [{ name: 'rules', listRule: 'true', createRule: null }]
  await app.register(fastbase, { config: withUnset, env, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t) })
  await app.ready()
  const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const about = (level: number) => lines.filter((l) => l.level === level && String(l.msg).startsWith('fastbase config: table "people"')).map((l) => String(l.msg).slice('fastbase config: '.length))
  t.same(about(40), ['table "people": viewRule, updateRule, deleteRule not set: admins only for those operations'])
  t.same(about(30), ['table "people": createRule null: admins only for those operations'])
})

forEachDialect(t, 'rowid names an integer primary key on both databases, and is a clear 400 elsewhere', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect, env })
  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', payload: { values: [{ label: 'a' }, { label: 'b' }, { label: 'c' }] } })
  t.equal(inserted.statusCode, 200, inserted.body)
  const later = await app.inject({ method: 'GET', url: `/api/v1/table/items/select?select=label&order=${encodeURIComponent('-rowid')}&where=${encodeURIComponent('rowid > 1')}` })
  t.same(later.json(), [{ label: 'c' }, { label: 'b' }])
  const people = await app.inject({ method: 'GET', url: `/api/v1/table/people/select?where=${encodeURIComponent('rowid > 1')}`, headers: admin })
  t.equal(people.statusCode, 400)
  t.match(people.json().message, /Unknown column "rowid" \(rowid names the primary key of tables whose key is an integer/)
})

function authConfig (): DatabaseSettings {
  return {
    jwtSecret: 'answers-test-secret',
    appUrl: 'https://app.example.com',
    rateLimit: false,
    tables: [{
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', passwordConfirmSuffix: 'Confirm', passwordCurrentSuffix: 'Current' },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    }]
  }
}

forEachDialect(t, 'error bodies in teenybase\'s shape: data always there, validation with a root _errors and teenybase\'s messages', async (t, dialect) => {
  const app = await buildApp(t, authConfig(), { dialect })
  const post = (url: string, payload: object, token?: string) => app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })

  const missingTable = await app.inject({ method: 'GET', url: '/api/v1/table/nope/select' })
  t.same(missingTable.json(), { code: 404, message: 'Table not found - nope', data: {} }, 'an error without details still has data: {}')
  const unknownRoute = await app.inject({ method: 'GET', url: '/api/v1/nowhere' })
  t.same(unknownRoute.json().data, {}, 'the 404 of an unknown route too')
  const locked = await app.inject({ method: 'GET', url: '/api/v1/table/users/select?where=' + encodeURIComponent('nope = 1') })
  t.same(locked.json().data, {}, 'a bad expression too')

  const noConfirm = await post('/table/users/auth/sign-up', { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'correct horse' })
  t.same(noConfirm.json(), { code: 400, message: 'Validation Error', data: { _errors: [], passwordConfirm: { _errors: ['passwordConfirm is required'] } } })
  const mismatch = await post('/table/users/auth/sign-up', { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'correct horse', passwordConfirm: 'correct horsf' })
  t.same(mismatch.json(), { code: 400, message: 'Validation Error', data: { _errors: [], passwordConfirm: { _errors: ['password and passwordConfirm do not match'] } } })
  const tooShort = await post('/table/users/auth/sign-up', { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'short', passwordConfirm: 'short' })
  t.same(tooShort.json().data, { _errors: [], password: { _errors: ['Password must be at least 8 characters long'] } })
  const notObject = await app.inject({ method: 'POST', url: '/api/v1/table/users/insert', headers: { ...admin, 'content-type': 'application/json' }, payload: '[1]' })
  t.equal(notObject.statusCode, 400, notObject.body)
  t.ok(Array.isArray(notObject.json().data._errors) && notObject.json().data._errors.length > 0, 'a problem with the whole body is in the root _errors')

  const signed = await post('/table/users/auth/sign-up', { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'correct horse', passwordConfirm: 'correct horse' })
  t.equal(signed.statusCode, 200, signed.body)
  const { token } = signed.json()
  const noCurrent = await post('/table/users/auth/change-password', { password: 'battery staple', passwordConfirm: 'battery staple', passwordCurrent: '' }, token)
  t.same(noCurrent.json(), { code: 400, message: 'passwordCurrent is required', data: { _errors: [], passwordCurrent: { _errors: ['passwordCurrent is required'] } } })
  const missingConfirm = await post('/table/users/auth/change-password', { password: 'battery staple', passwordCurrent: 'correct horse' }, token)
  t.same(missingConfirm.json().data, { _errors: [], passwordConfirm: { _errors: ['passwordConfirm is required'] } }, 'a key the route\'s schema requires is worded the same way')

  const logout = await post('/table/users/auth/logout', {})
  t.same(logout.json(), { code: 401, message: 'Unauthorized', data: {} }, 'logout without a token')
})

forEachDialect(t, 'one-time tokens are refused in teenybase\'s words', async (t, dialect) => {
  const app = await buildApp(t, authConfig(), { dialect })
  const post = (url: string, payload: object) => app.inject({ method: 'POST', url: `/api/v1${url}`, payload })
  const signed = await post('/table/users/auth/sign-up', { username: 'ada', name: 'Ada', email: 'ada@example.com', password: 'correct horse', passwordConfirm: 'correct horse' })
  const uid = signed.json().record.id
  const tokens = app.fastbase.auth.oneTimeTokens
  const owner = { userId: uid, email: 'ada@example.com' }
  const reset = { password: 'battery staple', passwordConfirm: 'battery staple' }

  t.same((await post('/table/users/auth/confirm-verification', { token: 'x'.repeat(43) })).json(), { code: 400, message: 'Invalid token', data: {} }, 'unknown')
  const wrongKind = await tokens.issue('reset_password', 'users', owner, 600)
  t.same((await post('/table/users/auth/confirm-verification', { token: wrongKind })).json(), { code: 400, message: 'Invalid token type', data: {} }, 'a reset token used to verify')
  t.same((await post('/table/users/auth/confirm-verification', { token: wrongKind })).json().message, 'Invalid token', 'and it was used up')
  const expired = await tokens.issue('verify_email', 'users', owner, -1)
  t.same((await post('/table/users/auth/confirm-verification', { token: expired })).json().message, 'Invalid token', 'expired')
  const verify = await tokens.issue('verify_email', 'users', owner, 600)
  t.same((await post('/table/users/auth/confirm-password-reset', { token: verify, ...reset })).json().message, 'Invalid token type', 'a verification token used to reset')
  const good = await tokens.issue('reset_password', 'users', owner, 600)
  t.equal((await post('/table/users/auth/confirm-password-reset', { token: good, ...reset })).statusCode, 200)
  t.same((await post('/table/users/auth/confirm-password-reset', { token: good, ...reset })).json().message, 'Invalid token', 'used')
})

t.test('admin sign-in without a service token says so, over HTTP', async (t) => {
  const app = await buildApp(t, config(), { env, adminServiceToken: '' })
  const res = await app.inject({ method: 'POST', url: '/api/v1/admin/login', payload: { password: 'anything-at-all' } })
  t.equal(res.statusCode, 401)
  t.match(res.json(), { code: 401, message: /^No service token is configured on this server .*ADMIN_SERVICE_TOKEN/, data: {} })
})
