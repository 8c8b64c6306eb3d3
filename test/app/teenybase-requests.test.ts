// Requests as teenybase clients send them (decision D36), on both dialects: empty JSON bodies,
// unknown query parameters and auth body keys, X-Authorization, health's timestamp, urlencoded and
// multipart table writes, logins of accounts stored under teenybase's normalised email, and upserts
// on unique keys other than the primary key. Each lenient path next to the failures that must stay.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { readdir, readFile } from 'node:fs/promises'
import { buildApp, forEachDialect, adminToken } from '../helper.js'
import { baseFields, authFields } from '../../lib/config/helpers.js'
import { teenybaseEmail } from '../../lib/auth/email-address.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const API = '/api/v1'
const ADMIN = { authorization: `Bearer ${adminToken}` }
const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

const config: DatabaseSettings = {
  jwtSecret: 'global-secret',
  appUrl: 'https://app.example.com',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', passwordConfirmSuffix: 'Confirm' },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    },
    {
      name: 'docs',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'pages', type: 'integer', sqlType: 'integer' },
        { name: 'cover', type: 'file', sqlType: 'text' },
        { name: 'attachment', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: "title != 'blocked'", updateRule: "new.title != 'blocked'", deleteRule: 'true' }]
    },
    {
      name: 'tags',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'name', type: 'text', sqlType: 'text', notNull: true },
        { name: 'color', type: 'text', sqlType: 'text' }
      ],
      indexes: [{ fields: ['owner', 'name'], unique: true }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'owner == auth.uid', updateRule: 'owner == auth.uid', deleteRule: 'owner == auth.uid' }]
    },
    {
      name: 'posts',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'slug', type: 'text', sqlType: 'text', unique: true },
        { name: 'views', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'owner == auth.uid', updateRule: 'owner == auth.uid', deleteRule: 'owner == auth.uid' }]
    }
  ]
}

interface Account { id: string, token: string, refreshToken: string }

async function signUp (app: FastifyInstance, username: string, email = `${username}@example.com`): Promise<Account> {
  const res = await app.inject({ method: 'POST', url: `${API}/table/users/auth/sign-up`, payload: { username, email, name: username, password: 'password-1', passwordConfirm: 'password-1' } })
  if (res.statusCode !== 200) throw new Error(`sign-up failed: ${res.body}`)
  const body = res.json()
  return { id: body.record.id, token: body.token, refreshToken: body.refresh_token }
}

const q = encodeURIComponent

/** A multipart body as `inject` takes it, built by the platform's own FormData encoder. */
async function multipart (parts: Array<[string, string | Blob, string?]>): Promise<{ headers: Record<string, string>, payload: Buffer }> {
  const form = new FormData()
  for (const [name, value, fileName] of parts) {
    if (typeof value === 'string') form.append(name, value)
    else form.append(name, value, fileName)
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { headers: { 'content-type': request.headers.get('content-type')! }, payload: Buffer.from(await request.arrayBuffer()) }
}

const png = (text: string) => new Blob([text], { type: 'image/png' })
const bearer = (a: Account) => ({ authorization: `Bearer ${a.token}` })

forEachDialect(t, 'teenybase requests', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const ann = await signUp(app, 'ann')
  const bob = await signUp(app, 'bob')

  t.test('an empty or whitespace JSON body means {}', async (t) => {
    for (const payload of ['', '  \n\t ']) {
      const logout = await app.inject({ method: 'POST', url: `${API}/table/users/auth/logout`, headers: { ...JSON_TYPE, ...bearer(await signUp(app, `u${Math.random().toString(36).slice(2, 8)}`)) }, payload })
      t.equal(logout.statusCode, 200, `logout with ${JSON.stringify(payload)}`)
      t.same(logout.json(), { success: true })
    }
    const verify = await app.inject({ method: 'POST', url: `${API}/table/users/auth/request-verification`, headers: { ...JSON_TYPE, ...bearer(ann) }, payload: '' })
    t.equal(verify.statusCode, 200, 'request-verification with an empty JSON body')
    const cookie = await app.inject({ method: 'POST', url: `${API}/auth/logout`, headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '' })
    t.equal(cookie.statusCode, 200, 'charset parameter too')
    const list = await app.inject({ method: 'POST', url: `${API}/table/posts/list`, headers: JSON_TYPE, payload: '' })
    t.equal(list.statusCode, 200, 'a read with an empty body has no parameters')
    t.same(list.json(), { items: [], total: 0 })
  })

  t.test('an empty JSON body is still checked as {}; text that is not JSON stays 400', async (t) => {
    const insert = await app.inject({ method: 'POST', url: `${API}/table/posts/insert`, headers: { ...JSON_TYPE, ...ADMIN }, payload: '' })
    t.equal(insert.statusCode, 400)
    t.match(insert.json(), { code: 400, message: 'Validation Error', data: { _errors: [], values: { _errors: ['values is required'] } } })
    const login = await app.inject({ method: 'POST', url: `${API}/table/users/auth/login-password`, headers: JSON_TYPE, payload: ' ' })
    t.equal(login.statusCode, 400)
    t.match(login.json(), { code: 400, message: 'Validation Error' })
    for (const payload of ['{', 'nope', '{"a":1}x', '{"__proto__":{"admin":true}}']) {
      const res = await app.inject({ method: 'POST', url: `${API}/table/users/auth/logout`, headers: { ...JSON_TYPE, ...bearer(bob) }, payload })
      t.equal(res.statusCode, 400, `${payload} is refused`)
      t.same(res.json(), { code: 400, message: 'Invalid JSON body', data: {} })
    }
    const big = await app.inject({ method: 'POST', url: `${API}/table/posts/list`, headers: JSON_TYPE, payload: ' '.repeat(2 * 1024 * 1024) })
    t.equal(big.statusCode, 413, 'whitespace past the body limit is still too large')
    t.equal(big.json().code, 413)
  })

  t.test('X-Authorization is an alias of Authorization; Authorization wins', async (t) => {
    const me = (headers: Record<string, string>) => app.inject({ method: 'GET', url: `${API}/table/users/select?select=username`, headers })
    t.same((await me({ 'x-authorization': `Bearer ${ann.token}` })).json(), [{ username: 'ann' }])
    t.same((await me({ 'x-authorization': ann.token })).json(), [{ username: 'ann' }], 'the raw legacy form too')
    t.same((await me({ authorization: `Bearer ${bob.token}`, 'x-authorization': `Bearer ${ann.token}` })).json(), [{ username: 'bob' }])
    t.same((await me({ authorization: `Bearer ${bob.token}`, 'x-authorization': 'Bearer not-a-token' })).json(), [{ username: 'bob' }], 'an X-Authorization behind Authorization is not read')
    const bad = await me({ 'x-authorization': 'Bearer not-a-token' })
    t.equal(bad.statusCode, 401, 'a bad token there is a 401 as in Authorization')
    t.same(bad.json(), { code: 401, message: 'Invalid or expired token', data: {} })
    const service = await app.inject({ method: 'POST', url: `${API}/table/posts/insert`, headers: { 'x-authorization': `Bearer ${adminToken}` }, payload: { values: { owner: 'x', title: 'by service' }, returning: 'title' } })
    t.same(service.json(), [{ title: 'by service' }], 'the service token works there too')
    t.same((await me({ 'x-authorization': '  ' })).json(), [], 'a blank header is no token')
  })

  t.test('unknown query parameters are ignored; known ones are still checked', async (t) => {
    const created = await app.inject({ method: 'POST', url: `${API}/table/posts/insert`, headers: bearer(ann), payload: { values: { owner: ann.id, title: 'Query', slug: 'query' }, returning: 'id' } })
    const { id } = created.json()[0]
    const list = await app.inject({ method: 'GET', url: `${API}/table/posts/list?fields=id&expand=owner&where=${encodeURIComponent("slug == 'query'")}&select=title` })
    t.equal(list.statusCode, 200)
    t.same(list.json(), { items: [{ title: 'Query' }], total: 1 })
    const select = await app.inject({ method: 'GET', url: `${API}/table/posts/select?perPage=5&page=2&select=slug&where=${encodeURIComponent("slug == 'query'")}` })
    t.same(select.json(), [{ slug: 'query' }])
    const view = await app.inject({ method: 'GET', url: `${API}/table/posts/view/${id}?fields=id&select=title` })
    t.same(view.json(), { title: 'Query' })
    const edit = await app.inject({ method: 'POST', url: `${API}/table/posts/edit/${id}?returning=title&requestKey=abc`, headers: bearer(ann), payload: { title: 'Query 2' } })
    t.same(edit.json(), { title: 'Query 2' })
    const body = await app.inject({ method: 'POST', url: `${API}/table/posts/select`, payload: { select: 'title', where: "slug == 'query'", fields: 'id' } })
    t.same(body.json(), [{ title: 'Query 2' }], 'unknown keys of a select body too: the same parameters')

    const badLimit = await app.inject({ method: 'GET', url: `${API}/table/posts/list?fields=id&limit=abc` })
    t.equal(badLimit.statusCode, 400)
    t.match(badLimit.json(), { code: 400, message: 'Validation Error', data: { limit: {} } })
    const badWhere = await app.inject({ method: 'GET', url: `${API}/table/posts/list?fields=id&where=${encodeURIComponent('nope == 1')}` })
    t.equal(badWhere.statusCode, 400)
    t.match(badWhere.json().message, /Unknown column "nope"/)
    const badOr = await app.inject({ method: 'POST', url: `${API}/table/posts/edit/${id}?or=MAYBE&x=1`, headers: bearer(ann), payload: { title: 'x' } })
    t.equal(badOr.statusCode, 400)
    t.match(badOr.json(), { code: 400, message: 'Validation Error', data: { or: {} } })
    const proto = await app.inject({ method: 'GET', url: `${API}/table/posts/list?__proto__=1&constructor=2&select=title` })
    t.equal(proto.statusCode, 200, 'prototype-named parameters are ignored like any other')
  })

  t.test('auth endpoints ignore body keys they do not name, and never write them', async (t) => {
    const auth = `${API}/table/users/auth`
    const signUp = await app.inject({ method: 'POST', url: `${auth}/sign-up`, payload: { username: 'cy', email: 'cy@example.com', name: 'Cy', password: 'password-1', passwordConfirm: 'password-1', emailVisibility: true, constructor: { x: 1 }, isAdmin: true } })
    t.equal(signUp.statusCode, 200, 'sign-up')
    const cy = signUp.json()
    t.notOk('isAdmin' in cy.record || 'emailVisibility' in cy.record)
    const login = await app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { identity: 'cy', password: 'password-1', remember: true } })
    t.equal(login.statusCode, 200, 'login-password')
    const refreshed = await app.inject({ method: 'POST', url: `${auth}/refresh-token`, payload: { refresh_token: login.json().refresh_token, device: 'phone' } })
    t.equal(refreshed.statusCode, 200, 'refresh-token')
    const session = { authorization: `Bearer ${refreshed.json().token}` }
    const change = await app.inject({ method: 'POST', url: `${auth}/change-password`, headers: session, payload: { password: 'password-2', passwordConfirm: 'password-2', passwordCurrent: 'password-1', role: 'admin', email_verified: true, name: 'Root' } })
    t.equal(change.statusCode, 200, 'change-password')
    const reset = await app.inject({ method: 'POST', url: `${auth}/request-password-reset`, payload: { email: 'cy@example.com', redirect: 'https://evil.example' } })
    t.equal(reset.statusCode, 200, 'request-password-reset')
    const confirmReset = await app.inject({ method: 'POST', url: `${auth}/confirm-password-reset`, payload: { token: 'not-a-token', password: 'password-3', passwordConfirm: 'password-3', role: 'admin' } })
    t.same(confirmReset.json(), { code: 400, message: 'Invalid token', data: {} }, 'confirm-password-reset: the token is what decides')
    const confirmVerify = await app.inject({ method: 'POST', url: `${auth}/confirm-verification`, payload: { token: 'not-a-token', email_verified: true } })
    t.same(confirmVerify.json(), { code: 400, message: 'Invalid token', data: {} }, 'confirm-verification')
    const logout = await app.inject({ method: 'POST', url: `${auth}/logout`, headers: session, payload: { everywhere: true } })
    t.equal(logout.statusCode, 200, 'logout')
    const admin = await app.inject({ method: 'POST', url: `${API}/admin/login`, payload: { password: adminToken, username: 'root' } })
    t.equal(admin.statusCode, 200, 'admin login')

    const [row] = (await app.inject({ method: 'GET', url: `${API}/table/users/select?where=${encodeURIComponent("username == 'cy'")}&select=name,role,email_verified`, headers: ADMIN })).json()
    t.same(row, { name: 'Cy', role: null, email_verified: false }, 'nothing but the password was written')
    const relogin = await app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { identity: 'cy', password: 'password-2' } })
    t.equal(relogin.statusCode, 200, 'the password was changed')
  })

  t.test('what auth endpoints still refuse', async (t) => {
    const auth = `${API}/table/users/auth`
    const noInsert = await app.inject({ method: 'POST', url: `${auth}/sign-up`, payload: { username: 'dee', email: 'dee@example.com', name: 'Dee', password: 'password-1', passwordConfirm: 'password-1', email_verified: true, extra: 1 } })
    t.equal(noInsert.statusCode, 403, 'a noInsert field is a field: still refused')
    t.match(noInsert.json(), { code: 403 })
    const badType = await app.inject({ method: 'POST', url: `${auth}/sign-up`, payload: { username: 'dee', email: 'not-an-email', name: 'Dee', password: 'password-1', passwordConfirm: 'password-1', extra: 1 } })
    t.equal(badType.statusCode, 400)
    t.match(badType.json(), { code: 400, message: 'Validation Error', data: { email: {} } })
    t.notOk('extra' in badType.json().data, 'the ignored key is not reported')
    const missing = await app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { identity: 'ann', pass: 'password-1' } })
    t.equal(missing.statusCode, 400)
    t.match(missing.json(), { code: 400, message: 'Validation Error', data: { _errors: [], password: { _errors: ['password is required'] } } })
    const wrong = await app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { identity: 'ann', password: 'password-x', password_hash: 'x' } })
    t.same(wrong.json(), { code: 400, message: 'Invalid username or password', data: {} })
    const notObject = await app.inject({ method: 'POST', url: `${auth}/sign-up`, headers: JSON_TYPE, payload: '[1]' })
    t.equal(notObject.statusCode, 400)
    const users = (await app.inject({ method: 'GET', url: `${API}/table/users/select?select=username&where=${encodeURIComponent("username == 'dee'")}`, headers: ADMIN })).json()
    t.same(users, [], 'no account was created')
  })

  t.test('login finds an account stored under teenybase\'s normalised address; exact matches win', async (t) => {
    const auth = `${API}/table/users/auth`
    // Accounts as a teenybase project stored them: the address in its normalised form.
    for (const [username, email, password] of [['legacy', 'ab@gmail.com', 'legacy-pass-1'], ['outlooker', 'john.smith@outlook.com', 'legacy-pass-2'], ['cd', 'cd@gmail.com', 'legacy-pass-3']]) {
      const created = await app.inject({ method: 'POST', url: `${API}/table/users/insert`, headers: ADMIN, payload: { values: { username, email, name: username, password, passwordConfirm: password } } })
      t.equal(created.statusCode, 200, `teenybase-era ${email}`)
    }
    const login = (identity: string, password: string) => app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { identity, password } })
    for (const typed of ['ab@gmail.com', 'a.b@gmail.com', ' A.B+News@GoogleMail.com ', 'a.b+x@googlemail.com']) {
      const res = await login(typed, 'legacy-pass-1')
      t.equal(res.statusCode, 200, `${typed} logs in`)
      t.equal(res.json().record?.username, 'legacy')
    }
    const byEmailKey = await app.inject({ method: 'POST', url: `${auth}/login-password`, payload: { email: 'A.B@gmail.com', password: 'legacy-pass-1' } })
    t.equal(byEmailKey.json().record?.username, 'legacy', 'the email key too')
    t.equal((await login('john.smith+shop@outlook.com', 'legacy-pass-2')).statusCode, 200, 'outlook: +tag removed')
    t.equal((await login('johnsmith@outlook.com', 'legacy-pass-2')).statusCode, 400, 'outlook keeps its dots')

    // A fastbase account stores the address as typed, and the exact address always wins.
    const dotted = await app.inject({ method: 'POST', url: `${auth}/sign-up`, payload: { username: 'dotted', email: 'C.D+Tag@Gmail.com', name: 'Dotted', password: 'new-pass-1', passwordConfirm: 'new-pass-1' } })
    t.equal(dotted.json().record?.email, 'c.d+tag@gmail.com', 'stored as typed (trimmed, lower-case)')
    t.equal((await login('c.d+tag@gmail.com', 'new-pass-1')).json().record?.username, 'dotted')
    const exactWins = await login('c.d+tag@gmail.com', 'legacy-pass-3')
    t.same(exactWins.json(), { code: 400, message: 'Invalid username or password', data: {} }, 'the password of the normalised account does not open the exact one')
    t.equal((await login('cd@gmail.com', 'legacy-pass-3')).json().record?.username, 'cd', 'the normalised account by its own address')
    t.equal((await login('c.d@gmail.com', 'legacy-pass-3')).json().record?.username, 'cd', 'no exact match: the normalised one')
    t.same((await login('c.d@gmail.com', 'new-pass-1')).json(), { code: 400, message: 'Invalid username or password', data: {} }, 'the fallback never reaches an account stored in another non-normalised form')
    const reverse = await login('ann+x@example.com', 'password-1')
    t.same(reverse.json(), { code: 400, message: 'Invalid username or password', data: {} }, 'other domains keep their +tags')
    t.same((await login('nobody@gmail.com', 'legacy-pass-1')).json(), { code: 400, message: 'Invalid username or password', data: {} })
  })

  t.test('a password reset by a variant of a teenybase address goes to the address stored', async (t) => {
    const outbox = join(app.fastbase.options.dataDir, 'outbox')
    const before = new Set(await readdir(outbox).catch(() => [] as string[]))
    const reset = await app.inject({ method: 'POST', url: `${API}/table/users/auth/request-password-reset`, payload: { email: 'A.B+reset@googlemail.com' } })
    t.same(reset.json(), { success: true })
    let mail: string | undefined
    for (let i = 0; i < 50 && mail === undefined; i++) {
      const added = (await readdir(outbox).catch(() => [] as string[])).filter((f) => !before.has(f))
      if (added.length > 0) mail = await readFile(join(outbox, added[0]), 'utf8')
      else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.match(mail, /^To: ab@gmail\.com/m, 'sent to the stored address')
    t.notMatch(mail, /reset@googlemail/, 'never to the typed one')
  })

  t.test('table writes take urlencoded bodies, named like multipart fields', async (t) => {
    const form = (url: string, payload: string, headers: Record<string, string> = bearer(ann)) => app.inject({ method: 'POST', url: `${API}/table/posts/${url}`, headers: { ...FORM_TYPE, ...headers }, payload })
    const inserted = await form('insert', `values.owner=${ann.id}&values.title=Form+post&values.slug=form&values.views=7&values.published=true&returning=title,views,published`)
    t.equal(inserted.statusCode, 200)
    t.same(inserted.json(), [{ title: 'Form post', views: 7, published: true }], 'text converted to the field types')
    const brackets = await form('insert', `values[owner]=${ann.id}&values[title]=Brackets&values[slug]=brackets&returning[]=slug`)
    t.equal(brackets.statusCode, 400, 'an empty bracket is not a name')
    const bracketed = await form('insert', `values[owner]=${ann.id}&values[title]=Brackets&values[slug]=brackets&returning=slug&returning=title`)
    t.same(bracketed.json(), [{ slug: 'brackets', title: 'Brackets' }], 'values[name], and a repeated name is a list')
    const updated = await form('update', `where=${q("slug == 'form'")}&setValues.views=8&returning=views`)
    t.same(updated.json(), [{ views: 8 }])
    const id = (await app.inject({ method: 'GET', url: `${API}/table/posts/select?select=id&where=${q("slug == 'form'")}` })).json()[0].id
    const edited = await app.inject({ method: 'POST', url: `${API}/table/posts/edit/${id}?returning=title,published`, headers: { ...FORM_TYPE, ...bearer(ann) }, payload: 'title=Edited&published=false' })
    t.same(edited.json(), { title: 'Edited', published: false }, 'edit: bare fields')
    const selected = await app.inject({ method: 'POST', url: `${API}/table/posts/select`, headers: FORM_TYPE, payload: `where=${q("slug == 'form'")}&select=title&limit=1` })
    t.same(selected.json(), [{ title: 'Edited' }], 'select too')
    const deleted = await form('delete', `where=${q("slug == 'form' | slug == 'brackets'")}&returning=slug`)
    t.equal(deleted.statusCode, 200, 'delete (a 415 before)')
    t.same(deleted.json().map((r: { slug: string }) => r.slug).sort(), ['brackets', 'form'])
  })

  t.test('urlencoded bodies: rules, validation and bounds still hold', async (t) => {
    const form = (url: string, payload: string, headers: Record<string, string> = bearer(ann)) => app.inject({ method: 'POST', url: `${API}/table/posts/${url}`, headers: { ...FORM_TYPE, ...headers }, payload })
    const expect = async (res: Awaited<ReturnType<typeof form>>, status: number, message: RegExp | string, what: string) => {
      t.equal(res.statusCode, status, what)
      t.equal(res.json().code, status, `${what}: standard body`)
      t.match(res.json().message, message, what)
    }
    await expect(await form('insert', `values.owner=${ann.id}&values.title=x`, {}), 403, 'Forbidden', 'anonymous: the createRule')
    await expect(await form('insert', `values.owner=${bob.id}&values.title=x`), 403, 'Forbidden', 'another owner: the createRule')
    await expect(await form('insert', `values.owner=${ann.id}&values.title=x&values.nope=1`), 400, 'Validation Error', 'an unknown field')
    await expect(await form('insert', `values.owner=${ann.id}&values.title=x&values.views=seven`), 400, 'Validation Error', 'a value of the wrong type')
    await expect(await form('insert', `values.owner=${ann.id}&values.title=x&values.title=y`), 400, 'Validation Error', 'a field given twice')
    await expect(await form('insert', `values=1&values.title=x`), 400, /conflicts/, 'a name that is both a value and an object')
    await expect(await form('insert', `values.title=x&values=1`), 400, /conflicts/, 'the other way round')
    await expect(await form('insert', 'values.a.b.c.d=1'), 400, /at most 4/, 'nested deeper than 4')
    await expect(await form('insert', `${'v'.repeat(201)}=1`), 400, /Invalid form field name/, 'a name over 200 characters')
    for (const name of ['__proto__[admin]', 'values.__proto__.x', 'constructor', 'values[prototype]']) {
      await expect(await form('insert', `${q(name)}=1`), 400, /Invalid form field name/, name)
    }
    await expect(await form('insert', Array.from({ length: 201 }, (_, i) => `f${i}=1`).join('&')), 413, /More than 200 form fields/, 'more fields than limits.fields')
    await expect(await form('insert', `values.title=${'x'.repeat(1024 * 1024)}`), 413, /too large/, 'past limits.bodySize')
    await expect(await form('insert', ''), 400, 'Validation Error', 'an empty form is {}')
    await expect(await form('update', `where=${q('nope == 1')}&setValues.title=x`), 400, /Unknown column "nope"/, 'a bad where')
    await expect(await form('delete', 'returning=id'), 400, 'Validation Error', 'delete without where')
    const signUp = await app.inject({ method: 'POST', url: `${API}/table/users/auth/sign-up`, headers: FORM_TYPE, payload: 'username=x' })
    t.equal(signUp.statusCode, 415, 'auth routes stay JSON')
    t.equal(signUp.json().code, 415)
  })

  t.test('multipart: a file in a plain field of a file field, and bare fields on edit', async (t) => {
    const stored = async () => (await readdir(join(app.fastbase.options.dataDir, 'files', 'docs')).catch(() => [] as string[])).filter((f) => !f.endsWith('.meta.json') && !f.startsWith('.')).sort()
    const insert = await app.inject({ method: 'POST', url: `${API}/table/docs/insert`, ...await multipart([['values.title', 'Manual'], ['values.pages', '12'], ['values.cover', png('cover bytes'), 'Cover Photo.png'], ['returning', '*']]) })
    t.equal(insert.statusCode, 200)
    const [doc] = insert.json()
    t.match(doc, { title: 'Manual', pages: 12, cover: /^cover_photo_[0-9a-f]+\.png$/, attachment: null })
    const download = await app.inject({ method: 'GET', url: `${API}/files/docs/${doc.id}/${doc.cover}` })
    t.equal(download.body, 'cover bytes', 'the file is stored under the name written')
    t.same(await stored(), [doc.cover])

    const edit = await app.inject({ method: 'POST', url: `${API}/table/docs/edit/${doc.id}?returning=title,pages,cover,attachment`, ...await multipart([['title', 'Manual 2'], ['pages', '13'], ['attachment', png('attached'), 'notes.txt']]) })
    t.equal(edit.statusCode, 200, 'edit with bare fields and a bare file field')
    const edited = edit.json()
    t.match(edited, { title: 'Manual 2', pages: 13, cover: doc.cover, attachment: /^notes_[0-9a-f]+\.txt$/ })
    const replace = await app.inject({ method: 'POST', url: `${API}/table/docs/edit/${doc.id}?returning=cover`, ...await multipart([['cover', png('new cover'), 'new.png']]) })
    const newCover = replace.json().cover
    t.not(newCover, doc.cover)
    t.same(await stored(), [edited.attachment, newCover].sort(), 'the replaced cover is removed')
    const update = await app.inject({ method: 'POST', url: `${API}/table/docs/update`, ...await multipart([['where', `id == '${doc.id}'`], ['setValues.attachment', png('v3'), 'v3.txt'], ['returning', 'attachment']]) })
    t.match(update.json(), [{ attachment: /^v3_[0-9a-f]+\.txt$/ }], 'update: setValues.<file field>')
    const json = await app.inject({ method: 'POST', url: `${API}/table/docs/edit/${doc.id}?returning=title`, ...await multipart([['@filePayload', png('p'), 'p.png'], ['@jsonPayload', JSON.stringify({ title: 'Manual 3', cover: '@filePayload.0' })]]) })
    t.same(json.json(), { title: 'Manual 3' }, '@filePayload and @jsonPayload still work')
  })

  t.test('multipart: what stays refused, with nothing left on disk', async (t) => {
    const stored = async () => (await readdir(join(app.fastbase.options.dataDir, 'files', 'docs')).catch(() => [] as string[])).filter((f) => !f.endsWith('.meta.json') && !f.startsWith('.')).sort()
    const before = await stored()
    const send = async (url: string, parts: Array<[string, string | Blob, string?]>, headers: Record<string, string> = {}) => {
      const body = await multipart(parts)
      return await app.inject({ method: 'POST', url: `${API}/table/docs/${url}`, headers: { ...body.headers, ...headers }, payload: body.payload })
    }
    const expect = async (res: Awaited<ReturnType<typeof send>>, status: number, message: RegExp | string, what: string) => {
      t.equal(res.statusCode, status, what)
      t.equal(res.json().code, status, `${what}: standard body`)
      t.match(res.json().message, message, what)
    }
    await expect(await send('insert', [['values.title', 'x'], ['values.pages', png('not a file field'), 'a.png']]), 400, /Unexpected file part "values.pages"/, 'a file in a field that is not a file field')
    await expect(await send('insert', [['values.title', 'x'], ['cover', png('c'), 'a.png']]), 400, 'Validation Error', 'insert: a bare file field is not in values')
    await expect(await send('insert', [['values.title', 'blocked'], ['values.cover', png('c'), 'a.png']]), 403, 'Forbidden', 'the createRule refuses the row')
    await expect(await send('insert', [['values.title', 'x'], ['values.cover', png('a'), 'a.png'], ['values.cover', png('b'), 'b.png']]), 400, 'Validation Error', 'two files for one field')
    await expect(await send('insert', [['values.title', 'x'], ['values.__proto__', png('a'), 'a.png']]), 400, /Invalid form field name/, 'a prototype name')
    const id = (await app.inject({ method: 'GET', url: `${API}/table/docs/select?select=id&limit=1` })).json()[0].id
    await expect(await send(`edit/${id}`, [['title', 'x'], ['nope', 'y']]), 400, 'Validation Error', 'edit: an unknown bare field')
    await expect(await send(`edit/${id}`, [['title', 'blocked'], ['cover', png('c'), 'c.png']]), 404, /not found/i, 'edit: the updateRule refuses the new values')
    await expect(await send(`edit/${id}`, [['values.title', 'x']]), 400, 'Validation Error', 'edit: the body is bare fields, as in JSON')
    t.same(await stored(), before, 'nothing refused was kept')
  })

  t.test('or=REPLACE and edit?or=INSERT upsert on any unique key', async (t) => {
    const post = (url: string, payload: unknown, headers: Record<string, string> = bearer(ann)) => app.inject({ method: 'POST', url: `${API}/table/${url}`, headers, payload: payload as object })
    const bySlug = async (slug: string) => (await app.inject({ method: 'GET', url: `${API}/table/posts/select?select=id,title,views,created,owner&where=${q(`slug == '${slug}'`)}` })).json()
    const [first] = (await post('posts/insert', { values: { owner: ann.id, title: 'First', slug: 'up' }, returning: ['id', 'created'] })).json()
    const replaced = await post('posts/insert', { values: { owner: ann.id, title: 'Second', slug: 'up', views: 5 }, or: 'REPLACE', returning: ['id', 'title', 'views'] })
    t.equal(replaced.statusCode, 200)
    t.same(replaced.json(), [{ id: first.id, title: 'Second', views: 5 }], 'the row holding the slug is updated and keeps its id')
    t.same(await bySlug('up'), [{ id: first.id, title: 'Second', views: 5, created: first.created, owner: ann.id }], 'one row, created kept')

    const takeover = await post('posts/insert', { values: { owner: bob.id, title: 'Mine now', slug: 'up' }, or: 'REPLACE' }, bearer(bob))
    t.equal(takeover.statusCode, 403, 'the updateRule protects the row holding the key')
    t.same(takeover.json(), { code: 403, message: 'Forbidden', data: {} })
    const foreign = await post('posts/insert', { values: { owner: ann.id, title: 'As ann', slug: 'up' }, or: 'REPLACE' }, bearer(bob))
    t.equal(foreign.statusCode, 403, 'and the createRule the values')
    t.equal((await bySlug('up'))[0].title, 'Second', 'nothing changed')

    const fresh = await post('posts/insert', { values: { owner: ann.id, title: 'Fresh', slug: 'fresh' }, or: 'REPLACE', returning: 'slug' })
    t.same(fresh.json(), [{ slug: 'fresh' }], 'no conflict: an insert')
    const batch = await post('posts/insert', { values: [{ owner: ann.id, title: 'B1', slug: 'up' }, { owner: ann.id, title: 'B2', slug: 'batch' }], or: 'REPLACE', returning: ['title', 'slug'] })
    t.same(batch.json(), [{ title: 'B1', slug: 'up' }, { title: 'B2', slug: 'batch' }], 'a batch: each row on its own key')

    // edit/{id}?or=INSERT: the path id does not exist, but the slug does.
    const edit = await post(`posts/edit/not-there?or=INSERT&returning=id,title`, { owner: ann.id, title: 'Via edit', slug: 'up' })
    t.equal(edit.statusCode, 200)
    t.same(edit.json(), { id: first.id, title: 'Via edit' }, 'the row holding the slug is updated; the answer carries its id')
    t.equal((await app.inject({ method: 'GET', url: `${API}/table/posts/view/not-there` })).statusCode, 404, 'no record under the path id')
    const editTakeover = await post('posts/edit/not-there?or=INSERT', { owner: bob.id, title: 'Bob', slug: 'up' }, bearer(bob))
    t.equal(editTakeover.statusCode, 403, 'edit?or=INSERT: the updateRule holds too')
    const created = await post('posts/edit/new-one?or=INSERT&returning=id,slug', { owner: ann.id, title: 'New', slug: 'new-one' })
    t.same(created.json(), { id: 'new-one', slug: 'new-one' }, 'no conflict: created under the path id')

    // Two different rows met on two keys: refused, the same on both dialects.
    const fresh2 = (await bySlug('fresh'))[0]
    const twoRows = await post('posts/insert', { values: { id: fresh2.id, owner: ann.id, title: 'Both', slug: 'up' }, or: 'REPLACE' }, ADMIN)
    t.equal(twoRows.statusCode, 400)
    t.same(twoRows.json(), { code: 400, message: 'Constraint violation', data: { slug: { code: 'unique', message: 'A record with this value already exists.' } } })
    t.equal((await bySlug('fresh'))[0].title, 'Fresh', 'nothing changed')
    const sameRow = await post('posts/insert', { values: { id: first.id, owner: ann.id, title: 'Same row', slug: 'up' }, or: 'REPLACE', returning: 'title' }, ADMIN)
    t.same(sameRow.json(), [{ title: 'Same row' }], 'both keys on one row: that row')

    // A unique index over two columns is a key too.
    const tag = (color: string, headers = bearer(ann)) => post('tags/insert', { values: { owner: ann.id, name: 'red', color }, or: 'REPLACE', returning: ['id', 'color'] }, headers)
    const [t1] = (await tag('#f00')).json()
    const t2 = await tag('#e00')
    t.same(t2.json(), [{ id: t1.id, color: '#e00' }], 'upsert on (owner, name)')
    const tags = (await app.inject({ method: 'GET', url: `${API}/table/tags/list?select=color` })).json()
    t.same(tags, { items: [{ color: '#e00' }], total: 1 })

    const noKey = await post('posts/insert', { values: { owner: ann.id, title: 'no key' }, or: 'REPLACE' })
    t.equal(noKey.statusCode, 200, 'a generated id is a key too: a plain insert')
  })

  t.test('table write bodies still refuse unknown keys, top-level ones included', async (t) => {
    const cases: Array<[string, object, string]> = [
      ['insert', { values: { owner: ann.id, title: 'x' }, retuning: '*' }, 'retuning'],
      ['insert', { values: { owner: ann.id, title: 'x' }, expr: { title: "'a' || 'b'" } }, 'expr'],
      ['update', { where: 'true', setValues: { title: 'x' }, limit: 1 }, 'limit'],
      ['delete', { where: 'true', returnig: 'id' }, 'returnig']
    ]
    for (const [op, payload, key] of cases) {
      const res = await app.inject({ method: 'POST', url: `${API}/table/posts/${op}`, headers: bearer(ann), payload })
      t.equal(res.statusCode, 400, `${op}: ${key}`)
      t.same(res.json(), { code: 400, message: 'Validation Error', data: { _errors: [], [key]: { _errors: ['Unknown field'] } } })
    }
    const form = await app.inject({ method: 'POST', url: `${API}/table/posts/insert`, headers: { ...FORM_TYPE, ...bearer(ann) }, payload: `values.owner=${ann.id}&values.title=x&submit=Save` })
    t.same(form.json(), { code: 400, message: 'Validation Error', data: { _errors: [], submit: { _errors: ['Unknown field'] } } }, 'a form too')
    t.equal((await app.inject({ method: 'GET', url: `${API}/table/posts/select?where=${q("title == 'x'")}` })).json().length, 0, 'nothing was written')
  })

  t.test('health has a timestamp in milliseconds, as teenybase answers', async (t) => {
    const res = await app.inject({ method: 'GET', url: `${API}/health` })
    t.equal(res.statusCode, 200)
    const { timestamp } = res.json()
    t.ok(Number.isInteger(timestamp) && Math.abs(timestamp - Date.now()) < 60_000, String(timestamp))
  })
})

t.test('teenybaseEmail is teenybase\'s normalised form of an address', async (t) => {
  t.equal(teenybaseEmail('adm.in+3.hello123@gmail.com'), 'admin@gmail.com')
  t.equal(teenybaseEmail(' ADMI.N+23@gmaIL.cOm '), 'admin@gmail.com')
  t.equal(teenybaseEmail('a.b+c@googlemail.com'), 'ab@gmail.com')
  t.equal(teenybaseEmail('a.b+c@live.com'), 'ab@live.com')
  t.equal(teenybaseEmail('John.Otander+x@outlook.com'), 'john.otander@outlook.com')
  t.equal(teenybaseEmail('a.b+c@yahoo.com'), 'a.b@yahoo.com')
  t.equal(teenybaseEmail('a.b+c@hotmail.com'), 'a.b@hotmail.com')
  t.equal(teenybaseEmail('a.b+c@example.com'), 'a.b+c@example.com', 'other domains are only trimmed and lower-cased')
  for (const notAddress of ['ann', '@gmail.com', 'a@', 'a@b@gmail.com', '']) t.equal(teenybaseEmail(notAddress), undefined, JSON.stringify(notAddress))
})
