// teenybase configs load with only their imports changed (decision D35): the fixtures in
// test/fixtures/teenybase are written the way real teenybase projects write theirs (scaffolds,
// usage enums, tableField, sql with ${} values, legacy auth keys, SQL-mode `from`), import
// `fastbase` and `fastbase/scaffolds/fields`, and run on both dialects.
import { join } from 'node:path'
import t from 'tap'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import { loadConfigFile } from '../../../lib/config/load.js'
import { validateConfig } from '../../../lib/config/validate.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const fixture = (name: string): string => join(import.meta.dirname, '..', '..', 'fixtures', 'teenybase', name)
const admin = { authorization: `Bearer ${adminToken}` }

async function validated (name: string): Promise<{ config: DatabaseSettings, warnings: string[] }> {
  const result = validateConfig(await loadConfigFile(fixture(name)))
  if ('problems' in result) throw new Error(result.problems.join('\n'))
  return result
}

t.test('the fixtures load and validate', async (t) => {
  const blog = await validated('blog.ts')
  t.same(blog.warnings, [], 'a config written with the helpers needs nothing dropped')
  const posts = blog.config.tables[1]
  // The message names teenybase's `${}` syntax; it is not a placeholder of this string.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: describes the sql`` tag's syntax
  t.same(posts.fields.find((f) => f.name === 'views')?.check, { q: 'views >= 0' }, 'sql`` splices ${} values as SQL text')
  t.match(posts.triggers, [{ name: 'raise_on_created_update', seq: 'BEFORE', event: 'UPDATE' }, { name: 'update_updated_on_update', seq: 'AFTER' }])

  const drive = await validated('drive.ts')
  t.same(drive.warnings, ['tables[0].extensions[1].avatarField: names no field of the table ("avatar"), ignored; fastbase finds auth columns by their `usage`'])
  const usages = Object.fromEntries(drive.config.tables[0].fields.map((f) => [f.name, f.usage]))
  t.match(usages, { username: 'auth_username', email: 'auth_email', email_verified: 'auth_email_verified', password: 'auth_password', name: 'auth_name', role: 'auth_audience', meta: 'auth_metadata' }, 'legacy keys name the auth columns')
  t.same(drive.config.authCookie, { name: 'drive_session', sameSite: 'Lax' }, "the extension's authCookie is the app's auth cookie")

  const counters = await validated('counters.js')
  t.same(counters.warnings.map((w) => w.slice(0, w.indexOf(':'))), ['procedures', 'email.mailgun', 'email.mock'], 'one warning per dropped key')
  t.match(counters.config.actions?.[0].sql, { type: 'SELECT', table: 'counters', params: { min: 1 } }, 'SQL-mode `from` is the table')
  t.notOk('from' in (counters.config.actions![0].sql as object))
})

t.test('type enums, an empty jwtSecret without auth tables, providers known by issuer', async (t) => {
  const notes = await validated('notes.ts')
  t.same(notes.warnings.map((w) => w.slice(0, w.indexOf(':'))), ['auth'])
  t.match(notes.config.tables[1].fields[3], { name: 'owner_id', type: 'relation', sqlType: 'text' })
  const withAuth = structuredClone(notes.config) as any
  withAuth.tables[0].extensions.push({ name: 'auth', jwtSecret: 'x' })
  withAuth.authProviders.push({ scopes: ['openid'] })
  const result = validateConfig(withAuth)
  t.match('problems' in result && result.problems, [
    'authProviders[2]: needs one of name, issuer, jwksUrl or secret',
    'jwtSecret: must not be empty: tables[0] has an auth extension'
  ])
})

t.test('keys neither teenybase nor fastbase knows are errors with "did you mean"', async (t) => {
  const base = (await validated('counters.js')).config
  const typo = structuredClone(base) as any
  typo.tables[0].extensions[0].listRul = 'true'
  typo.appURL = 'x'
  typo.actions[0].sql.from = ['counters', 'other']
  const result = validateConfig(typo)
  t.same('problems' in result && result.problems, [
    'actions[0].sql.from: must name one table (a query reads one table)',
    'config: unknown key "appURL" (did you mean "appUrl"?)',
    'tables[0].extensions[0]: unknown key "listRul" (did you mean "listRule"?)'
  ])
})

forEachDialect(t, 'the drive fixture: legacy auth keys, the auth cookie, scaffold triggers', async (t, dialect) => {
  const app = await buildApp(t, fixture('drive.ts'), { dialect })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'ada', email: 'ada@example.com', password: 'correct horse battery', name: 'Ada', role: 'guest' } })
  t.equal(signUp.statusCode, 200, signUp.body)
  const { token, record } = signUp.json()
  t.match(record, { username: 'ada', email: 'ada@example.com', email_verified: false, name: 'Ada', role: 'guest' })
  // appUrl is https: the cookie is set and read as __Host-<name> (README: The auth cookie and other origins).
  const viaCookie = await app.inject({ method: 'GET', url: `/api/v1/table/users/view/${record.id}`, headers: { cookie: `__Host-drive_session=${token}` } })
  t.equal(viaCookie.statusCode, 200, 'the cookie named inside the auth extension carries the session')
  const login = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/login-password', payload: { username: 'ada', password: 'correct horse battery' } })
  t.equal(login.statusCode, 200, login.body)

  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/files/insert', headers: { authorization: `Bearer ${token}` }, payload: { values: { created_by: record.id, path: '/a.txt' }, returning: '*' } })
  t.equal(inserted.statusCode, 200, inserted.body)
  const [file] = inserted.json()
  const db = app.fastbase.db
  const row = async () => (await db('files').where('id', file.id).first()) as Record<string, unknown>
  // Raw SQL (the API refuses these writes itself): the scaffold triggers do what they do on teenybase.
  await t.rejects(db('files').where('id', file.id).update({ created: '2001-01-01 00:00:00' }), /Cannot update created column/, 'createdTrigger refuses a change of created')
  await db.raw("UPDATE files SET updated = '2001-01-01 00:00:00' WHERE id = ?", [file.id])
  const before = String((await row()).updated)
  await db('files').where('id', file.id).update({ notes: 'raw' })
  const after = await row()
  t.not(String(after.updated), before, 'updatedTrigger sets updated on a write that did not')
  t.equal(after.notes, 'raw', 'and the write itself stands (no loop on PostgreSQL)')
  await db('files').where('id', file.id).update({ deleted_by: record.id })
  t.not((await row()).deleted_at, null, "the fixture's own trigger ran")
  const edited = await app.inject({ method: 'POST', url: `/api/v1/table/files/edit/${file.id}?returning=notes`, headers: { authorization: `Bearer ${token}` }, payload: { notes: 'via api' } })
  t.same([edited.statusCode, edited.json()], [200, { notes: 'via api' }], 'API edits are unaffected by the triggers')
})

forEachDialect(t, 'a trigger RAISE is a 400 with its own message', async (t, dialect) => {
  const config: DatabaseSettings = {
    appUrl: 'http://localhost', jwtSecret: 'raise-secret',
    tables: [{
      name: 'notes',
      fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' }, { name: 'title', type: 'text', sqlType: 'text' }],
      triggers: [{ name: 'lock', seq: 'BEFORE', event: 'UPDATE', body: { q: "SELECT RAISE(ABORT, 'Locked notes keep their 100% title') WHERE OLD.title = 'locked' AND NEW.title != OLD.title" } }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
    }]
  }
  const app = await buildApp(t, config, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: [{ title: 'locked' }, { title: 'open' }] } })
  const refused = await app.inject({ method: 'POST', url: '/api/v1/table/notes/edit/1', payload: { title: 'x' } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 400, message: 'Constraint violation', data: { id: { code: 'trigger', message: 'Locked notes keep their 100% title' } } })
  const fine = await app.inject({ method: 'POST', url: '/api/v1/table/notes/edit/2', payload: { title: 'y' } })
  t.equal(fine.statusCode, 200, 'a row the condition does not hold for is written')
})

forEachDialect(t, 'the counters fixture: SQL-mode `from` and per-query params', async (t, dialect) => {
  const app = await buildApp(t, fixture('counters.js'), { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/counters/insert', headers: admin, payload: { values: [{ id: 'a', name: 'a', n: 0 }, { id: 'b', name: 'b', n: 5 }] } })
  const run = async (name: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/action/${name}`, payload })
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  t.same(await run('top_counters', {}), [[{ name: 'b', n: 5 }]], "the query's own params fill what the caller did not send")
  t.same(await run('top_counters', { min: 0 }), [[{ name: 'a', n: 0 }, { name: 'b', n: 5 }]], "the caller's params win")
  t.same(await run('bump', { name: 'a' }), [[{ name: 'a', n: 1 }]])
})

forEachDialect(t, 'a project without sign-in and an empty jwtSecret serves', async (t, dialect) => {
  const app = await buildApp(t, fixture('notes.ts'), { dialect, env: { NOTES_ISSUER_SECRET: 'issuer-secret' } })
  const inserted = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: admin, payload: { values: { id: 'n1', body: 'hi', pinned: true } } })
  t.equal(inserted.statusCode, 200, inserted.body)
  t.match((await app.inject({ method: 'GET', url: '/api/v1/table/notes/list' })).json(), { items: [{ id: 'n1', created: String, updated: String, owner_id: null, body: 'hi', pinned: true }], total: 1 })
})

forEachDialect(t, 'every key teenybase settings accept: loads without a warning and serves', async (t, dialect) => {
  const { warnings } = await validated('every-key.json')
  t.same(warnings, [])
  const app = await buildApp(t, fixture('every-key.json'), { dialect })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'Ada', email: 'ada@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'Ada', score: 1 } })
  t.equal(signUp.statusCode, 200, signUp.body)
  t.match(signUp.json().record, { username: 'Ada', role: 'guest' }, "a bare-string default is raw SQL ('guest')")
  const negative = await app.inject({ method: 'POST', url: '/api/v1/table/users/insert', headers: admin, payload: { values: { id: 'u2', username: 'bob', email: 'bob@example.com', password: 'correct horse battery', name: 'Bob', score: -1 } } })
  t.equal(negative.statusCode, 400, 'a check with {:name} parameters holds')
  const counted = await app.inject({ method: 'POST', url: '/api/v1/action/count_users', payload: { limit: 1 } })
  t.same([counted.statusCode, counted.json()], [200, [[{ n: 1 }]]], 'the param default fills {:role}')
})
