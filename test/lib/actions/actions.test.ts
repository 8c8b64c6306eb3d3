// Named actions on both dialects: SQL mode and steps mode, the requireAuth -> guard -> params order,
// strict params, transactions (rollback, concurrency), noSelect hiding, server-side calls, OpenAPI.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastbase from '../../../index.js'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'

const config: DatabaseSettings = {
  jwtSecret: 'test-secret',
  appUrl: 'http://localhost',
  tables: [
    {
      name: 'counters',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'name', type: 'text', sqlType: 'text', unique: true },
        { name: 'value', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } },
        { name: 'secret', type: 'text', sqlType: 'text', noSelect: true },
        { name: 'locked', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 }, noUpdate: true }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: null, updateRule: 'auth.uid != null', deleteRule: null }]
    },
    {
      name: 'logs',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'counter_id', type: 'integer', sqlType: 'integer', notNull: true, foreignKey: { table: 'counters', column: 'id' } },
        { name: 'note', type: 'text', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }
  ],
  actions: [
    {
      name: 'inc_sql',
      description: 'Add to a counter',
      params: { id: 'integer', by: { type: 'integer', optional: true, default: 1, description: 'How much' } },
      sql: { type: 'UPDATE', table: 'counters', set: { value: { q: 'value + {:by}' } }, where: { q: 'id = {:id}' }, returning: ['id', 'value'] }
    },
    {
      name: 'log_and_bump',
      params: { id: 'integer' },
      sql: [
        { type: 'INSERT', table: 'logs', values: { counter_id: '{:id}', note: 'bumped {:id}' }, returning: ['note'] },
        { type: 'UPDATE', table: 'counters', set: { value: { q: 'value + 1' } }, where: { q: 'id = {:id}' }, returning: ['value'] }
      ]
    },
    {
      name: 'fails_second',
      params: { id: 'integer' },
      sql: [
        { type: 'UPDATE', table: 'counters', set: { value: { l: 999 } }, where: { q: 'id = {:id}' } },
        { type: 'INSERT', table: 'logs', values: { counter_id: { l: 424242 }, note: 'orphan' } }
      ]
    },
    {
      name: 'read_sql',
      params: { name: 'string' },
      sql: [
        { type: 'SELECT', table: 'counters', where: { q: 'name = {:name}' } },
        { type: 'SELECT', table: 'counters', selects: [{ q: 'count(*)', as: 'n' }, { q: 'sum(value)', as: 'total' }] },
        { type: 'UPDATE', table: 'counters', set: { secret: { q: 'secret' } }, where: { q: 'name = {:name}' }, returning: ['*'] }
      ]
    },
    {
      name: 'note_steps',
      params: { id: 'integer', note: 'string', n: { type: 'integer', optional: true, default: 10 } },
      steps: [
        { type: 'INSERT', table: 'logs', expr: { counter_id: 'params.id', note: 'params.note' } },
        { type: 'SELECT', table: 'logs', where: 'counter_id == params.id', select: 'note', order: '-id', limit: 'params.n' }
      ]
    },
    { name: 'bump_ruled', params: { id: 'integer' }, steps: { type: 'UPDATE', table: 'counters', where: 'id == params.id', set: { value: 'value + 1' }, returning: 'value' } },
    { name: 'bump_unruled', applyTableRules: false, params: { id: 'integer' }, steps: { type: 'UPDATE', table: 'counters', where: 'id == params.id', set: { value: 'value + 1', locked: '1' }, returning: ['value', 'locked'] } },
    { name: 'signed_in', requireAuth: true, guard: 'params.id > 0', params: { id: 'integer' }, sql: { type: 'SELECT', table: 'counters', selects: ['id'], where: { q: 'id = {:id}' } } },
    { name: 'guarded', guard: 'auth.uid != null', sql: { type: 'SELECT', table: 'counters', selects: ['id'], limit: 1 } },
    { name: 'db_guard_ok', guard: 'unixepoch() > 1000', sql: { type: 'SELECT', table: 'counters', selects: ['id'], orderBy: 'id', limit: 1 } },
    { name: 'db_guard_no', guard: 'unixepoch() < 1000', sql: { type: 'UPDATE', table: 'counters', set: { value: { l: -1 } } } },
    { name: 'typed', params: { i: 'integer', n: 'number', s: 'string', b: 'boolean', o: { type: 'string', optional: true } }, sql: { type: 'SELECT', table: 'counters', selects: [{ q: '{:i}', as: 'i' }], limit: 1 } }
  ]
}

const ADMIN = { authorization: `Bearer ${adminToken}` }

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, jwt: {}, meta: {}, record: {} }
  })
}

forEachDialect(t, 'actions', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const run = (name: string, payload: unknown = {}, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: `/api/v1/action/${name}`, payload: payload as object, headers })
  const seeded = await app.inject({ method: 'POST', url: '/api/v1/table/counters/insert', headers: ADMIN, payload: { values: [{ id: 1, name: 'a', secret: 's1' }, { id: 2, name: 'b', secret: 's2' }] } })
  t.equal(seeded.statusCode, 200)

  t.test('SQL mode: params bound, defaults, returning', async (t) => {
    t.same((await run('inc_sql', { id: 1 })).json(), [[{ id: 1, value: 1 }]], 'default by = 1')
    t.same((await run('inc_sql', { id: 1, by: 5 })).json(), [[{ id: 1, value: 6 }]])
    t.same((await run('log_and_bump', { id: 2 })).json(), [[{ note: 'bumped 2' }], [{ value: 1 }]], 'one array per query, in order')
    const read = (await run('read_sql', { name: 'a' })).json()
    t.same(read[0], [{ id: 1, name: 'a', value: 6, locked: 0 }], 'a SELECT without selects hides noSelect fields from non-admins')
    t.same(read[1], [{ n: 2, total: 7 }], 'aggregates are numbers on both dialects')
    t.notOk('secret' in read[2][0], 'returning * hides noSelect fields too')
    const asAdmin = (await run('read_sql', { name: 'a' }, ADMIN)).json()
    t.equal(asAdmin[0][0].secret, 's1', 'admins see them')
    const injection = await run('read_sql', { name: '\' OR 1=1 --' })
    t.same(injection.json()[0], [], 'a param is a value, never SQL')
  })

  t.test('a failing query rolls back the whole action', async (t) => {
    const res = await run('fails_second', { id: 1 })
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 400, data: { counter_id: { code: 'foreign_key' } } })
    const after = await app.inject({ method: 'GET', url: '/api/v1/table/counters/view/1', headers: ADMIN })
    t.equal(after.json().value, 6, 'the first UPDATE was rolled back')
  })

  t.test('steps mode: expressions, params in limit, later steps see earlier writes', async (t) => {
    const res = await run('note_steps', { id: 1, note: 'first' })
    t.same(res.json(), [[], [{ note: 'first' }]], 'INSERT without returning gives []')
    await run('note_steps', { id: 1, note: 'second' })
    t.same((await run('note_steps', { id: 1, note: 'third', n: 2 })).json()[1], [{ note: 'third' }, { note: 'second' }], 'limit from params')
  })

  t.test('steps mode applies table rules unless applyTableRules is false', async (t) => {
    t.same((await run('bump_ruled', { id: 2 })).json(), [[]], 'anonymous: the updateRule filters the row')
    t.same((await run('bump_ruled', { id: 2 }, { 'x-test-uid': 'u1' })).json(), [[{ value: 2 }]], 'a signed-in user passes it')
    t.same((await run('bump_unruled', { id: 2 })).json(), [[{ value: 3, locked: 1 }]], 'rules and noUpdate skipped')
  })

  t.test('requireAuth -> guard -> params', async (t) => {
    t.same((await run('signed_in', { id: 'not even a number' })).json(), { code: 401, message: 'Authentication required', data: {} }, 'requireAuth first')
    t.same((await run('signed_in', { id: -1 }, { 'x-test-uid': 'u1' })).json(), { code: 403, message: 'Forbidden', data: {} }, 'then the guard')
    t.same((await run('signed_in', { id: 1, extra: true }, { 'x-test-uid': 'u1' })).json(), { code: 400, message: 'Validation Error', data: { _errors: [], extra: { _errors: ['Unknown field'] } } }, 'then params')
    t.same((await run('signed_in', { id: 1 }, { 'x-test-uid': 'u1' })).json(), [[{ id: 1 }]])
    t.same((await run('guarded')).json(), { code: 403, message: 'Forbidden', data: {} })
    t.same((await run('guarded', {}, ADMIN)).json(), [[{ id: 1 }]], 'admins have a uid (as in teenybase)')
  })

  t.test('guards that need the database run inside the transaction and add no result', async (t) => {
    t.same((await run('db_guard_ok')).json(), [[{ id: 1 }]])
    t.same((await run('db_guard_no')).json(), { code: 403, message: 'Forbidden', data: {} })
    const counter = await app.inject({ method: 'GET', url: '/api/v1/table/counters/view/1', headers: ADMIN })
    t.not(counter.json().value, -1, 'nothing ran')
  })

  t.test('strict params: types, no coercion, unknown keys', async (t) => {
    const ok = { i: 1, n: 1.5, s: 'x', b: true }
    t.same((await run('typed', ok)).json(), [[{ i: 1 }]])
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ ...ok, i: 1.5 }, { i: { _errors: ['Expected integer'] } }],
      [{ ...ok, i: '1' }, { i: { _errors: ['Expected integer'] } }],
      [{ ...ok, n: '1.5' }, { n: { _errors: ['Expected number'] } }],
      [{ ...ok, b: 'true' }, { b: { _errors: ['Expected boolean'] } }],
      [{ ...ok, s: 5 }, { s: { _errors: ['Expected string'] } }],
      [{ i: 1, n: 1, b: false }, { s: { _errors: ['s is required'] } }],
      [{ ...ok, z: 1 }, { z: { _errors: ['Unknown field'] } }]
    ]
    for (const [payload, data] of cases) {
      t.same((await run('typed', payload)).json(), { code: 400, message: 'Validation Error', data: { _errors: [], ...data } }, JSON.stringify(payload))
    }
    t.same((await run('typed', [1, 2])).json(), { code: 400, message: 'Invalid request body: expected a JSON object of parameters', data: {} })
  })

  t.test('unknown action', async (t) => {
    t.same((await run('nope')).json(), { code: 404, message: 'Action not found - nope', data: {} })
  })

  t.test('20 concurrent increments are all counted', async (t) => {
    const before = (await app.inject({ method: 'GET', url: '/api/v1/table/counters/view/2', headers: ADMIN })).json().value
    const results = await Promise.all(Array.from({ length: 20 }, () => run('inc_sql', { id: 2 })))
    t.ok(results.every((r) => r.statusCode === 200), 'all succeed')
    const values = results.map((r) => r.json()[0][0].value).sort((a, b) => a - b)
    t.same(values, Array.from({ length: 20 }, (_, i) => before + i + 1), 'each saw its own increment')
  })

  t.test('runAction from server code', async (t) => {
    const result = await app.fastbase.runAction('inc_sql', { id: 1, by: 10 })
    t.match(result, [[{ id: 1 }]])
    const fail = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e)
    t.match(await fail(app.fastbase.runAction('signed_in', { id: 1 })), { statusCode: 401 })
    t.same(await app.fastbase.runAction('signed_in', { id: 1 }, { auth: { ...ANONYMOUS, uid: 'u9', jwt: {}, meta: {}, record: {} } }), [[{ id: 1 }]])
    t.match(await fail(app.fastbase.runAction('typed', { i: 'x' })), { statusCode: 400, data: { i: { _errors: ['Expected integer'] } } })
    t.match(await fail(app.fastbase.runAction('missing')), { statusCode: 404, message: 'Action not found - missing' })
  })

  t.test('OpenAPI: one operation per action with its params', async (t) => {
    const doc = (await app.inject('/api/v1/doc')).json()
    const op = doc.paths['/api/v1/action/inc_sql'].post
    t.equal(op.summary, 'Add to a counter')
    const schema = op.requestBody.content['application/json'].schema
    t.match(schema, { properties: { id: { type: 'integer' }, by: { type: 'integer', description: 'How much' } }, required: ['id'] })
    t.ok(doc.paths['/api/v1/action/note_steps'])
  })
})

forEachDialect(t, 'a SQL error is a 500 without SQL text in production', async (t, dialect) => {
  const broken = { ...config, actions: [{ name: 'broken', sql: { type: 'SELECT' as const, table: 'counters', selects: [{ q: 'no_such_function(secret)', as: 'x' }] } }] }
  const prod = await buildApp(t, broken, { dialect, env: { NODE_ENV: 'production' } })
  const res = await prod.inject({ method: 'POST', url: '/api/v1/action/broken', payload: {} })
  t.equal(res.statusCode, 500)
  t.match(res.json(), { code: 500, message: /^Internal Server Error \(request [^)]+\)$/ })
  t.notMatch(res.body, /no_such_function|SELECT|select/, 'no SQL in the body')
})

forEachDialect(t, 'RAISE(ABORT, message) in a SQL-mode action answers 400 with the message, and rolls the action back', async (t, dialect) => {
  const raising: DatabaseSettings = {
    ...config,
    actions: [
      { name: 'refuse', sql: { type: 'SELECT', table: 'counters', selects: ["RAISE(ABORT, 'No, it''s 50% off')"] } },
      {
        name: 'withdraw',
        params: { id: 'integer', by: 'integer' },
        sql: [
          { type: 'UPDATE', table: 'counters', set: { value: { q: 'value - {:by}' } }, where: { q: 'id = {:id}' } },
          { type: 'SELECT', table: 'counters', selects: [{ q: "CASE WHEN value < 0 THEN RAISE(FAIL, 'Not enough') ELSE 'ok' END", as: 'ok' }], where: { q: 'id = {:id}' } }
        ]
      },
      { name: 'quoted', sql: { type: 'SELECT', table: 'counters', selects: [{ q: "'RAISE(ABORT, ''x'')'", as: 'text' }], limit: 1 } }
    ]
  }
  const app = await buildApp(t, raising, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/counters/insert', headers: ADMIN, payload: { values: { id: 1, name: 'a', value: 5 } } })
  const run = (name: string, payload: object = {}) => app.inject({ method: 'POST', url: `/api/v1/action/${name}`, payload })
  const refused = await run('refuse')
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 400, data: { id: { code: 'trigger', message: "No, it's 50% off" } } })
  t.same((await run('withdraw', { id: 1, by: 2 })).json(), [[], [{ ok: 'ok' }]])
  const short = await run('withdraw', { id: 1, by: 10 })
  t.equal(short.statusCode, 400)
  t.match(short.json(), { code: 400, data: { id: { code: 'trigger', message: 'Not enough' } } })
  const row = await app.inject({ method: 'POST', url: '/api/v1/table/counters/select', headers: ADMIN, payload: { where: 'id == 1', select: 'value' } })
  t.same(row.json(), [{ value: 3 }], 'the update before the RAISE was rolled back')
  t.same((await run('quoted')).json(), [[{ text: "RAISE(ABORT, 'x')" }]], 'a RAISE inside a string literal stays text')
})

t.test('bad actions stop start-up, naming the action', async (t) => {
  const bad = (actions: unknown[]) => ({ ...config, actions } as DatabaseSettings)
  const cases: Array<[unknown[], RegExp]> = [
    [[{ name: 'both', sql: { type: 'SELECT', table: 'counters' }, steps: { type: 'SELECT', table: 'counters' } }], /actions\[0\].*exactly one of sql or steps/],
    [[{ name: 'neither' }], /actions\[0\].*exactly one of sql or steps/],
    [[{ name: 'ghost', sql: { type: 'SELECT', table: 'ghosts' } }], /ghosts/],
    [[{ name: 'badexpr', steps: { type: 'SELECT', table: 'counters', where: 'value ==' } }], /actions\.badexpr\.steps\[0\]\.where: Unexpected end/],
    [[{ name: 'badcol', steps: { type: 'UPDATE', table: 'counters', where: 'nope == 1', set: { value: '1' } } }], /actions\.badcol\.steps\[0\]\.where: Unknown column "nope"/],
    [[{ name: 'badguard', guard: 'value > 1', sql: { type: 'SELECT', table: 'counters' } }], /actions\.badguard\.guard: Unknown column "value"/],
    [[{ name: 'nowhere', steps: { type: 'DELETE', table: 'counters' } }], /actions\.nowhere\.steps\[0\]\.where/]
  ]
  for (const [actions, message] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    const error = await app.register(fastbase, { config: bad(actions), databaseUrl: 'sqlite::memory:', dataDir: t.testdir() }).ready().then(() => undefined, (e: Error) => e)
    t.match(error?.message, message, JSON.stringify(actions))
  }
})

t.test('SQL-mode actions cannot write an auth table\'s password column (it would be stored unhashed)', async (t) => {
  const users = { name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields], extensions: [{ name: 'auth', jwtSecret: 'users-secret' }] }
  const withAction = (action: unknown) => ({ jwtSecret: 'secret', appUrl: 'https://app.example.com', tables: [users], actions: [action] } as DatabaseSettings)
  const cases: Array<[unknown, RegExp | undefined]> = [
    [{ name: 'setpw', sql: { type: 'UPDATE', table: 'users', set: { password: '{:p}' }, where: { q: 'id = {:id}' } } }, /actions\.setpw\.sql\[0\]: SQL mode cannot write the password column "password"/],
    [{ name: 'newuser', sql: { type: 'INSERT', table: 'users', values: { username: 'u', email: 'u@example.com', name: 'U', password: 'plain text' } } }, /actions\.newuser\.sql\[0\]: SQL mode cannot write the password column/],
    [{ name: 'rename', sql: { type: 'UPDATE', table: 'users', set: { name: '{:n}' }, where: { q: 'id = {:id}' } } }, undefined],
    [{ name: 'stepped', steps: { type: 'UPDATE', table: 'users', where: 'id == params.id', setValues: { password: 'a long password' } } }, undefined]
  ]
  for (const [action, message] of cases) {
    const app = Fastify()
    t.teardown(() => app.close())
    const error = await app.register(fastbase, { config: withAction(action), databaseUrl: 'sqlite::memory:', dataDir: t.testdir() }).ready().then(() => undefined, (e: Error) => e)
    if (message === undefined) t.equal(error, undefined, `${JSON.stringify(action)} starts`)
    else t.match(error?.message, message, JSON.stringify(action))
  }
})
