// Differential check of D132 (written by an attacker's review): after random writes through every
// path, each list's total (kept or carried) equals a fresh count (the same where with an extra clause
// that is always true but names a new value, so never kept).
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { totalCacheCounts } from '../../../lib/crud/total-cache.js'

const open = { createRule: 'true', updateRule: 'true', deleteRule: 'true' }
const config: DatabaseSettings = {
  jwtSecret: 'total-carry-fuzz-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    { name: 'people', fields: [{ name: 'id', type: 'text', sqlType: 'text', primary: true }, { name: 'active', type: 'bool', sqlType: 'boolean', notNull: true }], extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', ...open }] },
    {
      name: 'posts',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true },
        { name: 'public', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'body', type: 'text', sqlType: 'text' },
        { name: 'owner_id', type: 'relation', sqlType: 'text', foreignKey: { table: 'people', column: 'id', onDelete: 'CASCADE' } }
      ],
      fullTextSearch: { fields: ['body'] },
      extensions: [{ name: 'rules', listRule: 'public == true | owner_id == auth.uid', viewRule: 'true', ...open }]
    },
    {
      name: 'comments',
      fields: [
        { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
        { name: 'body', type: 'text', sqlType: 'text', notNull: true },
        { name: 'post_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'posts', column: 'id', onDelete: 'SET NULL' } }
      ],
      extensions: [{ name: 'rules', listRule: '(post_id.public == true & post_id.owner_id.active == true) | post_id.owner_id == auth.uid', viewRule: 'true', ...open }]
    }
  ],
  actions: [
    { name: 'sql_comment', params: { id: 'integer', post: 'integer' }, sql: { type: 'INSERT', table: 'comments', values: { id: '{:id}', body: 'sql', post_id: '{:post}' }, returning: ['id'] } },
    { name: 'step_comment', params: { id: 'integer', post: 'integer' }, steps: { type: 'INSERT', table: 'comments', expr: { id: 'params.id', body: "'step'", post_id: 'params.post' } } }
  ]
} as DatabaseSettings

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

function rng (seed: number): () => number {
  return () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
}

forEachDialect(t, 'random writes, kept totals equal fresh counts', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, databaseUrl: sharedDatabase(t, dialect), setup: simulateUsers })
  const random = rng(Number(process.env.SEED ?? 7))
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]
  const req = async (method: 'GET' | 'POST', url: string, payload?: unknown, uid?: string) => {
    return await app.inject({ method, url, payload: payload as object, headers: uid === undefined ? {} : { 'x-test-uid': uid } })
  }
  const people = ['ann', 'bob', 'cat']
  await req('POST', '/api/v1/table/people/insert', { values: people.map((id, i) => ({ id, active: i !== 1 })) })
  let postId = 1
  let commentId = 1
  const posts: number[] = []
  for (let i = 0; i < 4; i++) {
    const id = postId++
    posts.push(id)
    await req('POST', '/api/v1/table/posts/insert', { values: { id, public: i % 2 === 0, owner_id: pick(people), body: pick(['apple pie', 'banana', 'apple tart']) } })
  }
  const ops: Array<[string, () => Promise<unknown>]> = [
    ['comment', async () => await req('POST', '/api/v1/table/comments/insert', { values: { id: commentId++, body: pick(['a', 'b']), post_id: pick(posts) } })],
    ['comment', async () => await req('POST', '/api/v1/table/comments/insert', { values: { id: commentId++, body: pick(['a', 'b']), post_id: pick(posts) } })],
    ['comments3', async () => await req('POST', '/api/v1/table/comments/insert', { values: [0, 1, 2].map(() => ({ id: commentId++, body: 'x', post_id: pick(posts) })) })],
    ['comment-null-post', async () => await req('POST', '/api/v1/table/comments/insert', { values: { id: commentId++, body: 'orphan' } })],
    ['comment-as-user', async () => await req('POST', '/api/v1/table/comments/insert', { values: { id: commentId++, body: 'u', post_id: pick(posts) } }, pick(people))],
    ['comment-in-process', async () => await app.fastbase.tables.comments.insert({ values: { id: commentId++, body: 'p', post_id: pick(posts) } } as never, { as: 'system' })],
    ['comment-ignore-dup', async () => await req('POST', '/api/v1/table/comments/insert?or=IGNORE', { values: { id: Math.max(1, commentId - 1), body: 'dup', post_id: pick(posts) }, or: 'IGNORE' })],
    ['comment-replace', async () => await req('POST', '/api/v1/table/comments/insert', { values: { id: Math.max(1, commentId - 2), body: 'rep', post_id: pick(posts) }, or: 'REPLACE' })],
    ['sql-action', async () => await req('POST', '/api/v1/action/sql_comment', { id: commentId++, post: pick(posts) })],
    ['step-action', async () => await req('POST', '/api/v1/action/step_comment', { id: commentId++, post: pick(posts) })],
    ['post', async () => { const id = postId++; posts.push(id); return await req('POST', '/api/v1/table/posts/insert', { values: { id, public: random() < 0.5, owner_id: pick(people), body: pick(['apple', 'pear']) } }) }],
    ['post-update', async () => await req('POST', '/api/v1/table/posts/update', { where: `id == ${pick(posts)}`, set: { public: random() < 0.5 ? 'true' : 'false' } })],
    ['post-delete', async () => await req('POST', '/api/v1/table/posts/delete', { where: `id == ${pick(posts)}` })],
    ['post-body', async () => await req('POST', '/api/v1/table/posts/update', { where: `id == ${pick(posts)}`, set: { body: `'${pick(['apple', 'pear'])}'` } })],
    ['comment-body', async () => await req('POST', '/api/v1/table/comments/update', { where: `id == ${Math.floor(random() * commentId)}`, set: { body: `'${pick(['a', 'b'])}'` } })],
    ['comment-edit', async () => await req('POST', `/api/v1/table/comments/edit/${Math.max(1, Math.floor(random() * commentId))}`, { body: pick(['a', 'b']) })],
    ['comment-move', async () => await req('POST', '/api/v1/table/comments/update', { where: `id == ${Math.floor(random() * commentId)}`, set: { post_id: String(pick(posts)) } })],
    ['person-toggle', async () => await req('POST', '/api/v1/table/people/update', { where: `id == '${pick(people)}'`, set: { active: random() < 0.5 ? 'true' : 'false' } })],
    ['comment-delete', async () => await req('POST', '/api/v1/table/comments/delete', { where: `id == ${Math.floor(random() * commentId)}` })],
    ['raw', async () => { try { await app.fastbase.db('comments').insert({ id: commentId++, body: 'raw', post_id: pick(posts) }) } catch {} }]
  ]
  const queries: Array<[string, Record<string, string>]> = [
    ['comments', {}],
    ['comments', { where: "body == 'a'" }],
    ['comments', { where: 'post_id.public == true' }],
    ['comments', { limit: '1', offset: '2', select: 'id' }],
    ['posts', {}],
    ['posts', { where: "posts @@ 'apple'" }],
    ['posts', { where: "body ~ '%apple%'" }]
  ]
  const callers = [undefined, 'ann', 'bob']
  let fresh = 0
  const mismatches: string[] = []
  const history: string[] = []
  for (let step = 0; step < Number(process.env.STEPS ?? 120); step++) {
    const [name, op] = pick(ops)
    let res: { statusCode?: number, body?: string } | undefined
    try { res = await op() as typeof res } catch { res = { statusCode: 999 } }
    history.push(`${name}${res?.statusCode !== undefined && res.statusCode !== 200 ? `(${res.statusCode})` : ''}`)
    for (let k = 0; k < 2; k++) {
      const [table, query] = pick([...queries])
      const uid = pick(callers)
      const kept = await req('GET', `/api/v1/table/${table}/list?${new URLSearchParams({ limit: '500', ...query }).toString()}`, undefined, uid)
      const freshWhere = `(${query.where ?? 'true'}) & id != ${-(++fresh)}`
      const counted = await req('GET', `/api/v1/table/${table}/list?${new URLSearchParams({ limit: '500', ...query, where: freshWhere }).toString()}`, undefined, uid)
      if (kept.statusCode !== 200 || counted.statusCode !== 200) { mismatches.push(`${step} ${table}${JSON.stringify(query)} ${kept.statusCode} ${kept.body} ${counted.body}`); continue }
      const a = kept.json().total
      const b = counted.json().total
      if (a !== b) mismatches.push(`step ${step} after ${history.slice(-4).join(',')}: ${table}${JSON.stringify(query)} as ${uid}: kept ${a}, fresh ${b}`)
    }
  }
  t.comment(`carried ${totalCacheCounts.carried} hits ${totalCacheCounts.hits} misses ${totalCacheCounts.misses}`)
  t.comment(history.join(' '))
  t.same(mismatches, [], 'every kept total equals a fresh count')
  if (dialect === 'sqlite') t.ok(totalCacheCounts.carried > 0, 'some totals were carried (the check is not vacuous)')
})
