// An auth flow's own write (decision D143) is the only write the write path takes past the table's own
// hooks, with columns set to SQL defaults and `event.source` naming a flow; `source` also lets a write
// past `mfaForWrites` (decision D117). A caller who could ask for either could write SQL into a user
// row, verify an address it never proved, or skip the second factor. Neither is part of anything a
// caller sends: insert and update take the flow's write as an argument of their own, and `source` is
// set by lib/auth only. Here a signed-in user sends the names of both everywhere a caller can put a
// key (insert, upsert, update and edit bodies, a record's values, edit's query string, sign-up, an
// action's params, the in-process API) and none of it reaches the write: each is refused as a key
// the schema does not name (a table that wants a second factor refuses the request before reading
// it), or dropped where the route drops such keys (sign-up, edit's query string), and the row, the
// hooks' `event.source` and the second-factor table are as they would be without it.
import t from 'tap'
import { buildApp, forEachDialect, statusOf } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

type Row = Record<string, unknown>

const config: DatabaseSettings = {
  jwtSecret: 'flow-write-attack',
  appUrl: 'https://app.example.com',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields, { name: 'nick', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'auth', jwtSecret: 'users-key' }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id' }]
    },
    {
      name: 'vault',
      autoSetUid: true,
      fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true', mfaForWrites: true }]
    }
  ],
  actions: [{ name: 'rename', steps: { type: 'UPDATE', table: 'users', where: 'id == auth.uid', setValues: { nick: 'renamed' } } }]
}

/** What a flow's write holds and what a context's `source` is, under every name a caller might try. */
const SMUGGLED = {
  flow: { owned: [], defaults: { email_verified: 'TRUE', role: '\'admin\'' } },
  owned: [],
  defaults: { email_verified: 'TRUE', role: '\'admin\'' },
  source: 'auth:oauth'
}

forEachDialect(t, 'no caller reaches an auth flow\'s write or its source', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const sources: Array<string | undefined> = []
  for (const table of ['users', 'vault']) {
    app.fastbase.hooks.on(table, 'beforeInsert', (event) => { sources.push(event.source) })
    app.fastbase.hooks.on(table, 'beforeUpdate', (event) => { sources.push(event.source) })
  }
  const send = async (url: string, payload: object, token?: string): Promise<number> => {
    const res = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return res.statusCode
  }
  const signUp = async (username: string, extra: Row = {}): Promise<{ token: string, id: string }> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username, email: `${username}@example.com`, name: username, password: 'a long password', ...extra } })
    t.equal(res.statusCode, 200, `${username} signs up`)
    const body = res.json() as { token: string, record: { id: string } }
    return { token: body.token, id: body.record.id }
  }
  /** The user's row where the smuggled defaults would show: the verified flag and role. */
  const user = async (id: string): Promise<Row> => {
    const table = app.fastbase.descriptors.get('users')!
    const raw = await app.fastbase.db('users').where({ id }).first()
    return { email_verified: app.fastbase.dialect.decode(table.fields.get('email_verified')!, raw.email_verified), role: raw.role ?? null }
  }
  const AS_CREATED = { email_verified: false, role: null }

  sources.length = 0
  const ann = await signUp('ann', SMUGGLED)
  t.same(await user(ann.id), AS_CREATED, 'sign-up drops the keys naming no field: nothing of them is written')
  t.same(sources, ['auth:sign-up'], 'and its hook hears the sign-up, not the source sent')

  const annCaller = await app.fastbase.callerFor('users', ann.id)
  // [what, the attempt, its answer, the sources the hooks heard]: a refusal runs no hook; the query
  // string's unknown keys are dropped, and the edit is the caller's own.
  const attempts: Array<[string, () => Promise<number>, number, Array<string | undefined>]> = [
    ['insert body', () => send('/table/users/insert', { values: { username: 'bob', email: 'bob@example.com', name: 'bob', password: 'a long password' }, ...SMUGGLED }, ann.token), 400, []],
    ['insert values', () => send('/table/users/insert', { values: { username: 'bob', email: 'bob@example.com', name: 'bob', password: 'a long password', ...SMUGGLED } }, ann.token), 400, []],
    ['insert or=REPLACE body', () => send('/table/users/insert', { values: { id: ann.id, username: 'ann', email: 'ann@example.com', name: 'ann', password: 'a long password' }, or: 'REPLACE', ...SMUGGLED }, ann.token), 400, []],
    ['update body', () => send('/table/users/update', { where: `id == '${ann.id}'`, setValues: { nick: 'x' }, ...SMUGGLED }, ann.token), 400, []],
    ['update setValues', () => send('/table/users/update', { where: `id == '${ann.id}'`, setValues: { nick: 'x', ...SMUGGLED } }, ann.token), 400, []],
    ['edit body', () => send(`/table/users/edit/${ann.id}`, { nick: 'x', ...SMUGGLED }, ann.token), 400, []],
    ['edit?or=INSERT query', () => send(`/table/users/edit/${ann.id}?or=INSERT&source=auth:oauth&owned=&defaults[email_verified]=TRUE&flow=1`, { nick: 'x' }, ann.token), 200, [undefined]],
    ['action params', () => send('/action/rename', SMUGGLED, ann.token), 400, []],
    ['second-factor table, body', () => send('/table/vault/insert', { values: { body: 'x' }, ...SMUGGLED }, ann.token), 403, []],
    ['second-factor table, values', () => send('/table/vault/insert', { values: { body: 'x', source: 'auth:oauth' } }, ann.token), 403, []],
    ['in-process update', async () => await statusOf(() => app.fastbase.tables.users.update({ where: `id == '${ann.id}'`, setValues: { nick: 'x' }, ...SMUGGLED } as never, { as: annCaller })), 400, []],
    ['in-process insert', async () => await statusOf(() => app.fastbase.tables.vault.insert({ values: { body: 'x' }, ...SMUGGLED } as never, { as: annCaller })), 400, []]
  ]
  for (const [name, attempt, status, heard] of attempts) {
    sources.length = 0
    t.equal(await attempt(), status, `${name}: answered ${status}`)
    t.same(await user(ann.id), AS_CREATED, `${name}: the user's row is as created`)
    t.same(sources, heard, `${name}: the hooks heard no flow`)
  }
  t.same(await app.fastbase.db('users').whereNot({ id: ann.id }).select('id'), [], 'no other user was made')
  t.same(await app.fastbase.db('vault').select('id'), [], 'nothing was written past the second factor')

  // The same writes without the smuggled keys go through, as the caller's own: the keys were all the refusal was about.
  sources.length = 0
  t.equal(await send('/table/users/update', { where: `id == '${ann.id}'`, setValues: { nick: 'x' } }, ann.token), 200, 'the update alone is written')
  t.equal(await send(`/table/users/edit/${ann.id}`, { nick: 'y' }, ann.token), 200, 'and the edit')
  t.equal(await send('/action/rename', {}, ann.token), 200, 'and the action')
  t.equal(await send('/table/vault/insert', { values: { body: 'x' } }, ann.token), 403, 'while the second-factor table still asks for the second factor')
  t.same(sources, [undefined, undefined, undefined], 'each hook heard no source: a caller\'s write')
  t.same(await user(ann.id), AS_CREATED)
})
