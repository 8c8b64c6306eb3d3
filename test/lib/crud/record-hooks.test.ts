// Record hooks on every write path: before-hooks run inside the write's transaction, may change the
// values (still typed per column; rules decided on the result) or refuse; after-hooks get each
// committed row once, never a rolled-back one, and a failing one is logged with the request id while
// the answer stands. Auth events: afterSignUp, afterLogin.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Writable } from 'node:stream'
import fastbase from '../../../app.js'
import { errors } from '../../../lib/errors.js'
import type { AfterWriteEvent, AuthHookEvent } from '../../../lib/crud/record-hooks.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { ada, bob, extendingConfig } from '../../fixtures/extending/config.js'
import type { DialectName } from '../../../lib/dialects/types.js'

type Row = Record<string, unknown>

async function build (t: Test, dialect: DialectName): Promise<{ app: FastifyInstance, logs: Row[] }> {
  const logs: Row[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { logs.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify({ logger: { level: 'error', stream } })
  t.teardown(() => app.close())
  await app.register(fastbase, { config: extendingConfig(), databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken, panelPrefix: false })
  await app.ready()
  return { app, logs }
}

/** Waits (a little) for what runs after a commit. */
async function until (check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
}

forEachDialect(t, 'record hooks', async (t, dialect) => {
  const { app, logs } = await build(t, dialect)
  const { hooks, tables } = app.fastbase
  const post = (url: string, payload: unknown, token?: string) => app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })

  const events: Array<{ name: string, event: AfterWriteEvent | AuthHookEvent }> = []
  for (const name of ['afterInsert', 'afterUpdate', 'afterDelete'] as const) {
    for (const table of ['users', 'posts'] as const) hooks.on(table, name, (event) => { events.push({ name, event }) })
  }
  for (const name of ['afterSignUp', 'afterLogin'] as const) hooks.on('users', name, (event) => { events.push({ name, event }) })
  const seen = (name: string, table: string) => events.filter((e) => e.name === name && e.event.table === table)
  const reset = () => { events.length = 0 }

  const signUp = await post('/table/users/auth/sign-up', ada)
  t.equal(signUp.statusCode, 200)
  const adaId = signUp.json().record.id as string
  const token = signUp.json().token as string
  const bobUp = await post('/table/users/auth/sign-up', bob)
  const bobId = bobUp.json().record.id as string
  await until(() => seen('afterSignUp', 'users').length === 2 && seen('afterLogin', 'users').length === 2)
  t.match(seen('afterSignUp', 'users')[0].event, { table: 'users', record: { id: adaId, username: 'ada', email: 'ada@example.com' }, requestId: signUp.headers['x-request-id'] ?? String })
  t.notOk('password' in (seen('afterSignUp', 'users')[0].event as AuthHookEvent).record, 'the public record: no hidden column')
  t.match(seen('afterInsert', 'users')[0].event, { row: { id: adaId, username: 'ada' } }, 'sign-up is an insert: afterInsert too')
  t.equal(seen('afterLogin', 'users').length, 2, 'a sign-up opens a session')
  reset()
  const login = await post('/table/users/auth/login-password', { identity: 'ada', password: ada.password })
  t.equal(login.statusCode, 200)
  await until(() => seen('afterLogin', 'users').length === 1)
  t.match(seen('afterLogin', 'users'), [{ event: { table: 'users', record: { id: adaId } } }], 'afterLogin on a password login')
  reset()

  t.test('beforeInsert changes values, past field flags but not past types or rules', async (t) => {
    const off = hooks.on('posts', 'beforeInsert', (event) => {
      event.values.slug ??= String(event.values.title).toLowerCase().replace(/\W+/g, '-')
      event.values.views = 100
    })
    t.teardown(off)
    const created = await post('/table/posts/insert', { values: { owner: adaId, title: 'Hello World' }, returning: ['slug', 'views'] }, token)
    t.same(created.json(), [{ slug: 'hello-world', views: 100 }], 'the hook set a slug, and views (noInsert for callers)')
    t.same((await post('/table/posts/insert', { values: { owner: adaId, title: 'x', views: 5 } }, token)).json(), { code: 403, message: 'Cannot insert views field', data: {} }, 'the caller still may not')

    const retype = hooks.on('posts', 'beforeInsert', (event) => { (event.values as Row).views = 'lots' })
    const typed = await post('/table/posts/insert', { values: { owner: adaId, title: 'Typed' } }, token)
    t.match(typed.json(), { code: 400, message: 'Validation Error', data: { views: { _errors: [String] } } }, 'a hook\'s value is checked per column')
    retype()

    const steal = hooks.on('posts', 'beforeInsert', (event) => { event.values.owner = bobId })
    t.equal((await post('/table/posts/insert', { values: { owner: adaId, title: 'Stolen' } }, token)).statusCode, 403, 'the createRule is decided on the values as the hook left them')
    steal()
  })

  t.test('a before-hook refuses, inside the write\'s transaction', async (t) => {
    const audit = hooks.on('posts', 'beforeInsert', async (event) => {
      await event.tables.audit.insert({ values: { message: `insert ${String(event.values.title)}` } }, { as: 'system' })
    })
    const refuse = hooks.on('posts', 'beforeInsert', (event) => {
      if (event.values.title === 'Forbidden') throw errors.badRequest('No such titles', { title: 'refused' })
    })
    t.teardown(() => { audit(); refuse() })
    const refused = await post('/table/posts/insert', { values: { owner: adaId, title: 'Forbidden' } }, token)
    t.same([refused.statusCode, refused.json()], [400, { code: 400, message: 'No such titles', data: { title: 'refused' } }])
    const denied = await post('/table/posts/insert', { values: { owner: bobId, title: 'Not mine' } }, token)
    t.equal(denied.statusCode, 403)
    t.same((await tables.audit.select({ select: 'message' }, { as: 'system' })), [], 'the audit rows of both were rolled back with their writes')
    t.equal((await post('/table/posts/insert', { values: { owner: adaId, title: 'Fine' } }, token)).statusCode, 200)
    t.same((await tables.audit.select({ select: 'message' }, { as: 'system' })), [{ message: 'insert Fine' }], 'and committed with one')
    await tables.audit.delete({ where: 'true' }, { as: 'system' })
  })

  t.test('after-hooks on every write path, once per committed row', async (t) => {
    await tables.posts.delete({ where: 'true' }, { as: 'system' })
    await until(() => seen('afterDelete', 'posts').length > 0)
    reset()
    const inserted = await post('/table/posts/insert', { values: [{ owner: adaId, title: 'A', slug: 'a' }, { owner: adaId, title: 'B', slug: 'b' }], returning: ['id'] }, token)
    await until(() => seen('afterInsert', 'posts').length === 2)
    const [first] = seen('afterInsert', 'posts')
    t.match(first.event, { table: 'posts', row: { title: 'A', slug: 'a', views: 0, published: false, owner: adaId }, caller: { uid: adaId }, requestId: inserted.headers['x-request-id'] }, 'every column, the caller, the request')
    const aId = inserted.json()[0].id as string

    reset()
    await post('/table/posts/update', { where: `slug == 'a'`, setValues: { title: 'A2' } }, token)
    await post(`/table/posts/edit/${aId}`, { title: 'A3' }, token)
    await post('/table/posts/edit/fresh-id-0000000000001?or=INSERT', { owner: adaId, title: 'C', slug: 'c' }, token)
    await post('/table/posts/insert', { values: { owner: adaId, title: 'B2', slug: 'b' }, or: 'REPLACE' }, token)
    await post('/action/publish', { id: aId }, token)
    await tables.posts.edit({ id: aId, values: { title: 'A4' } }, { as: await app.fastbase.callerFor('users', adaId) })
    await until(() => seen('afterUpdate', 'posts').length === 5 && seen('afterInsert', 'posts').length === 1)
    t.same(seen('afterUpdate', 'posts').map((e) => (e.event as AfterWriteEvent).row.title), ['A2', 'A3', 'B2', 'A3', 'A4'], 'update, edit, upsert meeting a row, an action step, the in-process API')
    t.equal((seen('afterUpdate', 'posts')[3].event as AfterWriteEvent).row.published, true, 'the action\'s step, with its final row')
    t.same(seen('afterInsert', 'posts').map((e) => (e.event as AfterWriteEvent).row.title), ['C'], 'edit?or=INSERT of a new id inserts')

    reset()
    const rolledBack = app.fastbase.transaction(async (tx) => {
      await tx.tables.posts.insert({ values: { owner: adaId, title: 'Ghost' } }, { as: 'system' })
      throw errors.badRequest('changed my mind')
    })
    await t.rejects(rolledBack, /changed my mind/)
    await post('/table/posts/insert', { values: [{ owner: adaId, title: 'D' }, { owner: bobId, title: 'E' }] }, token)
    await post('/table/posts/delete', { where: 'true' }, token)
    await until(() => seen('afterDelete', 'posts').length === 3)
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.same(seen('afterInsert', 'posts'), [], 'no after-hook for a rolled-back write or a refused batch')
    t.same(seen('afterDelete', 'posts').map((e) => (e.event as AfterWriteEvent).row.title).sort(), ['A4', 'B2', 'C'], 'deleted rows as they were')
  })

  t.test('before-hooks on update and delete', async (t) => {
    await tables.posts.insert({ values: { owner: adaId, title: 'Keep', slug: 'keep' } }, { as: 'system' })
    const offUpdate = hooks.on('posts', 'beforeUpdate', (event) => {
      t.equal(event.caller.uid, adaId)
      event.values.views = 42
      if (event.values.title === 'Locked') throw errors.forbidden('Title locked')
    })
    const offDelete = hooks.on('posts', 'beforeDelete', (event) => {
      if (event.where.includes('keep')) throw errors.forbidden('Kept')
    })
    t.teardown(() => { offUpdate(); offDelete() })
    t.same((await post('/table/posts/update', { where: `slug == 'keep'`, setValues: { title: 'Kept' }, returning: ['title', 'views'] }, token)).json(), [{ title: 'Kept', views: 42 }], 'a hook sets a noUpdate field')
    t.same((await post('/table/posts/update', { where: `slug == 'keep'`, setValues: { title: 'Locked' } }, token)).json(), { code: 403, message: 'Title locked', data: {} })
    t.same((await post('/table/posts/delete', { where: `slug == 'keep'` }, token)).json(), { code: 403, message: 'Kept', data: {} })
    // An edit by id of known plain fields is otherwise run from a compiled write plan: the hook must still run.
    const [kept] = await tables.posts.select({ where: `slug == 'keep'`, select: ['id'] }, { as: 'system' }) as Array<{ id: string }>
    t.same((await post(`/table/posts/edit/${kept.id}?returning=views`, { title: 'Edited' }, token)).json(), { views: 42 }, 'an edit by id runs the hook too')
    t.equal((await tables.posts.list({ where: `slug == 'keep'` }, { as: 'system' })).total, 1, 'still there')

    // An update OR REPLACE deletes the other rows holding its new unique value: beforeDelete runs for them.
    await tables.posts.insert({ values: { owner: adaId, title: 'Other', slug: 'other' } }, { as: 'system' })
    const replace = { where: `slug == 'other'`, setValues: { slug: 'keep' }, or: 'REPLACE' }
    t.same((await post('/table/posts/update', replace, token)).json(), { code: 403, message: 'Kept', data: {} }, 'refused by the beforeDelete hook')
    t.equal((await tables.posts.list({ where: `slug == 'keep' | slug == 'other'` }, { as: 'system' })).total, 2, 'nothing deleted, nothing changed')
    offDelete()
    const doomed: unknown[] = []
    const offSeen = hooks.on('posts', 'beforeDelete', async (event) => { doomed.push(await event.tables.posts.select({ where: event.where, select: ['title'] }, { as: 'system' })) })
    t.teardown(offSeen)
    t.equal((await post('/table/posts/update', replace, token)).statusCode, 200)
    t.same(doomed, [[{ title: 'Edited' }]], 'once, its `where` naming the row the update replaced')
    t.same(await tables.posts.select({ where: `slug == 'keep'`, select: ['title'] }, { as: 'system' }), [{ title: 'Other' }])
  })

  t.test('a failing after-hook is logged with the request id; the answer stands', async (t) => {
    const off = hooks.on('posts', 'afterInsert', () => { throw new Error('mail server down') })
    t.teardown(off)
    const reply = await post('/table/posts/insert', { values: { owner: adaId, title: 'Logged' }, returning: ['title'] }, token)
    t.same([reply.statusCode, reply.json()], [200, [{ title: 'Logged' }]])
    await until(() => logs.some((l) => l.msg === 'fastbase after-hook failed'))
    t.match(logs.find((l) => l.msg === 'fastbase after-hook failed'), { reqId: reply.headers['x-request-id'], table: 'posts', hook: 'afterInsert', err: { message: 'mail server down' } })
  })

  t.test('registration is checked', async (t) => {
    t.throws(() => hooks.on('nope' as 'posts', 'afterInsert', () => {}), /unknown table "nope"/)
    t.throws(() => hooks.on('posts', 'afterSave' as 'afterInsert', () => {}), /unknown event "afterSave"/)
    t.throws(() => hooks.on('posts', 'afterSignUp', () => {}), /needs an auth table/)
    let calls = 0
    const off = hooks.on('posts', 'beforeInsert', () => { calls++ })
    off()
    await tables.posts.insert({ values: { owner: adaId, title: 'Unhooked' } }, { as: 'system' })
    t.equal(calls, 0, 'a removed hook is not called')
  })
})
