// The panel's and the explorer's plugins load on their first visit (decision D136): an app that has
// answered API requests only has not loaded @fastify/static, @fastify/swagger-ui or glob; the first
// visit loads them and is answered from them. Tap runs this file in a process of its own, so what
// the module cache holds is what this app loaded.
import t from 'tap'
import { createRequire } from 'node:module'
import { buildApp } from '../helper.js'

const LAZY = ['/node_modules/@fastify/static/', '/node_modules/@fastify/swagger-ui/', '/node_modules/glob/']
const loaded = (): string[] => LAZY.filter((part) => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes(part)))

t.test('the panel and the explorer load their plugins on first use', async (t) => {
  const app = await buildApp(t, { jwtSecret: 'lazy-loading-secret', appUrl: 'http://127.0.0.1', tables: [] })
  t.equal((await app.inject('/api/v1/health')).statusCode, 200)
  t.equal((await app.inject('/api/v1/doc')).statusCode, 200, 'the API document needs none of them')
  t.equal((await app.inject('/panel/')).statusCode, 200, 'nor does the panel\'s page')
  t.same(loaded(), [], 'not loaded before a file is asked for')

  const script = await app.inject('/panel/app.js')
  t.equal(script.statusCode, 200)
  t.match(script.headers['content-type'], /javascript/)
  t.match(script.headers['content-security-policy'], /default-src 'none'/, 'the panel\'s headers')
  t.same(loaded(), ['/node_modules/@fastify/static/', '/node_modules/glob/'], 'the panel\'s first file loads @fastify/static')

  for (const url of ['/panel/../package.json', '/panel/%2e%2e/package.json', '/panel/..%2fpackage.json', '/panel/client/../../package.json', '/panel/client/index.d.ts']) {
    const outside = await app.inject(url)
    t.not(outside.statusCode, 200, `${url}: not served`)
    t.notMatch(outside.body, /"devDependencies"/, `${url}: nothing of package.json`)
  }

  const explorer = await app.inject('/api/v1/doc/ui/')
  t.equal(explorer.statusCode, 200)
  t.match(explorer.body, /swagger/i)
  const document = await app.inject('/api/v1/doc/ui/json')
  t.same(document.json(), (await app.inject('/api/v1/doc')).json(), 'the explorer shows the app\'s own document')
  t.same(loaded(), LAZY, 'the explorer\'s first visit loads @fastify/swagger-ui')
})
