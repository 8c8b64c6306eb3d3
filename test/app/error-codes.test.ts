// Every error answer carries its stable code from the one table (lib/errors.ts) in the
// Fastbase-Error-Code header, beside teenybase's body { code: <status>, message, data? }: errors
// fastbase raises, errors Fastify and its plugins raise (bad JSON, media type, body size, rate
// limits), unknown routes, and an unexpected failure.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_CODES_BY_STATUS } from '../../lib/errors.js'
import { adminToken, buildApp, forEachDialect } from '../helper.js'
import { config, signUp } from '../fixtures/realtime/client.js'

interface Answer { status: number, code: string | undefined, body: any }

forEachDialect(t, 'each error answer names its code', async (t, dialect) => {
  const app = await buildApp(t, config({ enabled: false }, { rateLimit: { max: 2, timeWindow: 60_000 } }), { dialect })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const call = async (method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${base}/api/v1${path}`, { method, body, headers: { 'content-type': 'application/json', ...headers } })
    const text = await res.text()
    return { status: res.status, code: res.headers.get('fastbase-error-code') ?? undefined, body: text === '' ? undefined : JSON.parse(text) }
  }
  const json = (value: unknown) => JSON.stringify(value)
  const expectCode = (answer: Answer, status: number, code: string, what: string) => {
    t.equal(answer.status, status, `${what}: status`)
    t.equal(answer.code, code, `${what}: ${code}`)
    t.ok(ERROR_CODES_BY_STATUS[status]?.includes(code), `${what}: ${code} is listed under ${status} in the API document`)
    t.equal(answer.body?.code, status, `${what}: the body's code is still the status`)
    t.type(answer.body?.message, 'string', `${what}: a message`)
  }
  const ann = await signUp(base, 'ann')
  const auth = { authorization: `Bearer ${ann.token}` }

  expectCode(await call('GET', '/nowhere'), 404, 'FB_ERR_ROUTE_NOT_FOUND', 'unknown route')
  expectCode(await call('GET', '/table/posts/view/%E0%A4%A'), 400, 'FB_ERR_BAD_REQUEST', 'a path the router cannot decode')
  expectCode(await call('GET', '/table/nope/list'), 404, 'FB_ERR_TABLE_NOT_FOUND', 'unknown table')
  expectCode(await call('GET', '/table/posts/view/missing', undefined, auth), 404, 'FB_ERR_NOT_FOUND', 'unknown record')
  expectCode(await call('POST', '/action/nope', '{}'), 404, 'FB_ERR_ACTION_NOT_FOUND', 'unknown action')
  expectCode(await call('POST', '/table/posts/insert', json({ values: 'not rows' }), auth), 400, 'FB_ERR_VALIDATION', 'a body off its schema')
  expectCode(await call('POST', '/table/posts/insert', '{"values": ', auth), 400, 'FB_ERR_BAD_REQUEST', 'malformed JSON')
  expectCode(await call('GET', `/table/posts/list?where=${encodeURIComponent('nope ==')}`), 400, 'FB_ERR_EXPRESSION', 'a bad where')
  expectCode(await call('POST', '/table/posts/insert', json({ values: { author_id: ann.id, title: 'x' } })), 403, 'FB_ERR_FORBIDDEN', 'a createRule that refuses (anonymous)')
  expectCode(await call('POST', '/table/posts/insert', json({ values: { author_id: ann.id, title: 'x' } }), { authorization: 'Bearer not.a.token' }), 401, 'FB_ERR_INVALID_TOKEN', 'a bad token')
  expectCode(await call('GET', '/settings'), 401, 'FB_ERR_UNAUTHORIZED', 'an admin route, anonymous')
  t.equal((await call('POST', '/table/posts/insert', json({ values: { id: 'p1', author_id: ann.id, title: 'x' } }), auth)).status, 200)
  expectCode(await call('POST', '/table/posts/insert', json({ values: { id: 'p1', author_id: ann.id, title: 'again' } }), auth), 400, 'FB_ERR_CONSTRAINT', 'a duplicate key')
  const xml = await call('POST', '/table/posts/insert', '<values/>', { ...auth, 'content-type': 'application/xml; charset=utf-8' })
  expectCode(xml, 415, 'FB_ERR_UNSUPPORTED_MEDIA_TYPE', 'a media type no route reads')
  t.equal(xml.body.message, 'Unsupported Content-Type: application/xml', 'the message names the type the caller sent')
  expectCode(await call('POST', '/table/posts/insert', json({ values: { title: 'x'.repeat(12 * 1024 * 1024) } }), auth), 413, 'FB_ERR_PAYLOAD_TOO_LARGE', 'a body over the limit')

  const signIn = () => call('POST', '/table/users/auth/login-password', json({ identity: 'ann', password: 'wrong password' }))
  const attempts = [await signIn(), await signIn(), await signIn()]
  expectCode(attempts[2], 429, 'FB_ERR_RATE_LIMITED', 'the third sign-in in a minute (limit 2)')

  // A table dropped behind the server's back: an unexpected database error, a 500 without details in the body's code.
  await app.fastbase.db.raw('DROP TABLE hidden')
  expectCode(await call('GET', '/table/hidden/list', undefined, { authorization: `Bearer ${adminToken}` }), 500, 'FB_ERR_INTERNAL', 'an unexpected failure')

  const ok = await call('GET', '/health')
  t.equal(ok.status, 200, 'health')
  t.equal(ok.code, undefined, 'no code header on a success')
})

t.test('the catalogue, the table and docs/errors.md agree', async (t) => {
  const root = join(import.meta.dirname, '..', '..')
  const source = readFileSync(join(root, 'lib', 'errors.ts'), 'utf8')
  const errorsDoc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8')
  // The factories (and the client-error mapping) start after the catalogue: read the codes from there.
  const factories = source.slice(source.indexOf('const CLIENT_ERROR_CODES'))
  const raised = new Set([...factories.matchAll(/'(FB_ERR_[A-Z_]+)'/g)].map((m) => m[1]))
  const listed = new Set(Object.values(ERROR_CODES_BY_STATUS).flat())
  t.ok(raised.size >= 25, `${raised.size} codes raised`)
  for (const code of raised) {
    t.ok(listed.has(code), `${code} is in ERROR_CODES_BY_STATUS`)
    t.match(errorsDoc, `\`${code}\``, `${code} is in the table of docs/errors.md`)
  }
  for (const code of listed) t.ok(raised.has(code), `${code} is raised by the table`)
  t.notOk(raised.has('FB_ERR_CONFIG'), 'FB_ERR_CONFIG (a start-up error) is not among the HTTP answers')
})
