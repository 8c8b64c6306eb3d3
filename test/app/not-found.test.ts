// Unknown paths and the panel's listed address: standalone (the `options` export, as `npm start`
// passes it) every unknown path answers fastbase's JSON 404; embedded, only those under the API
// prefix do (test/app/embedding.test.ts: the host's own 404 elsewhere). `<base>/panel/`, where the
// interface lists the panel, sends callers to the panel's real prefix.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fastbase, { options as serverOptions, type FastbaseOptions } from '../../app.js'
import { adminToken, freshDir, sharedDatabase } from '../helper.js'
import { baseFields } from '../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'not-found-secret',
  appUrl: 'http://127.0.0.1',
  tables: [{ name: 'notes', autoSetUid: true, fields: [...baseFields], extensions: [{ name: 'rules', listRule: 'true' }] }]
}

async function serve (t: Test, opts: FastbaseOptions, hostPrefix = ''): Promise<ReturnType<typeof Fastify>> {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  const options = { config, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t), adminServiceToken: adminToken, ...opts }
  if (hostPrefix === '') await app.register(fastbase, options)
  else await app.register(async (scope) => { await scope.register(fastbase, options) }, { prefix: hostPrefix })
  await app.ready()
  return app
}

t.test('standalone: every unknown path is the JSON 404, with the request id', async (t) => {
  const app = await serve(t, { standalone: serverOptions.standalone })
  for (const url of ['/nope', '/', '/panel/missing.js', '/api/v1/nope?x=1']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.same(res.json(), { code: 404, message: `Route not found - GET ${url.split('?')[0]}`, data: {} }, `${url}: { code, message, data }`)
    t.ok(res.headers['fastbase-error-code'], `${url}: the stable error code`)
    t.ok(res.headers['x-request-id'], `${url}: x-request-id`)
  }
})

t.test('embedded: outside the API prefix the host keeps Fastify\'s (or its own) 404', async (t) => {
  const app = await serve(t, {})
  const res = await app.inject('/nope')
  t.equal(res.statusCode, 404)
  t.notSame(res.json(), { code: 404, message: 'Route not found - GET /nope' }, 'not fastbase\'s body')
  t.same((await app.inject('/api/v1/nope')).json(), { code: 404, message: 'Route not found - GET /api/v1/nope', data: {} }, 'fastbase\'s under its prefix')
})

t.test('<base>/panel/ sends callers to the panel', async (t) => {
  const app = await serve(t, {})
  for (const url of ['/api/v1/panel/', '/api/v1/panel']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 302, url)
    t.equal(res.headers.location, '/panel/', `${url} -> /panel/`)
  }
  t.equal((await app.inject('/panel/')).statusCode, 200, 'where the panel is')

  const custom = await serve(t, { prefix: '/custom/v2', panelPrefix: '/admin' }, '/shop')
  t.equal((await custom.inject('/shop/custom/v2/panel/')).headers.location, '/shop/admin/', 'custom prefixes under a host prefix')
  t.equal((await custom.inject('/shop/admin/')).statusCode, 200)

  const none = await serve(t, { panelPrefix: false })
  t.same((await none.inject('/api/v1/panel/')).json(), { code: 404, message: 'Route not found - GET /api/v1/panel/', data: {} }, 'no panel: the JSON 404')

  const same = await serve(t, { panelPrefix: '/api/v1/panel' })
  t.equal((await same.inject('/api/v1/panel/')).statusCode, 200, 'a panel served at <base>/panel is served, not redirected')
})
