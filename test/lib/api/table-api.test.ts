// The in-process table API: app.fastbase.tables.<name>.<operation>(args, { as }) runs the HTTP route's
// work (argument schemas, rules, field flags, limits, errors) for the caller `as` names, which is
// never implied; 'system' bypasses rules; app.fastbase.transaction commits or rolls back together.
import t from 'tap'
import Fastify from 'fastify'
import fastbase from '../../../app.js'
import { FastbaseError } from '../../../lib/errors.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { ada, bob, extendingConfig } from '../../fixtures/extending/config.js'

type Row = Record<string, unknown>

/** The FastbaseError `promise` rejects with, as `[status, code]`. */
async function refusal (promise: Promise<unknown>): Promise<[number, string] | string> {
  try {
    await promise
    return 'resolved'
  } catch (error) {
    return error instanceof FastbaseError ? [error.statusCode, error.errorCode] : `not a FastbaseError: ${String(error)}`
  }
}

forEachDialect(t, 'table API', async (t, dialect) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastbase, { config: extendingConfig(), databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken, panelPrefix: false })
  app.post('/posts', { preHandler: app.fastbase.authenticate({ require: 'user' }) }, async (request) => {
    const [post] = await app.fastbase.tables.posts.insert({ values: { owner: app.fastbase.callerOf(request).uid, title: (request.body as Row).title }, returning: ['id', 'title', 'owner'] }, { as: request })
    return post
  })
  await app.ready()
  const { tables } = app.fastbase
  const signUp = async (who: Row): Promise<{ token: string, id: string }> => {
    const reply = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: who })
    return { token: reply.json().token, id: reply.json().record.id }
  }
  const adaUser = await signUp(ada)
  const bobUser = await signUp(bob)
  const asAda = { as: await app.fastbase.callerFor('users', adaUser.id) }
  const asBob = { as: await app.fastbase.callerFor('users', bobUser.id) }

  t.test('as is required and checked', async (t) => {
    await t.rejects(tables.posts.list({}, {} as never), /`as` must be/, 'no as: refused, never the system')
    await t.rejects(tables.posts.list({}, { as: { uid: 'someone' } } as never), /`as` must be/, 'an object that is no caller')
    await t.rejects(tables.posts.list({}, { as: 'admin' } as never), /`as` must be/)
    await t.rejects(app.fastbase.callerFor('posts', 'x'), /not an auth table/)
    t.same(await refusal(app.fastbase.callerFor('users', 'nobody')), [404, 'FB_ERR_NOT_FOUND'])
    t.equal(asAda.as.uid, adaUser.id)
    t.equal(asAda.as.cid, 'users')
    t.equal(asAda.as.email, null, 'an unverified email is not the caller\'s email, as with a token')
  })

  t.test('rules and field flags as on HTTP', async (t) => {
    const [mine] = await tables.posts.insert({ values: { owner: adaUser.id, title: 'Draft', slug: 'draft' }, returning: '*' }, asAda)
    t.match(mine, { owner: adaUser.id, title: 'Draft', views: 0, published: false })
    t.same(await refusal(tables.posts.insert({ values: { owner: bobUser.id, title: 'Forged' } }, asAda)), [403, 'FB_ERR_FORBIDDEN'], 'createRule: not for someone else')
    t.same(await refusal(tables.posts.insert({ values: { owner: adaUser.id, title: 'x' } }, { as: (await app.fastbase.callerFor('users', bobUser.id)) })), [403, 'FB_ERR_FORBIDDEN'])
    t.same(await refusal(tables.posts.insert({ values: { owner: adaUser.id, title: 'x', views: 9 } }, asAda)), [403, 'FB_ERR_FIELD_READ_ONLY'], 'noInsert holds')
    t.same(await refusal(tables.posts.insert({ values: { owner: adaUser.id, title: 5 as never } }, asAda)), [400, 'FB_ERR_VALIDATION'], 'the route\'s schema checks the values')
    t.same(await refusal(tables.posts.insert({ values: { owner: adaUser.id, titel: 'typo' } as never }, asAda)), [400, 'FB_ERR_VALIDATION'], 'unknown fields too')
    t.same(await refusal(tables.posts.list({ where: 'title ==' }, asAda)), [400, 'FB_ERR_EXPRESSION'])
    t.same(await refusal(tables.posts.list({ limit: -1 }, asAda)), [400, 'FB_ERR_VALIDATION'])
    t.same(await refusal(tables.posts.insert({ values: { owner: adaUser.id, title: 'dup', slug: 'draft' } }, asAda)), [400, 'FB_ERR_CONSTRAINT'], 'constraint errors as on HTTP')

    t.same((await tables.posts.list({ select: 'title' }, asBob)), { items: [], total: 0 }, 'bob does not see ada\'s draft')
    t.same(await refusal(tables.posts.view({ id: mine.id as string }, asBob)), [404, 'FB_ERR_NOT_FOUND'])
    t.same(await tables.posts.update({ where: 'true', setValues: { title: 'Defaced' } }, asBob), [], 'bob\'s update reaches no row')
    t.same(await tables.posts.delete({ where: 'true' }, asBob), [])
    t.same(await refusal(tables.posts.edit({ id: mine.id as string, values: { title: 'Defaced' } }, asBob)), [404, 'FB_ERR_NOT_FOUND'])

    t.match(await tables.posts.edit({ id: mine.id as string, values: { published: true }, returning: ['published'] }, asAda), { published: true })
    t.same((await tables.posts.list({ select: 'title' }, asBob)), { items: [{ title: 'Draft' }], total: 1 }, 'published: bob sees it')
    t.match(await tables.posts.view({ id: mine.id as string, select: 'title' }, asBob), { title: 'Draft' })
    t.same(await tables.posts.select({ where: 'published == true', select: ['slug'] }, asBob), [{ slug: 'draft' }])
    t.same(await refusal(tables.posts.update({ where: 'true', setValues: { views: 1 } }, asAda)), [403, 'FB_ERR_FIELD_READ_ONLY'], 'noUpdate holds')

    const [system] = await tables.posts.update({ where: `id == '${String(mine.id)}'`, setValues: { views: 7 }, returning: ['views'] }, { as: 'system' })
    t.same(system, { views: 7 }, 'the system writes past field flags')
    t.same(await refusal(tables.posts.insert({ values: { owner: bobUser.id, title: 'x', views: 'many' as never } }, { as: 'system' })), [400, 'FB_ERR_VALIDATION'], 'but its values are checked all the same')
    t.same(await refusal(tables.users.list({ select: 'password' }, asAda)), [400, 'FB_ERR_EXPRESSION'], 'a user cannot select a hidden column')
    t.equal((await tables.users.list({}, { as: 'system' })).total, 2, 'the system sees every user')

    const [removed] = await tables.posts.delete({ where: 'true', returning: ['title'] }, asAda)
    t.same(removed, { title: 'Draft' })
  })

  t.test('a host route acting as its caller', async (t) => {
    const created = await app.inject({ method: 'POST', url: '/posts', headers: { authorization: `Bearer ${adaUser.token}` }, payload: { title: 'From the host' } })
    t.same(created.json(), { id: created.json().id, title: 'From the host', owner: adaUser.id })
    const anonymous = await app.inject({ method: 'POST', url: '/posts', payload: { title: 'x' } })
    t.equal(anonymous.statusCode, 401)
    await tables.posts.delete({ where: 'true' }, { as: 'system' })
  })

  t.test('one transaction', async (t) => {
    const failed = app.fastbase.transaction(async (tx) => {
      await tx.tables.posts.insert({ values: { owner: adaUser.id, title: 'one' } }, asAda)
      await tx.tables.posts.insert({ values: { owner: adaUser.id, title: 'two', views: 3 } }, asAda)
    })
    t.same(await refusal(failed), [403, 'FB_ERR_FIELD_READ_ONLY'])
    t.equal((await tables.posts.list({}, { as: 'system' })).total, 0, 'the first insert was rolled back')
    const titles = await app.fastbase.transaction(async (tx) => {
      await tx.tables.posts.insert({ values: [{ owner: adaUser.id, title: 'one' }, { owner: adaUser.id, title: 'two' }] }, asAda)
      return (await tx.tables.posts.select({ select: 'title', order: 'title' }, asAda)).map((r) => r.title)
    })
    t.same(titles, ['one', 'two'], 'a read inside sees the transaction\'s writes')
    t.equal((await tables.posts.list({}, asAda)).total, 2, 'committed')
    t.same(Object.keys(tables), ['users', 'posts', 'audit'], 'one entry per table')
  })

  // Server code built `id == '${id}'` and ran it as the system; an id holding a
  // quote rewrote the condition. `{:name}` binds the value instead (decision D88).
  t.test('bound parameters: {:name} with params', async (t) => {
    await tables.posts.delete({ where: 'true' }, { as: 'system' })
    const hostile = "x' | id != '"
    await tables.posts.insert({ values: [{ id: hostile, owner: adaUser.id, title: 'hostile' }, { owner: bobUser.id, title: 'other', slug: 'other' }] as never }, { as: 'system' })
    const liked = await tables.posts.update({ where: 'id == {:id}', params: { id: hostile, suffix: '!' }, set: { title: 'title || {:suffix}' }, returning: ['id', 'title'] }, { as: 'system' })
    t.same(liked, [{ id: hostile, title: 'hostile!' }], 'only the row with that id, the values bound in where and set')
    t.same((await tables.posts.select({ where: 'owner == {:owner}', params: { owner: bobUser.id }, select: 'title' }, { as: 'system' })), [{ title: 'other' }], 'the other post is untouched')
    t.same(await tables.posts.update({ where: 'id == {:id}', params: { id: hostile }, setValues: { title: 'x' } }, asBob), [], 'the caller\'s rules still apply')

    // Each JSON type binds as itself, compared with the column it meets.
    t.same((await tables.posts.select({ where: 'views >= {:n} & published == {:p} & slug == {:s}', params: { n: 0, p: false, s: null }, select: 'title' }, { as: 'system' })), [{ title: 'hostile!' }], 'number, boolean, null (IS NULL)')
    t.same((await tables.posts.list({ where: 'title == {:t}', params: { t: 'other' }, select: 'title' }, asAda)), { items: [], total: 0 }, 'list, under the caller\'s listRule')
    t.match(await tables.posts.view({ id: hostile, where: 'owner == {:me}', params: { me: adaUser.id }, select: 'title' }, asAda), { title: 'hostile!' }, 'view')
    t.same(await tables.posts.select({ where: 'title == \'{:t}\'', params: { t: 'other' } }, { as: 'system' }), [], 'inside quotes it is text, not a parameter')

    // A parameter not given is an error, never a null; also after a plan was built for a null.
    const missing = async (params?: Record<string, null>) => await refusal(tables.posts.select({ where: 'slug == {:s}', params }, { as: 'system' }))
    t.same(await missing({ s: null }), 'resolved')
    t.same(await missing({}), [400, 'FB_ERR_EXPRESSION'], 'not in params')
    t.same(await missing(), [400, 'FB_ERR_EXPRESSION'], 'no params at all')
    await t.rejects(tables.posts.delete({ where: 'id == {:idd}', params: { id: hostile } }, { as: 'system' }), /Unknown parameter \{:idd\}/, 'the message names it')
    t.equal((await tables.posts.list({}, { as: 'system' })).total, 2, 'and nothing was deleted')

    // Only strings, finite numbers, booleans and null; names as {:name} spells them.
    for (const [params, why] of [[{ id: { a: 1 } }, 'an object'], [{ id: [hostile] }, 'a list'], [{ id: Number.NaN }, 'NaN'], [{ id: Number.POSITIVE_INFINITY }, 'Infinity'], [{ 'a b': 1 }, 'a name {:name} cannot spell'], [[hostile], 'params a list'], ['x', 'params a string']] as const) {
      t.same(await refusal(tables.posts.select({ where: 'true', params: params as never }, { as: 'system' })), [400, 'FB_ERR_VALIDATION'], why)
    }
    const tooMany = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`p${i}`, i]))
    t.same(await refusal(tables.posts.select({ where: 'true', params: tooMany }, { as: 'system' })), [400, 'FB_ERR_VALIDATION'], 'at most 256')

    for (const text of ['id == {id}', 'id == {: id}', 'id == {:1}', 'id == {:id', 'id == {:a.b}']) {
      t.same(await refusal(tables.posts.select({ where: text, params: { id: 'x' } }, { as: 'system' })), [400, 'FB_ERR_EXPRESSION'], text)
    }
    // Over HTTP nobody passes params: a {:name} there names none.
    const http = await app.inject({ url: `/api/v1/table/posts/list?where=${encodeURIComponent('id == {:id}')}`, headers: { authorization: `Bearer ${adminToken}` } })
    t.same([http.statusCode, http.json().code], [400, 400])
    t.match(http.json().message, /Unknown parameter \{:id\}/)
  })
})
