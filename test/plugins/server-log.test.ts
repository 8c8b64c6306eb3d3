// A request's logger (plugins/server-log.ts, decision D142): on a server that runs without a Fastify
// logger and logs through its own, a child of that one bound to the request id; on a server with a
// logger, Fastify's own request logger.
import t from 'tap'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import { ownServerLog, requestLog, logsOnItsOwn } from '../../plugins/server-log.js'

const bindingsOf = (log: FastifyBaseLogger): unknown => 'bindings' in log && typeof log.bindings === 'function' ? log.bindings() : undefined

t.test('a server without a logger gets its own, and its requests log through it with their id', async (t) => {
  const app = Fastify({ logger: false, genReqId: () => 'id-1' })
  const silent = app.log
  ownServerLog(app, 0)
  t.not(app.log, silent, 'the server has a log of its own')
  t.ok(logsOnItsOwn(app))
  app.get('/probe', async (request) => {
    const log = requestLog(request)
    return { fastifys: log === request.log, bindings: bindingsOf(log), level: log.level }
  })
  const answer = (await app.inject('/probe')).json()
  t.same(answer.bindings, { reqId: 'id-1' }, 'bound to the request id')
  t.equal(answer.fastifys, false, 'not Fastify\'s silent logger')
  await app.close()
})

t.test('a server with a logger keeps it, and its requests log through Fastify\'s', async (t) => {
  const app = Fastify({ logger: { level: 'silent' } })
  const own = app.log
  ownServerLog(app, 0)
  t.equal(app.log, own, 'unchanged')
  t.notOk(logsOnItsOwn(app))
  app.get('/probe', async (request) => ({ fastifys: requestLog(request) === request.log }))
  t.same((await app.inject('/probe')).json(), { fastifys: true })
  await app.close()
})
