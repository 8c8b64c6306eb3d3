// `request.*` as expressions read it (lib/request-globals.ts): plain own properties, `url` made on
// first read from appUrl and the request's path, and one getter shared by every request's object
// (a getter made per object gave each a hidden class of its own, which kept every request alive
// through young-generation collections).
import t from 'tap'
import { requestGlobals } from '../../lib/request-globals.js'
import { globalAt } from '../../lib/expr/trace.js'

const request = (url: string) => ({ method: 'GET', url, headers: { host: 'forged.example', 'x-a': '1' }, query: { q: 'x' } })

t.test('url is an own property read lazily, from appUrl and the path, never the Host header', async (t) => {
  const globals = requestGlobals(request('/api/v1/table/posts/select?limit=2'), 'https://app.example.com:8443/base')
  t.same(Object.keys(globals), ['method', 'headers', 'query', 'url'], 'own enumerable properties, in this order')
  t.ok(Object.hasOwn(globals, 'url'), 'expressions see only own properties')
  t.equal(globalAt({ request: globals }, 'request.url.origin'), 'https://app.example.com:8443')
  t.equal(globalAt({ request: globals }, 'request.url.pathname'), '/api/v1/table/posts/select')
  t.equal(globalAt({ request: globals }, 'request.url.search'), '?limit=2')
  t.equal(globalAt({ request: globals }, 'request.method'), 'GET')
  t.equal(globalAt({ request: globals }, 'request.constructor'), null, 'nothing from the prototype')
  t.equal(globals.url, globals.url, 'made once')
  t.same(JSON.parse(JSON.stringify(globals)).url.host, 'app.example.com:8443', 'serialised with the url')
})

t.test('the url is parsed only when read', async (t) => {
  const globals = requestGlobals(request('/x'), 'not a url')
  t.equal(globals.method, 'GET', 'made without parsing anything')
  t.throws(() => globals.url, 'a bad appUrl fails only where the url is read')
})

t.test('one getter for every request', async (t) => {
  const a = requestGlobals(request('/a'), 'http://localhost')
  const b = requestGlobals(request('/b'), 'http://localhost')
  const getterOf = (o: object) => Object.getOwnPropertyDescriptor(o, 'url')?.get
  t.type(getterOf(a), 'function')
  t.equal(getterOf(a), getterOf(b), 'the same function, so both objects share one hidden class')
  t.equal(a.url.pathname, '/a')
  t.equal(b.url.pathname, '/b')
  t.same(requestGlobals({ method: 'POST', url: '/c', headers: {} }, 'http://localhost').query, {}, 'query defaults to {}')
})
