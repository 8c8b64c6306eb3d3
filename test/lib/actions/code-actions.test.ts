// Actions written in code: served at /action/<name> with the config actions' access rules (requireAuth,
// guard, strict params, viewers refused), one transaction around the handler, documented in the API
// document and listed for the panel.
import t from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import fastbase, { options as serverOptions } from '../../../app.js'
import { defineAction } from '../../../plugins/define-action.js'
import { errors } from '../../../lib/errors.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { ada, extendingConfig } from '../../fixtures/extending/config.js'

const promote = defineAction({
  name: 'promote',
  description: 'Adds views to one of your posts',
  requireAuth: true,
  // Guards see the params as sent (before defaults), as a config action's do.
  guard: 'params.by == null | params.by <= 10',
  params: Type.Object({ id: Type.String({ description: 'The post' }), by: Type.Optional(Type.Integer({ default: 1, minimum: 1 })) }),
  result: Type.Object({ id: Type.String(), views: Type.Integer() }),
  handler: async ({ params, caller, tables }) => {
    // Read as the caller (their rules), write as the system (views is noUpdate for callers).
    const post = await tables.posts.view({ id: params.id, select: ['id', 'views', 'owner'] }, { as: caller })
    if (post.owner !== caller.uid) throw errors.forbidden('Not your post')
    const views = Number(post.views) + (params.by ?? 1)
    await tables.posts.edit({ id: params.id, values: { views } as never }, { as: 'system' })
    if (views > 100) throw errors.badRequest('Too popular')
    return { id: params.id, views }
  }
})

// docs/extending.md's `like`: the caller must see the post, the write runs as the system with the
// post's id bound (spliced into the text, an id holding a quote reached every row: decision D88).
const like = defineAction({
  name: 'like',
  requireAuth: true,
  params: Type.Object({ id: Type.String() }),
  handler: async ({ params, caller, tables }) => {
    const post = await tables.posts.view({ id: params.id, select: ['id'] }, { as: caller })
    const [liked] = await tables.posts.update({ where: 'id == {:id}', params: { id: String(post.id) }, set: { views: 'views + 1' }, returning: ['id', 'views'] }, { as: 'system' })
    return liked
  }
})

forEachDialect(t, 'code actions', async (t, dialect) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(fastbase, { config: extendingConfig(), databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken, actions: [promote, like] })
  await app.ready()
  const post = (url: string, payload: unknown, token?: string) => app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const signUp = (await post('/table/users/auth/sign-up', ada)).json()
  const token = signUp.token as string
  const [mine] = (await post('/table/posts/insert', { values: { owner: signUp.record.id, title: 'Mine' }, returning: ['id'] }, token)).json()

  t.same((await post('/action/promote', { id: mine.id }, token)).json(), { id: mine.id, views: 1 }, 'runs, with the default filled')
  t.same((await post('/action/promote', { id: mine.id, by: 5 }, token)).json(), { id: mine.id, views: 6 })
  t.same((await post('/action/promote', { id: mine.id })).json(), { code: 401, message: 'Authentication required', data: {} }, 'requireAuth')
  t.same((await post('/action/promote', { id: mine.id, by: 11 }, token)).json(), { code: 403, message: 'Forbidden', data: {} }, 'the guard')
  t.match((await post('/action/promote', { id: mine.id, extra: 1 }, token)).json(), { code: 400, message: 'Validation Error', data: { extra: { _errors: ['Unknown field'] } } }, 'strict params')
  t.match((await post('/action/promote', { by: 2 }, token)).json(), { code: 400, data: { _errors: [], id: { _errors: ['id is required'] } } })
  t.equal((await post('/action/promote', { id: 'nope' }, token)).statusCode, 404, 'the handler\'s own FastbaseError')

  await post('/action/promote', { id: mine.id, by: 10 }, token)
  const many = await app.fastbase.tables.posts.edit({ id: mine.id, values: { views: 95 } as never }, { as: 'system' })
  t.ok(many)
  t.same((await post('/action/promote', { id: mine.id, by: 10 }, token)).json(), { code: 400, message: 'Too popular', data: {} })
  t.match(await app.fastbase.tables.posts.view({ id: mine.id, select: 'views' }, { as: 'system' }), { views: 95 }, 'the handler\'s write was rolled back with it')

  t.same(await app.fastbase.runAction('promote', { id: mine.id, by: 1 }, { auth: await app.fastbase.callerFor('users', signUp.record.id) }), { id: mine.id, views: 96 }, 'runAction from server code')
  t.same((await post('/action/publish', { id: mine.id }, token)).json(), [[{ id: mine.id, published: true }]], 'config actions as before')

  // A post whose id is a quote away from every row: liking it likes it alone.
  const hostile = "x' | id != '"
  await app.fastbase.tables.posts.insert({ values: { id: hostile, owner: signUp.record.id, title: 'Hostile' } as never }, { as: 'system' })
  const before = await app.fastbase.tables.posts.select({ select: ['id', 'views'], order: 'id' }, { as: 'system' })
  t.same((await post('/action/like', { id: hostile }, token)).json(), { id: hostile, views: 1 }, 'the action answers the post it liked')
  const after = await app.fastbase.tables.posts.select({ select: ['id', 'views'], order: 'id' }, { as: 'system' })
  t.same(after, before.map((row) => row.id === hostile ? { id: hostile, views: 1 } : row), 'no other post changed')

  const doc = (await app.inject({ url: '/api/v1/doc' })).json()
  const operation = doc.paths['/api/v1/action/promote'].post
  t.equal(operation.summary, 'Adds views to one of your posts')
  t.match(JSON.stringify(operation.requestBody), /"by"/, 'its params in the document')
  t.match(JSON.stringify(operation.responses['200']), /"views"/, 'and its result')
  t.match(JSON.stringify(doc.paths['/api/v1/action/publish'].post.responses['200']), /One array of rows/, 'config actions keep theirs')

  const settings = (await app.inject({ url: '/api/v1/settings', headers: { authorization: `Bearer ${adminToken}` } })).json()
  t.match(settings.actions, [{ name: 'publish' }, { name: 'promote', code: true, requireAuth: true, params: { id: { type: 'string', description: 'The post' }, by: { type: 'integer', optional: true, default: 1 } } }], 'the panel finds it beside the config\'s')
})

t.test('code actions are checked at start', async (t) => {
  const start = async (actions: unknown[]) => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(fastbase, { config: extendingConfig(), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), actions: actions as never })
    await app.ready()
  }
  const handler = () => null
  await t.rejects(start([{ ...promote, name: 'publish' }]), /another action is named publish/)
  await t.rejects(start([{ name: 'bad name', params: Type.Object({}), handler }]), /name must match/)
  await t.rejects(start([{ name: 'x', params: Type.String(), handler }]), /params must be a TypeBox object schema/)
  await t.rejects(start([{ name: 'x', params: Type.Object({}) }]), /handler must be a function/)
  await t.rejects(start([{ name: 'x', params: Type.Object({}), guard: 'params.a ==', handler }]), /guard/)
  // {:name} in a guard must name a declared param (decision D88).
  await t.rejects(start([{ name: 'x', params: Type.Object({ a: Type.Integer() }), guard: '{:b} > 1', handler }]), /Unknown parameter \{:b\}/)
  await start([{ name: 'x', params: Type.Object({ a: Type.Integer() }), guard: '{:a} < 10', handler }])
  // And in a config action's steps, as SQL mode's {:name} names its params.
  const withStep = async (where: string) => {
    const app = Fastify()
    t.teardown(() => app.close())
    const step = { type: 'UPDATE', table: 'posts', where, setValues: { published: true }, returning: ['id'] }
    await app.register(fastbase, { config: extendingConfig('steps', { actions: [{ name: 'pub', requireAuth: true, params: { id: 'string' }, steps: [step] }] } as never), databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken })
    await app.ready()
    return app
  }
  await t.rejects(withStep('id == {:idd}'), /actions\.pub\.steps\[0\]\.where: Unknown parameter \{:idd\}/)
  const app = await withStep('id == {:id} & owner == auth.uid')
  const signUp = (await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: ada })).json()
  const auth = { authorization: `Bearer ${signUp.token as string}` }
  const [mine] = (await app.inject({ method: 'POST', url: '/api/v1/table/posts/insert', headers: auth, payload: { values: { owner: signUp.record.id, title: 'Mine' }, returning: ['id'] } })).json()
  t.same((await app.inject({ method: 'POST', url: '/api/v1/action/pub', headers: auth, payload: { id: mine.id } })).json(), [[{ id: mine.id }]], 'a step reads {:id} from the action\'s params')
  t.same((await app.inject({ method: 'POST', url: '/api/v1/action/pub', headers: auth, payload: { id: "x' | id != '" } })).json(), [[]], 'bound: a quote reaches no other row')
})
