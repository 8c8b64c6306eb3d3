// Answers a teenybase client reads the way teenybase gives them (docs/teenybase.md): `$APP_URL` as the app's
// URL, keys in the order of the select list, `request.url` in rules, 403 before a body is validated.
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import fastbase from '../app.js'
import { buildApp, forEachDialect, adminToken, freshDir, sharedDatabase } from './helper.js'
import type { DatabaseSettings } from '../schemas/config.js'

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
  const about = (level: number) => lines.filter((l) => l.level === level && String(l.msg).startsWith('table "people"')).map((l) => l.msg)
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
