// `fastbase exec` against an app listening in this process (asynchronous spawns only).
import t, { type Test } from 'tap'
import { adminToken, buildApp } from '../../helper.js'
import { fastbase, skip } from '../../cli-run.js'
import { baseFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const execConfig: DatabaseSettings = {
  appUrl: 'http://localhost:3000',
  jwtSecret: 'a-test-secret-that-is-long-enough-to-use',
  tables: [{ name: 'items', autoSetUid: true, fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text' }] }]
}

t.test('exec against a running app', { skip }, async (t: Test) => {
  const app = await buildApp(t, execConfig)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const env = { ADMIN_SERVICE_TOKEN: adminToken, FASTBASE_URL: url }

  const insert = await fastbase(['exec', 'POST', 'table/items/insert', '{"values":{"title":"first"},"returning":["id","title"]}'], { env })
  t.equal(insert.code, 0, insert.stderr)
  const [row] = JSON.parse(insert.stdout)
  t.equal(row.title, 'first')

  const list = await fastbase(['exec', 'get', '/api/v1/table/items/list', '--url', url], { env: { ADMIN_SERVICE_TOKEN: adminToken } })
  t.equal(list.code, 0, list.stderr)
  t.match(JSON.parse(list.stdout), { items: [{ id: row.id, title: 'first' }], total: 1 }, 'GET with --url and a full /api/ path')

  const missing = await fastbase(['exec', 'GET', 'table/nope/list'], { env })
  t.equal(missing.code, 1, 'a non-2xx answer')
  t.same(JSON.parse(missing.stdout), { code: 404, message: 'Table not found - nope', data: {} })
  t.match(missing.stderr, /HTTP 404/)

  const wrongToken = await fastbase(['exec', 'GET', 'table/items/list'], { env: { ...env, ADMIN_SERVICE_TOKEN: 'wrong' } })
  t.equal(wrongToken.code, 1)

  const badMethod = await fastbase(['exec', 'FETCH', 'table/items/list'], { env })
  t.equal(badMethod.code, 2)
  t.match(badMethod.stderr, /unknown method "FETCH"/)
  const badBody = await fastbase(['exec', 'POST', 'table/items/insert', '{nope'], { env })
  t.equal(badBody.code, 2)
  t.match(badBody.stderr, /not valid JSON/)
  const noToken = await fastbase(['exec', 'GET', 'table/items/list'], { env: { FASTBASE_URL: url } })
  t.equal(noToken.code, 2)
  t.match(noToken.stderr, /ADMIN_SERVICE_TOKEN is not set/)
  const noRoute = await fastbase(['exec', 'GET'], { env })
  t.equal(noRoute.code, 2)

  await app.close()
  const refused = await fastbase(['exec', 'GET', 'table/items/list'], { env })
  t.equal(refused.code, 1, 'no server')
  t.match(refused.stderr, /connection refused/)
})
