// Attacks on both dialects (decision D38): caller text that could run unbounded, answers too big to
// build, values and rows hidden by noSelect and rules, malformed bodies, uploads before the rule.
// Every answer must be a 4xx or 2xx with the standard body; never a 5xx, a hang or a leak.
import t, { type Test } from 'tap'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { request as httpRequest } from 'node:http'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../helper.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const ADMIN = { authorization: `Bearer ${adminToken}` }

const config: DatabaseSettings = {
  jwtSecret: 'security-test-secret',
  appUrl: 'http://localhost:3000',
  limits: { columns: 10, orderTerms: 4, cells: 60, expressionLength: 300, files: 2, fields: 20, writeRows: 40, bodySize: 64 * 1024 },
  tables: [
    {
      name: 'notes',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'views', type: 'integer', sqlType: 'integer' },
        { name: 'pub', type: 'bool', sqlType: 'boolean' },
        { name: 'meta', type: 'json', sqlType: 'json' },
        { name: 'secret', type: 'text', sqlType: 'text', noSelect: true }
      ],
      extensions: [{ name: 'rules', listRule: 'pub == true', viewRule: 'pub == true', createRule: 'true', updateRule: 'pub == true', deleteRule: 'pub == true' }]
    },
    {
      name: 'guarded',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'views', type: 'integer', sqlType: 'integer' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'new.views >= 0', deleteRule: null }]
    },
    {
      name: 'members',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'email', type: 'email', sqlType: 'text', unique: true, usage: 'auth_email' },
        { name: 'password', type: 'password', sqlType: 'text', noSelect: true, usage: 'auth_password' }
      ],
      extensions: [{ name: 'auth', jwtSecret: 'members' }, { name: 'rules', listRule: null, viewRule: null, createRule: 'true', updateRule: null, deleteRule: null }]
    },
    {
      name: 'people',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'email', type: 'email', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    },
    {
      name: 'docs',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'file', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'auth.uid != null', updateRule: 'auth.uid != null', deleteRule: null }]
    }
  ],
  actions: [
    { name: 'echo', params: { n: { type: 'integer', optional: true } }, steps: [{ type: 'SELECT', table: 'notes', select: 'id', limit: 1 }] },
    { name: 'bump', steps: [{ type: 'UPDATE', table: 'guarded', where: 'true', set: { views: 'views + 1' }, returning: 'views' }] }
  ]
}

/** Every answer here must be a well-formed fastbase body and not a 5xx. */
function wellFormed (t: Test, res: LightMyRequestResponse, label: string): void {
  t.ok(res.statusCode < 500, `${label}: not a 5xx (${res.statusCode} ${res.body.slice(0, 120)})`)
  if (res.statusCode >= 400) t.match(res.json(), { code: res.statusCode, message: String }, `${label}: standard error body`)
}

async function seed (app: FastifyInstance): Promise<void> {
  const res = await app.inject({
    method: 'POST', url: '/api/v1/table/notes/insert', headers: ADMIN,
    payload: {
      values: [
        { title: '{"a":"y"}', views: 1, pub: true, meta: { a: 1 }, secret: 'HUNTER2' },
        { title: 'Alice private note', views: 0, pub: false, meta: { a: 2 }, secret: 'alice-secret' }
      ]
    }
  })
  if (res.statusCode !== 200) throw new Error(res.body)
}

forEachDialect(t, 'caller text is bounded', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await seed(app)
  const select = (query: Record<string, string>) => app.inject({ method: 'GET', url: '/api/v1/table/notes/select', query })

  // A pattern that backtracks exponentially as a regular expression; both sides literal, so it is folded.
  const redos = await select({ where: `'${'a'.repeat(60)}' ~ '%a%a%a%a%a%a%a%a%a%a%b'` })
  t.equal(redos.statusCode, 200)
  t.same(redos.json(), [], 'decided at once, matches nothing')
  t.same((await select({ where: "'Hello' ~ 'h_l%' & 'x' !~ 'y%'", select: 'id' })).json(), [{ id: 1 }], 'folded LIKE keeps its meaning')
  t.same((await select({ where: "views ~ '1%' & title ~ title", select: 'id' })).json(), [{ id: 1 }], 'a LIKE pattern is text, whatever the column (numbers, a column as pattern)')

  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['expression too long', { where: `title == '${'x'.repeat(400)}'` }, /longer than 300|less or equal to 300/],
    ['nested too deep', { where: '!'.repeat(250) + 'pub' }, /nested deeper than 200/],
    ['too many columns', { select: Array.from({ length: 11 }, (_, i) => `id as c${i}`).join(', ') }, /more than 10 columns/],
    ['too many order terms', { order: 'id, title, views, pub, meta' }, /more than 4 terms/],
    ['too many group terms', { group: 'id, title, views, pub, meta' }, /more than 4 terms/],
    ['aggregate in where', { where: 'count(*) > 0' }, /aggregate: only allowed in a select list/],
    ['number column vs text', { where: "views == 'abc'" }, /must be a number/],
    ['replace that multiplies text', { select: "replace(replace(title, 'a', 'aaaaaaaa'), 'a', 'aaaaaaaa') as t" }, /grow more than 16 times/],
    ['replace with a column to put in', { select: "replace(title, 'a', title) as t" }, /constant texts/],
    ['a concat of many copies', { select: `concat(${Array(17).fill('title').join(', ')}) as t` }, /grow more than 16 times/]
  ]
  for (const [label, query, message] of cases) {
    const res = await select(query)
    t.equal(res.statusCode, 400, label)
    t.match(res.json().message + JSON.stringify(res.json().data ?? {}), message, `${label}: says why`)
  }
  const deleteAggregate = await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', payload: { where: 'sum(views) > 0' } })
  t.equal(deleteAggregate.statusCode, 400, 'aggregate in a delete where')

  // Row-dependent errors the databases raise for caller expressions are 400 on both, never 500.
  for (const where of ['substring(title, 1, 0 - 1) == \'x\'', 'datetime(9999999999999) == \'x\'', 'views * 9223372036854775807 > 1', '1 / (views - views) == 1']) {
    wellFormed(t, await select({ where }), where)
  }
  const fine = await select({ select: "replace(title, ' ', '%20') as t, concat(title, ' ', title) as c, title || '!' as e", where: 'id == 1' })
  t.same(fine.json(), [{ t: '{"a":"y"}', c: '{"a":"y"} {"a":"y"}', e: '{"a":"y"}!' }], 'text functions within the bound work')
  const nul = await app.inject({ method: 'GET', url: '/api/v1/table/docs/view/%00' })
  t.equal(nul.statusCode, 404, 'an id with a NUL byte is simply not found')
})

forEachDialect(t, 'answers are bounded: rows x columns', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const rows = Array.from({ length: 30 }, (_, i) => ({ title: `n${i}`, views: i, pub: true }))
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: ADMIN, payload: { values: rows } })).statusCode, 200)
  const page = await app.inject({ method: 'GET', url: '/api/v1/table/notes/select', query: { select: 'id, title, views', limit: '1000' } })
  t.equal(page.json().length, 20, '3 columns: a page holds 60 / 3 = 20 rows')
  const list = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { select: 'id' } })
  t.equal(list.json().items.length, 30, 'one column: every row fits')
  t.equal(list.json().total, 30)

  const insert = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: rows, returning: 'id, title, views' } })
  t.equal(insert.statusCode, 400, 'insert returning 30 x 3 values is refused')
  t.match(insert.json().message, /more than the 60 values/)
  const update = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: 'true', setValues: { title: 'x' }, returning: 'id, title, views' } })
  t.equal(update.statusCode, 400, 'update returning 30 x 3 values is refused')
  const remove = await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', headers: ADMIN, payload: { where: 'true', returning: 'id, title, views' } })
  t.equal(remove.statusCode, 400, 'delete returning 30 x 3 values is refused')
  const after = await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { select: 'id', where: "title == 'x'" } })
  t.equal(after.json().total, 0, 'the refused update changed nothing')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { select: 'id' } })).json().total, 30, '...and so did the refused delete: nothing was inserted either')
  const many = await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: Array.from({ length: 41 }, () => ({ title: 'x' })) } })
  t.equal(many.statusCode, 400, 'an insert of more than limits.writeRows rows')
  t.match(JSON.stringify(many.json()), /values/)
  const small = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: 'views < 10', setValues: { title: 'y' }, returning: 'id' } })
  t.equal(small.json().length, 10, 'a write within the bound answers as usual')
})

forEachDialect(t, 'hidden values and rows stay hidden', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await seed(app)

  for (const setValues of [{ views: 1 }, { views: 1, secret: 'x' }]) {
    const probe = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: "new.secret ~ 'HUNT%'", setValues, returning: 'id' } })
    t.equal(probe.statusCode, 400, `new.secret is no way in (${Object.keys(setValues).join(', ')})`)
    t.match(probe.json().message, /Unknown column "secret"/)
  }
  const admin = await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', headers: ADMIN, payload: { where: "new.secret ~ 'HUNT%'", setValues: { views: 1 }, returning: 'id' } })
  t.same(admin.json(), [{ id: 1 }], 'admins may read hidden columns, new.* included')

  // The caller's where runs only on rows the rule lets through: a malformed-JSON error on the hidden
  // row would otherwise answer differently depending on whether the hidden row matches.
  const oracle = "title ~ 'Alice private%' & (title ->> 'a') == 'x'"
  const probes = async () => [
    await app.inject({ method: 'GET', url: '/api/v1/table/notes/select', query: { where: oracle } }),
    await app.inject({ method: 'GET', url: '/api/v1/table/notes/list', query: { where: oracle } }),
    await app.inject({ method: 'GET', url: '/api/v1/table/notes/view/2', query: { where: oracle } }),
    await app.inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: oracle, setValues: { views: 5 }, returning: 'id' } }),
    await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', payload: { where: oracle, returning: 'id' } })
  ].map((r) => `${r.statusCode} ${r.body}`)
  const withHidden = await probes()
  t.same(withHidden.slice(0, 2), ['200 []', '200 {"items":[],"total":0}'], 'select and list: nothing, no error')
  t.equal(withHidden[2].slice(0, 3), '404', 'view: not found')
  await app.inject({ method: 'POST', url: '/api/v1/table/notes/delete', headers: ADMIN, payload: { where: 'id == 2' } })
  t.same(await probes(), withHidden, 'the same answers once the hidden row is gone')
  const secret = await app.inject({ method: 'GET', url: '/api/v1/table/notes/select', headers: ADMIN, query: { select: 'views' } })
  t.same(secret.json(), [{ views: 1 }], 'the hidden row was never updated')

  // A set expression the update rule reads as new.<field> would run inside the rule, on hidden rows.
  const set = await app.inject({ method: 'POST', url: '/api/v1/table/guarded/update', payload: { where: 'true', set: { views: 'views + 1' } } })
  t.equal(set.statusCode, 400)
  t.match(set.json().message, /update rule checks new\.views.*setValues/)
  const setValues = await app.inject({ method: 'POST', url: '/api/v1/table/guarded/update', payload: { where: 'true', setValues: { views: 3 } } })
  t.equal(setValues.statusCode, 200, 'the same change as a value works')
  const step = await app.inject({ method: 'POST', url: '/api/v1/action/bump', payload: {} })
  t.equal(step.statusCode, 200, 'an action step (the developer\'s own set) may still use it')
})

forEachDialect(t, 'malformed bodies are 4xx with the standard body', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const inject = app.inject.bind(app)
  for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
    const insert = await inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { [key]: 1 } } })
    t.equal(insert.statusCode, 400, `values.${key}`)
    t.same(insert.json().data, { _errors: [], [key]: { _errors: ['Unknown field'] } })
    wellFormed(t, await inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: 'true', setValues: { [key]: 1 } } }), `setValues.${key}`)
    wellFormed(t, await inject({ method: 'POST', url: '/api/v1/table/notes/update', payload: { where: 'true', set: { [key]: '1' } } }), `set.${key}`)
    const action = await inject({ method: 'POST', url: '/api/v1/action/echo', payload: { [key]: 1 } })
    t.equal(action.statusCode, 400, `action param ${key}`)
  }
  const rootList = await inject({ method: 'POST', url: '/api/v1/table/notes/insert', payload: { values: { _errors: 1 } } })
  t.same(rootList.json().data, { _errors: ['Unknown field'] }, 'a key named _errors cannot turn the root list into an object')
  const deep = '{"values":{"meta":' + '['.repeat(5000) + ']'.repeat(5000) + '}}'
  const deepJson = await inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { 'content-type': 'application/json' }, payload: deep })
  t.equal(deepJson.statusCode, 400, 'JSON nested 5000 levels')
  t.match(JSON.stringify(deepJson.json()), /nested at most 64 levels/)
  const email = await inject({ method: 'POST', url: '/api/v1/table/people/insert', payload: { values: { email: 'a@' + 'a.'.repeat(30_000) + '@' } } })
  t.equal(email.statusCode, 400, 'a 60 kB email that makes a naive pattern backtrack quadratically')
  const members = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `m${i}@example.com`, password: 'a long enough password' }))
  const batch = await inject({ method: 'POST', url: '/api/v1/table/members/insert', payload: { values: members(3) } })
  t.equal(batch.statusCode, 400, 'three passwords to hash in one anonymous request')
  t.match(batch.json().message, /At most one record with a password per request/)
  t.equal((await inject({ method: 'POST', url: '/api/v1/table/members/insert', payload: { values: members(1) } })).statusCode, 200, 'one is fine')
  t.equal((await inject({ method: 'POST', url: '/api/v1/table/members/insert', headers: ADMIN, payload: { values: members(3).map((m) => ({ ...m, email: `admin-${m.email}` })) } })).statusCode, 200, 'admins may create several')
  const huge = await inject({ method: 'POST', url: '/api/v1/table/notes/select', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ where: 'x'.repeat(100 * 1024) }) })
  t.equal(huge.statusCode, 413, 'a body over limits.bodySize')
})

/** Files in the local storage directory of `app`, temporary ones included. */
async function storedFiles (app: FastifyInstance): Promise<string[]> {
  const dir = join(app.fastbase.options.dataDir, 'files', 'docs')
  return await readdir(dir).catch(() => [])
}

/** A raw multipart request over real HTTP; resolves with status and body, or 'no answer' after `ms`. */
async function rawPost (app: FastifyInstance, path: string, headers: Record<string, string>, body: string, end = true, ms = 5000): Promise<string> {
  const address = app.server.address() as { port: number }
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: address.port, path, method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (c: string) => { text += c }).on('end', () => resolve(`${res.statusCode} ${text}`))
    })
    req.on('error', reject)
    const timer = setTimeout(() => { req.destroy(); resolve('no answer') }, ms)
    req.on('close', () => clearTimeout(timer))
    req.write(body)
    if (end) req.end()
  })
}

forEachDialect(t, 'uploads: the rule first, broken bodies answered, nothing left behind', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const B = 'fastbase-boundary'
  const mp = (extra: Record<string, string> = {}) => ({ 'content-type': `multipart/form-data; boundary=${B}`, ...extra })
  const filePart = (content: string) => `--${B}\r\nContent-Disposition: form-data; name="@filePayload"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n`
  const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`

  const anonymous = await rawPost(app, '/api/v1/table/docs/insert', mp(), filePart('x'.repeat(100_000)) + field('values.file', '@filePayload') + `--${B}--\r\n`)
  t.match(anonymous, /^403 /, 'anonymous upload: 403 (createRule needs auth.uid)')
  t.same(await storedFiles(app), [], 'not a byte stored')

  const cases: Array<[string, Record<string, string>, string, RegExp]> = [
    ['no boundary', { 'content-type': 'multipart/form-data' }, 'abc', /^400 .*Malformed multipart body/],
    ['a part without a name', mp(), `--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${B}--\r\n`, /^400 /],
    ['a 5,000-level field name', mp(), field(Array(5000).fill('a').join('.'), 'x') + `--${B}--\r\n`, /^400 /],
    ['a prototype field name', mp(), field('values.__proto__', 'x') + `--${B}--\r\n`, /^400 /],
    ['more file parts than limits.files', mp(), filePart('1') + filePart('2') + filePart('3') + `--${B}--\r\n`, /^(400|413) /],
    ['fields over limits.bodySize in all', mp(), Array.from({ length: 5 }, (_, i) => field(`values.t${i}`, 'x'.repeat(20_000))).join('') + `--${B}--\r\n`, /^413 /],
    ['a body ending inside a file part', mp(), filePart('hello').slice(0, -2), /^400 .*ends inside a file part|^400 .*Malformed/]
  ]
  for (const [label, headers, body, expected] of cases) {
    t.match(await rawPost(app, '/api/v1/table/docs/insert', { ...headers, ...ADMIN }, body), expected, label)
  }
  // Let the failed requests' cleanup (after the reply) finish.
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(await storedFiles(app), [], 'no file and no temporary file left by any of them')

  const ok = await rawPost(app, '/api/v1/table/docs/insert', mp(ADMIN), filePart('hello') + field('values.title', 't') + field('values.file', '@filePayload') + field('returning', 'file') + `--${B}--\r\n`)
  t.match(ok, /^200 \[\{"file":"a[^"]*\.txt"\}\]/, 'a good upload still works')
  t.equal((await storedFiles(app)).filter((f) => !f.endsWith('.meta.json')).length, 1, 'one file stored')
})

forEachDialect(t, 'tokens verify only with the algorithm fastbase signs with', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/members/auth/sign-up', payload: { email: 'ada@example.com', password: 'a long enough password' } })
  t.equal(signUp.statusCode, 200, 'sign-up')
  const token = signUp.json().token as string
  const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
  t.equal(header.alg, 'HS256')
  const asUser = (bearer: string) => app.inject({ method: 'GET', url: '/api/v1/table/notes/select', headers: { authorization: `Bearer ${bearer}` } })
  t.equal((await asUser(token)).statusCode, 200, 'the real token works')
  const key = config.jwtSecret + 'members'
  const { createSigner } = await import('fast-jwt')
  const hs512 = createSigner({ key, algorithm: 'HS512' })({ ...payload })
  const forged = await asUser(hs512)
  t.equal(forged.statusCode, 401, 'the same claims re-signed with HS512 and the right key')
  t.same(forged.json(), { code: 401, message: 'Invalid or expired token', data: {} })
  const none = [Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url'), token.split('.')[1], ''].join('.')
  t.equal((await asUser(none)).statusCode, 401, 'alg none')
})

forEachDialect(t, 'jwtAlgorithm picks the one algorithm', async (t, dialect) => {
  const app = await buildApp(t, { ...config, jwtAlgorithm: 'HS512' }, { dialect })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/members/auth/sign-up', payload: { email: 'bo@example.com', password: 'a long enough password' } })
  const { token, refresh_token: refresh } = signUp.json() as { token: string, refresh_token: string }
  t.equal(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).alg, 'HS512')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/table/notes/select', headers: { authorization: `Bearer ${token}` } })).statusCode, 200, 'HS512 tokens verify')
  const refreshed = await app.inject({ method: 'POST', url: '/api/v1/table/members/auth/refresh-token', headers: { authorization: `Bearer ${token}` }, payload: { refresh_token: refresh } })
  t.equal(refreshed.statusCode, 200, 'refresh (which accepts an expired token) keeps the pin and works')
  const { createSigner } = await import('fast-jwt')
  const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
  const hs256 = createSigner({ key: config.jwtSecret + 'members', algorithm: 'HS256' })(payload)
  const refused = await app.inject({ method: 'POST', url: '/api/v1/table/members/auth/refresh-token', headers: { authorization: `Bearer ${hs256}` }, payload: { refresh_token: refreshed.json().refresh_token } })
  t.equal(refused.statusCode, 401, 'an HS256 token is refused, on the expired-token path too')
})
