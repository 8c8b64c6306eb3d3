// A bounded, repeatable malformed-input fuzz of every route (decision D38): a fixed seed, a few
// thousand requests per dialect, built from the pieces attackers combine (expression tokens,
// prototype-named keys, deep and huge values, wrong types, wrong content types, broken multipart).
// The bar: no 5xx, every error in the standard body, no request left unanswered.
import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../helper.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const SEED = 0x5eed
const REQUESTS_PER_DIALECT = 2500
const HANG_MS = 5000

const config: DatabaseSettings = {
  jwtSecret: 'fuzz-secret',
  appUrl: 'http://localhost:3000',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'email', type: 'email', sqlType: 'text', unique: true, usage: 'auth_email' },
        { name: 'email_verified', type: 'bool', sqlType: 'boolean', usage: 'auth_email_verified' },
        { name: 'password', type: 'password', sqlType: 'text', noSelect: true, usage: 'auth_password' },
        { name: 'role', type: 'text', sqlType: 'text', usage: 'auth_audience' }
      ],
      extensions: [
        { name: 'auth', jwtSecret: 'fuzz-users' },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'role == null', updateRule: 'auth.uid == id & new.role == role', deleteRule: null }
      ]
    },
    {
      name: 'items',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true, default: { l: '' } },
        { name: 'views', type: 'integer', sqlType: 'integer', check: { q: 'views >= 0' } },
        { name: 'price', type: 'number', sqlType: 'real' },
        { name: 'pub', type: 'bool', sqlType: 'boolean' },
        { name: 'meta', type: 'json', sqlType: 'json' },
        { name: 'at', type: 'date', sqlType: 'timestamp' },
        { name: 'kind', type: 'select', sqlType: 'text', values: ['a', 'b'] },
        { name: 'owner', type: 'relation', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } },
        { name: 'secret', type: 'text', sqlType: 'text', noSelect: true },
        { name: 'file', type: 'file', sqlType: 'text' }
      ],
      extensions: [{ name: 'rules', listRule: 'pub == true | owner == auth.uid', viewRule: 'pub == true', createRule: 'true', updateRule: 'pub == true', deleteRule: 'pub == true' }]
    }
  ],
  actions: [
    { name: 'bump', params: { id: 'integer', by: { type: 'integer', optional: true, default: 1 } }, steps: [{ type: 'UPDATE', table: 'items', where: 'id == params.id', set: { views: 'views + params.by' }, returning: 'id' }] },
    { name: 'count_all', guard: 'auth.uid != null', sql: { type: 'SELECT', table: 'items', selects: [{ q: 'count(*)', as: 'n' }] } }
  ]
}

/** mulberry32: small, fast, and the same sequence everywhere for the same seed. */
function random (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), a | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const TOKENS = [
  'id', 'title', 'views', 'price', 'pub', 'meta', 'at', 'kind', 'owner', 'secret', 'file', 'items', 'users', 'nope', 'new', 'new.views', 'new.secret',
  'auth.uid', 'auth.role', 'auth.__proto__', 'request.headers', 'params.x', 'constructor', 'toString', '__proto__',
  '==', '!=', '=', '~', '!~', '<', '<=', '>', '>=', '&', '|', '!', '+', '-', '*', '/', '->', '->>', '||', 'in', '(', ')', '[', ']', ',', '.', '@@', ';', '?', '$', '`',
  "'a'", "'%a%'", "'_'", "'\\\\'", "'$.a'", "'$[0]'", "'$.a.b[99999999999]'", '"x"', "'", '"', "'\u0000'", "'😀'", "'\u202e'",
  '0', '1', '-1', '0.5', '1e308', '-1e308', '9223372036854775807', '99999999999999999999999', 'true', 'false', 'null', 'NaN', 'Infinity',
  'lower(', 'upper(', 'length(', 'substring(', 'replace(', 'concat(', 'count(', 'count(*)', 'sum(', 'coalesce(', 'abs(', 'round(',
  'unixepoch(', 'datetime(', 'date(', 'json_set(', 'json_contains(', 'sleep(', 'randomblob(', 'AND', 'OR', 'SELECT', 'DROP', '--', '/*'
]
const KEYS = ['title', 'views', 'price', 'pub', 'meta', 'at', 'kind', 'owner', 'secret', 'file', 'id', 'nope', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'a.b', 'values', 'where']

function fuzzer (next: () => number) {
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]
  const chance = (p: number) => next() < p

  function expression (): string {
    if (chance(0.05)) return pick(['(', '!', '-']).repeat(int(400)) + 'id'
    if (chance(0.03)) return `'${'a'.repeat(int(80))}' ~ '${'%a'.repeat(int(12))}%b'`
    const parts: string[] = []
    for (let i = int(12); i >= 0; i--) parts.push(pick(TOKENS))
    return parts.join(chance(0.7) ? ' ' : '')
  }

  function value (depth = 0): unknown {
    switch (int(depth > 3 ? 6 : 9)) {
      case 0: return null
      case 1: return chance(0.5)
      case 2: return pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER])
      case 3: return pick(['', 'x', '@filePayload', '@null', '2026-11-21T15:07:47Z', 'not a date', '{"a":1}', '\u0000', 'x'.repeat(int(5000))])
      case 4: return expression()
      case 5: return pick(['a', 'b', 'c'])
      case 6: return Array.from({ length: int(4) }, () => value(depth + 1))
      case 7: return Object.fromEntries(Array.from({ length: int(4) }, () => [pick(KEYS), value(depth + 1)]))
      default: return chance(0.5) ? JSON.parse('['.repeat(200) + ']'.repeat(200)) : { toString: 1, constructor: { prototype: 1 } }
    }
  }

  const text = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))
  const record = () => Object.fromEntries(Array.from({ length: int(5) }, () => [pick(KEYS), value()]))
  const list = () => (chance(0.5) ? Array.from({ length: int(6) }, () => chance(0.5) ? pick(KEYS) : expression()).join(', ') : Array.from({ length: int(200) }, () => pick(KEYS)))
  const read = () => Object.fromEntries(Array.from({ length: int(5) }, () => {
    const key = pick(['where', 'order', 'sort', 'select', 'group', 'limit', 'offset', 'distinct', 'fields', ...KEYS])
    const v = key === 'where' ? expression() : key === 'limit' || key === 'offset' ? pick([0, 1, -1, 1e9, 'x', 2.5]) : key === 'distinct' ? pick([true, 'true', 'x']) : list()
    return [key, v]
  }))

  const stringQuery = (params: Record<string, unknown>) => Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))

  function multipart (): { headers: Record<string, string>, payload: string } {
    const boundary = 'fz' + int(1e6)
    const parts: string[] = []
    for (let i = int(6); i >= 0; i--) {
      const name = chance(0.1) ? '' : chance(0.1) ? Array(int(300)).fill('a').join('.') : pick(['@filePayload', '@jsonPayload', 'values.title', 'values.file', 'values.__proto__', 'returning', 'where', 'setValues.views', 'values'])
      const file = name === '@filePayload' || chance(0.1) ? `; filename="${pick(['a.txt', '../../etc/passwd', '', '%00.txt', 'ü.png'])}"` : ''
      const body = name === '@jsonPayload' ? JSON.stringify(chance(0.8) ? { values: record() } : value()) : text(value())
      parts.push(`--${boundary}\r\nContent-Disposition: form-data${name === '' ? '' : `; name="${name}"`}${file}\r\n\r\n${body}\r\n`)
    }
    let payload = parts.join('') + `--${boundary}--\r\n`
    if (chance(0.2)) payload = payload.slice(0, int(payload.length))
    return { headers: { 'content-type': chance(0.1) ? 'multipart/form-data' : `multipart/form-data; boundary=${boundary}` }, payload }
  }

  function body (json: unknown): Pick<InjectOptions, 'headers' | 'payload'> {
    switch (int(10)) {
      case 0: return multipart()
      case 1: return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `values=${encodeURIComponent(expression())}&where=${encodeURIComponent(expression())}` }
      case 2: return { headers: { 'content-type': 'text/plain' }, payload: expression() }
      case 3: return { headers: { 'content-type': 'application/json' }, payload: pick(['', '{', 'null', '[]', '"x"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}']) }
      default: return { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(json) }
    }
  }

  /** One request against a random route with random (mostly malformed) input. */
  function request (): InjectOptions {
    const table = pick(['items', 'users', 'nope', '__proto__'])
    const id = pick(['1', '2', 'x', '%00', '-1', '9999999999999999999999', 'a'.repeat(300), '..%2F..', '%F0%9F%98%80'])
    const auth: Record<string, string> = chance(0.2) ? { authorization: pick([`Bearer ${adminToken}`, 'Bearer x.y.z', 'Bearer ', adminToken, 'Basic abc']) } : {}
    const q = stringQuery(read())
    switch (int(16)) {
      case 0: return { method: 'GET', url: `/api/v1/table/${table}/select`, query: q, headers: auth }
      case 1: return { method: 'POST', url: `/api/v1/table/${table}/select`, ...body(read()) }
      case 2: return { method: 'GET', url: `/api/v1/table/${table}/list`, query: q, headers: auth }
      case 3: return { method: 'POST', url: `/api/v1/table/${table}/list`, ...body(read()) }
      case 4: return { method: 'GET', url: `/api/v1/table/${table}/view/${id}`, query: stringQuery({ select: list(), where: expression() }) }
      case 5: return { method: 'POST', url: `/api/v1/table/${table}/insert`, ...body({ values: chance(0.7) ? record() : Array.from({ length: int(5) }, record), returning: list(), or: pick(['IGNORE', 'REPLACE', 'X', undefined]) }) }
      case 6: return { method: 'POST', url: `/api/v1/table/${table}/update`, ...body({ where: expression(), setValues: record(), set: chance(0.3) ? { views: expression() } : undefined, returning: list(), or: pick(['IGNORE', 'REPLACE', undefined]) }) }
      case 7: return { method: 'POST', url: `/api/v1/table/${table}/delete`, ...body({ where: expression(), returning: list() }) }
      case 8: return { method: 'POST', url: `/api/v1/table/${table}/edit/${id}`, query: stringQuery({ or: pick(['INSERT', 'REPLACE', 'x']), returning: list() }), ...body(record()) }
      case 9: return { method: 'POST', url: `/api/v1/table/users/auth/${pick(['sign-up', 'login-password', 'refresh-token', 'change-password', 'request-password-reset', 'confirm-password-reset', 'request-verification', 'confirm-verification', 'logout', 'nope'])}`, ...body({ ...record(), email: value(), password: value(), identity: value(), token: value(), refresh_token: value() }) }
      case 10: return { method: 'POST', url: `/api/v1/action/${pick(['bump', 'count_all', 'nope', '__proto__', 'constructor'])}`, ...body(chance(0.5) ? { id: value(), by: value() } : value()) }
      case 11: return { method: 'GET', url: `/api/v1/files/${table}/${id}/${pick(['a.txt', '..%2F..%2Fetc%2Fpasswd', '%00', 'x'.repeat(500)])}`, headers: { range: pick(['bytes=0-1', 'bytes=-1', 'bytes=9-1', 'bytes=x', '']) } }
      case 12: return { method: 'POST', url: '/api/v1/admin/login', ...body({ password: value() }) }
      case 13: return { method: pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']), url: `/api/v1/${pick(['health', 'table', 'table/items', 'doc', 'x'])}/${id}` }
      case 14: return { method: 'GET', url: `/api/v1/table/items/select?${pick(['where=%', 'where=%E0%A4%A', 'limit=1&limit=2', 'select[]=id&select[]=title', 'order[x]=1', 'a'.repeat(9000) + '=1'])}` }
      default: return { method: 'POST', url: `/api/v1/table/${table}/insert`, headers: { 'content-type': 'application/json', ...auth }, payload: JSON.stringify({ values: { meta: value(), title: value(), views: value(), at: value(), kind: value() } }) }
    }
  }
  return { request }
}

async function answered (app: FastifyInstance, options: InjectOptions) {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), HANG_MS) })
  try {
    return await Promise.race([app.inject(options), hang])
  } finally {
    clearTimeout(timer)
  }
}

forEachDialect(t, `fuzz: ${REQUESTS_PER_DIALECT} malformed requests, seed ${SEED}`, async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  await app.inject({ method: 'POST', url: '/api/v1/table/items/insert', headers: { authorization: `Bearer ${adminToken}` }, payload: { values: [{ title: 'a', views: 1, pub: true, meta: { a: 1 } }, { title: 'b', views: 2, pub: false, meta: 'x' }] } })
  const { request } = fuzzer(random(SEED))
  const failures: string[] = []
  const statuses = new Map<number, number>()
  for (let i = 0; i < REQUESTS_PER_DIALECT; i++) {
    const options = request()
    const res = await answered(app, options)
    const label = `#${i} ${options.method} ${String(options.url).slice(0, 80)}`
    if (res === undefined) {
      failures.push(`${label}: no answer within ${HANG_MS} ms`)
      continue
    }
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    if (res.statusCode >= 500) failures.push(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}`)
    else if (res.statusCode >= 400 && res.headers['content-type']?.toString().startsWith('application/json')) {
      const b = res.json() as { code?: unknown, message?: unknown }
      if (b.code !== res.statusCode || typeof b.message !== 'string') failures.push(`${label}: non-standard error body ${res.body.slice(0, 200)}`)
    } else if (res.statusCode >= 400) {
      failures.push(`${label}: error without a JSON body (${String(res.headers['content-type'])})`)
    }
  }
  t.same(failures, [], 'no 5xx, no hang, every error in the standard body')
  t.ok((statuses.get(200) ?? 0) > 50 && [...statuses.keys()].filter((s) => s >= 400).length >= 4, `a mix of answers: ${JSON.stringify(Object.fromEntries(statuses))}`)
})
