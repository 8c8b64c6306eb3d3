// plugins/request-logger.ts: a request's logger is pino's child, made only when the request logs
// (decision D133). The lines are the same as with Fastify's own children: the request id bound, the
// level and serializers of the server's logger; a request that logs nothing makes no child.
import t, { type Test } from 'tap'
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { Writable } from 'node:stream'
import { requestLoggersOnFirstUse } from '../../plugins/request-logger.js'

async function server (t: Test) {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); done() } })
  const app = Fastify({ logger: { level: 'info', stream }, logController: new LogController({ disableRequestLogging: true }) })
  t.teardown(() => app.close())
  requestLoggersOnFirstUse(app)
  let children = 0
  // Counts the children made of the server's logger; pino's children inherit the spy, and their own children are not counted.
  const server = app.log
  const child = server.child
  server.child = function (this: FastifyBaseLogger, bindings, options) {
    if (this === server) children++
    return child.call(this, bindings, options)
  }
  app.get('/quiet', async () => ({ ok: true }))
  app.get('/loud', async (request) => {
    request.log.info({ answer: 42 }, 'hello')
    request.log.debug('below the level')
    return { level: request.log.level, debug: (request.log as unknown as { isLevelEnabled: (l: string) => boolean }).isLevelEnabled('debug') }
  })
  app.get('/bindings', async (request) => (request.log as unknown as { bindings: () => Record<string, unknown> }).bindings())
  app.get('/nested', async (request) => {
    request.log.child({ step: 'inner' }).warn('from a child')
    return {}
  })
  app.get('/fails', async (_request, reply) => {
    reply.log.error({ err: new Error('boom') }, 'failed')
    return reply.code(500).send({})
  })
  await app.ready()
  return { app, lines, made: () => children }
}

t.test('a request that logs nothing makes no child logger', async (t) => {
  const { app, lines, made } = await server(t)
  for (let i = 0; i < 5; i++) t.equal((await app.inject('/quiet')).statusCode, 200)
  t.equal(made(), 0, 'no pino child for five quiet requests')
  t.same(lines, [], 'and no line')
})

t.test('a request that logs gets pino\'s child, bound to its id', async (t) => {
  const { app, lines, made } = await server(t)
  const res = await app.inject({ url: '/loud', headers: { 'request-id': 'ignored' } })
  t.same(res.json(), { level: 'info', debug: false }, 'the level is the server logger\'s')
  t.equal(made(), 1, 'one child, made on the first line')
  t.equal(lines.length, 1, 'debug stays below the level')
  t.match(lines[0], { level: 30, msg: 'hello', answer: 42, reqId: String })
  t.equal(lines[0].reqId, 'req-1', 'the request\'s own id')
  const bound = await app.inject('/bindings')
  t.same(bound.json(), { reqId: 'req-2' }, 'bindings() as pino answers them')
})

t.test('children of a request logger, and the reply\'s logger', async (t) => {
  const { app, lines } = await server(t)
  await app.inject('/nested')
  t.match(lines.at(-1), { level: 40, msg: 'from a child', step: 'inner', reqId: 'req-1' })
  const failed = await app.inject('/fails')
  t.equal(failed.statusCode, 500)
  t.match(lines.at(-1), { level: 50, reqId: 'req-2', err: { message: 'boom' } }, 'the reply logs with its request id too')
})

t.test('a server that logs nothing keeps Fastify\'s silent logger', async (t) => {
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  requestLoggersOnFirstUse(app)
  app.get('/', async (request) => ({ same: request.log === app.log }))
  t.same((await app.inject('/')).json(), { same: true }, 'no factory installed: every request shares the silent logger')
})
