// fastbase registers @fastify/multipart without its disk mode's clean-up hook (decision D139,
// plugins/external/multipart.ts). That is safe only while that hook is the one thing the plugin runs
// after an answer: a new version adding another would be left out too, so this checks the plugin itself.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyMultipart from '@fastify/multipart'
import multipart, { DISK_CLEANUP_HOOK } from '../../plugins/external/multipart.js'

const AFTER_THE_HANDLER = new Set(['preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'])

/** The hooks `register` adds to `app`, by kind, with their code. */
async function hooksAdded (register: (app: FastifyInstance) => Promise<void>): Promise<Array<[string, string]>> {
  const app = Fastify()
  const added: Array<[string, string]> = []
  const addHook = app.addHook.bind(app)
  app.addHook = ((name: string, hook: () => void) => { added.push([name, String(hook)]); return addHook(name as 'onRequest', hook) }) as typeof app.addHook
  await register(app)
  await app.ready()
  await app.close()
  return added
}

t.test('the plugin runs one hook after an answer: the clean-up of files saved by saveRequestFiles', async (t) => {
  const after = (await hooksAdded(async (app) => { await app.register(fastifyMultipart) })).filter(([name]) => AFTER_THE_HANDLER.has(name))
  t.equal(after.length, 1, 'one hook')
  t.equal(after[0]?.[0], DISK_CLEANUP_HOOK, DISK_CLEANUP_HOOK)
  t.match(after[0]?.[1], /cleanRequestFiles/, 'it deletes the saved files')
})

t.test('fastbase registers it without that hook, and with its parser and request methods', async (t) => {
  const added = await hooksAdded(async (app) => { await app.register(multipart) })
  t.same(added.filter(([name]) => AFTER_THE_HANDLER.has(name)), [], 'no hook after the answer')
  const app = Fastify()
  await app.register(multipart)
  app.post('/upload', async (request) => {
    const names: string[] = []
    for await (const part of request.parts()) {
      names.push(part.type === 'file' ? `${part.fieldname}:${part.filename}:${(await part.toBuffer()).toString()}` : `${part.fieldname}=${String(part.value)}`)
    }
    return { multipart: request.isMultipart(), names }
  })
  const boundary = 'fastbase-boundary'
  const payload = [
    `--${boundary}`, 'Content-Disposition: form-data; name="title"', '', 'hello',
    `--${boundary}`, 'Content-Disposition: form-data; name="file"; filename="a.txt"', 'Content-Type: text/plain', '', 'file body',
    `--${boundary}--`, ''
  ].join('\r\n')
  const res = await app.inject({ method: 'POST', url: '/upload', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json(), { multipart: true, names: ['title=hello', 'file:a.txt:file body'] }, 'fields and files are read as the plugin reads them')
  t.ok(app.hasRequestDecorator('saveRequestFiles'), 'its request methods are there')
  await app.close()
})
