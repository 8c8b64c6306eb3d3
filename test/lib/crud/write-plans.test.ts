// Inserts and edits run from plans compiled once per shape and caller class (lib/crud/write-plans.ts):
// a second write of the same shape builds nothing, callers who differ only in bound values share a
// plan and still each get their own rule decision, null values are written as NULL, and a refused
// or invalid write answers exactly as the unplanned path does, on both dialects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { ANONYMOUS } from '../../../lib/auth-context.js'
import { fillSlots, planCacheCounts, planCacheSize, slotFiller, valueSlot } from '../../../lib/crud/plan-cache.js'
import { crudContext } from '../../../lib/crud/context.js'
import type { Binding } from '../../../lib/dialects/types.js'

const config: DatabaseSettings = {
  jwtSecret: 'write-plans-secret',
  appUrl: 'http://localhost:3000',
  tables: [
    {
      name: 'notes',
      autoSetUid: true,
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'owner', type: 'text', sqlType: 'text', notNull: true },
        { name: 'title', type: 'text', sqlType: 'text' },
        { name: 'stars', type: 'integer', sqlType: 'integer' },
        { name: 'locked', type: 'text', sqlType: 'text', noUpdate: true },
        { name: 'created', type: 'date', sqlType: 'timestamp', usage: 'record_created' },
        { name: 'updated', type: 'date', sqlType: 'timestamp', usage: 'record_updated' }
      ],
      extensions: [{
        name: 'rules',
        listRule: 'true',
        viewRule: 'true',
        createRule: 'auth.uid != null & owner == auth.uid',
        updateRule: "owner == auth.uid & new.title != 'forbidden'",
        deleteRule: null
      }]
    }
  ]
}

function simulateUsers (app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const uid = request.headers['x-test-uid']
    if (typeof uid === 'string') request.fastbaseAuth = { ...ANONYMOUS, uid, role: 'user', verified: true, jwt: {}, meta: {}, record: { id: uid } }
  })
}

forEachDialect(t, 'inserts and edits from plans', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const as = (uid: string) => ({ 'x-test-uid': uid })
  const insert = async (uid: string, values: Record<string, unknown>, returning = 'id,owner,title,stars') =>
    await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: as(uid), payload: { values, returning } })
  const edit = async (uid: string, id: string, body: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: `/api/v1/table/notes/edit/${id}`, query: { returning: 'id,owner,title,stars' }, headers: as(uid), payload: body })

  const first = await insert('alice', { owner: 'alice', title: 'a', stars: 1 })
  t.equal(first.statusCode, 200, first.body)
  const shapes = planCacheSize().shapes
  const misses = planCacheCounts.misses
  const second = await insert('bob', { owner: 'bob', title: 'b', stars: 2 })
  t.equal(second.statusCode, 200, second.body)
  t.equal(planCacheSize().shapes, shapes, 'a second caller of the same class reuses the plan')
  // `auth.uid != null` reads only whether there is a uid: every signed-in user is one class, so
  // a second user compiles nothing (each user a class of their own would rebuild plans all the time).
  t.equal(planCacheCounts.misses, misses, "the second user's insert and its checks are answered from the cache")
  t.match(second.json()[0], { owner: 'bob', title: 'b', stars: 2 })
  t.not(second.json()[0].id, first.json()[0].id, 'each row gets its own uid')

  t.equal((await insert('bob', { owner: 'alice', title: 'x', stars: 3 })).statusCode, 403, "bob may not create alice's note: the rule is decided per caller")
  const nulls = await insert('carol', { owner: 'carol', title: null, stars: null })
  t.equal(nulls.statusCode, 200, nulls.body)
  t.same(nulls.json()[0], { id: nulls.json()[0].id, owner: 'carol', title: null, stars: null }, 'null values are written as NULL')
  const given = await insert('carol', { id: '', owner: 'carol', title: 'empty id' })
  t.equal(given.statusCode, 200, given.body)
  t.ok(given.json()[0].id.length > 0, 'an empty uid is replaced by a generated one')
  const bad = await insert('carol', { owner: 'carol', stars: 'many', nope: 1 })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { data: { stars: {}, nope: {} } }, 'value and unknown-field errors together, as without plans')

  const id = first.json()[0].id as string
  const edited = await edit('alice', id, { title: 'a2', stars: null })
  t.equal(edited.statusCode, 200, edited.body)
  t.same(edited.json(), { id, owner: 'alice', title: 'a2', stars: null })
  t.equal((await edit('bob', id, { title: 'b2' })).statusCode, 404, "bob cannot edit alice's note (hidden from him)")
  t.equal((await edit('alice', id, { title: 'forbidden' })).statusCode, 404, 'the rule reads new.title as the value given')
  t.equal((await edit('alice', id, { title: 'fine' })).statusCode, 200, 'the same plan admits another value')
  t.equal((await edit('alice', id, { locked: 'x' })).statusCode, 403, 'noUpdate refuses')
  t.equal((await edit('alice', id, { stars: 'many' })).statusCode, 400, 'a value that does not fit its column')
  t.equal((await edit('alice', 'missing', { title: 'z' })).statusCode, 404)
  const view = await app.inject({ method: 'GET', url: `/api/v1/table/notes/view/${id}`, headers: { authorization: `Bearer ${adminToken}` } })
  t.match(view.json(), { title: 'fine', stars: null })
  t.ok(Date.parse(view.json().updated) >= Date.parse(view.json().created), 'the updated timestamp is set by the edit')
})

// The key of a shape is kept and reused while one shape repeats (lib/crud/write-plans.ts#writePlan):
// shapes that alternate (other names, other order, another returning list, the same list in a new
// array) must each still get their own plan, and a repeat must build nothing.
forEachDialect(t, 'alternating write shapes each answer as their own', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const insert = async (values: Record<string, unknown>, returning: string | string[]) =>
    await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { 'x-test-uid': 'zoe' }, payload: { values, returning } })
  const shapes: Array<[Record<string, unknown>, string | string[], string[]]> = [
    [{ owner: 'zoe', title: 't1' }, ['id', 'title'], ['id', 'title']],
    [{ title: 't2', owner: 'zoe' }, ['id', 'title'], ['id', 'title']],
    [{ owner: 'zoe', title: 't3' }, ['title', 'owner'], ['title', 'owner']],
    [{ owner: 'zoe', title: 't4' }, 'owner', ['owner']],
    [{ owner: 'zoe', title: 't5', stars: 5 }, ['stars'], ['stars']]
  ]
  for (let round = 0; round < 2; round++) {
    const misses = planCacheCounts.misses
    for (const [values, returning, keys] of shapes) {
      const res = await insert(values, Array.isArray(returning) ? [...returning] : returning)
      t.equal(res.statusCode, 200, res.body)
      t.same(Object.keys(res.json()[0]), keys, `${JSON.stringify(values)} returning ${JSON.stringify(returning)}: its own columns, in its order`)
    }
    if (round === 1) t.equal(planCacheCounts.misses, misses, 'the second round of the same shapes builds nothing')
  }
  const edit = async (body: Record<string, unknown>, returning: string) =>
    await app.inject({ method: 'POST', url: '/api/v1/table/notes/edit/' + (await insert({ owner: 'zoe' }, 'id')).json()[0].id, query: { returning }, headers: { 'x-test-uid': 'zoe' }, payload: body })
  t.same((await edit({ title: 'e1' }, 'title')).json(), { title: 'e1' })
  t.same((await edit({ title: 'e2' }, 'title,stars')).json(), { title: 'e2', stars: null })
  t.same((await edit({ stars: 3 }, 'title,stars')).json(), { title: null, stars: 3 })
})

// The check before a write's body is read (lib/crud/write-gate.ts) is kept per caller class like a
// plan: an anonymous caller's refusal and a user's admission never answer for each other, whichever
// comes first, and a known class compiles nothing again. The bodies are invalid, so only that check
// tells 403 (refused before the body is read) from 400 (admitted, then the body fails validation).
forEachDialect(t, 'the may-write check is decided once per caller class', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const insert = async (uid: string | undefined) => await app.inject({
    method: 'POST',
    url: '/api/v1/table/notes/insert',
    headers: uid === undefined ? {} : { 'x-test-uid': uid },
    payload: { values: { owner: uid ?? 'nobody', stars: 'many' } }
  })
  t.equal((await insert(undefined)).statusCode, 403, 'anonymous: the createRule folds to false')
  t.equal((await insert('dave')).statusCode, 400, 'a user after the anonymous refusal is admitted (then the body fails)')
  const shapes = planCacheSize().shapes
  t.equal((await insert(undefined)).statusCode, 403, 'anonymous again, after a user was admitted: still refused')
  t.equal((await insert('erin')).statusCode, 400, 'another user of the same class is admitted')
  t.equal(planCacheSize().shapes, shapes, 'both classes were answered from the cache')
})

// A planned insert or edit whose rules are 'true' is one statement on the caller's connection: on
// SQLite it runs synchronously and answers without a promise (decision D109). What the database
// refuses there (a unique key, NOT NULL, a foreign key) must answer exactly as the unplanned path
// does (a before-insert or before-update record hook makes a write unplanned), and leave nothing written.
forEachDialect(t, 'a refused planned write answers as the unplanned one', async (t, dialect) => {
  const open = { name: 'rules' as const, listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }
  const app = await buildApp(t, {
    jwtSecret: 'write-plans-refused-secret',
    appUrl: 'http://localhost:3000',
    tables: [
      { name: 'owners', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' }], extensions: [open] },
      {
        name: 'things',
        fields: [
          { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
          { name: 'slug', type: 'text', sqlType: 'text', unique: true, notNull: true },
          { name: 'owner_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'owners', column: 'id' } },
          { name: 'n', type: 'integer', sqlType: 'integer' }
        ],
        extensions: [open]
      }
    ]
  }, { dialect })
  const post = async (url: string, payload: Record<string, unknown>) => await app.inject({ method: 'POST', url: `/api/v1/table/${url}`, payload })
  t.equal((await post('owners/insert', { values: { id: 1 } })).statusCode, 200)
  t.equal((await post('things/insert', { values: { slug: 'taken', owner_id: 1, n: 1 } })).statusCode, 200)
  const cases: Array<[string, Record<string, unknown>]> = [
    ['a unique key another row holds', { slug: 'taken', owner_id: 1 }],
    ['a foreign key no row has', { slug: 'fresh', owner_id: 99 }],
    ['NOT NULL left out', { owner_id: 1 }]
  ]
  const unplanned = async <T>(event: 'beforeInsert' | 'beforeUpdate', work: () => Promise<T>): Promise<T> => {
    const unhook = event === 'beforeInsert' ? app.fastbase.hooks.on('things', 'beforeInsert', () => {}) : app.fastbase.hooks.on('things', 'beforeUpdate', () => {})
    try { return await work() } finally { unhook() }
  }
  for (const [what, values] of cases) {
    const planned = await post('things/insert', { values, returning: '*' })
    t.equal(planned.statusCode, 400, `${what}: 400 (${planned.body})`)
    const other = await unplanned('beforeInsert', async () => await post('things/insert', { values, returning: '*' }))
    t.same(planned.json(), other.json(), `${what}: the same answer as the unplanned insert`)
  }
  const second = await post('things/insert', { values: { slug: 'second', owner_id: 1, n: 3 }, returning: 'id' })
  const id = second.json()[0].id
  const editPlanned = await post(`things/edit/${id}?returning=*`, { slug: 'taken' })
  t.equal(editPlanned.statusCode, 400, `an edit onto a unique key another row holds: 400 (${editPlanned.body})`)
  const editFk = await post(`things/edit/${id}?returning=*`, { owner_id: 99 })
  t.equal(editFk.statusCode, 400, `an edit to a foreign key no row has: 400 (${editFk.body})`)
  t.same((await unplanned('beforeUpdate', async () => await post(`things/edit/${id}?returning=*`, { slug: 'taken' }))).json(), editPlanned.json(), 'the same answer as the unplanned edit (unique)')
  t.same((await unplanned('beforeUpdate', async () => await post(`things/edit/${id}?returning=*`, { owner_id: 99 }))).json(), editFk.json(), 'the same answer as the unplanned edit (foreign key)')
  const rows = (await post('things/select', { order: 'id' })).json()
  t.same(rows.map((r: { slug: string, owner_id: number }) => [r.slug, r.owner_id]), [['taken', 1], ['second', 1]], 'nothing the database refused was written')
})

const counters: DatabaseSettings = {
  jwtSecret: 'write-plans-secret',
  appUrl: 'http://localhost:3000',
  tables: [{
    name: 'counters',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
      { name: 'n', type: 'integer', sqlType: 'integer' },
      { name: 'label', type: 'text', sqlType: 'text' },
      { name: 'flag', type: 'bool', sqlType: 'boolean' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'n > 5', deleteRule: null }]
  }]
}

// A plan that reads nothing of its caller but the kind (lib/crud/plan-cache.ts#repeatedPlan) is
// answered from the repeating shape itself, per kind: an anonymous caller's plan (the updateRule
// applied) and an admin's (no rule) must never answer for each other however they alternate, and a
// plan that reads a global (`owner == auth.uid`) is never answered that way, so callers of one shape
// still each get their own decision.
forEachDialect(t, 'a repeating shape answers each caller kind with its own plan', async (t, dialect) => {
  const app = await buildApp(t, counters, { dialect })
  const admin = { authorization: `Bearer ${adminToken}` }
  const low = (await app.inject({ method: 'POST', url: '/api/v1/table/counters/insert', payload: { values: { n: 1 }, returning: 'id' } })).json()[0].id
  const edit = async (headers: Record<string, string>, n: number) =>
    await app.inject({ method: 'POST', url: `/api/v1/table/counters/edit/${low}`, query: { returning: 'id,n' }, headers, payload: { n } })
  for (let round = 0; round < 3; round++) {
    const misses = planCacheCounts.misses
    t.equal((await edit({}, 2)).statusCode, 404, `round ${round}: anonymous meets the updateRule (n > 5): the row is not one it may edit`)
    const byAdmin = await edit(admin, 1)
    t.equal(byAdmin.statusCode, 200, `round ${round}: the admin's plan has no rule`)
    t.same(byAdmin.json(), { id: low, n: 1 })
    if (round > 0) t.equal(planCacheCounts.misses, misses, `round ${round}: both kinds' plans are found again, nothing is built`)
  }
})

forEachDialect(t, 'a repeating shape whose plan reads the caller is decided per caller', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, setup: simulateUsers })
  const ids: Record<string, string> = {}
  for (const uid of ['ann', 'ben']) {
    ids[uid] = (await app.inject({ method: 'POST', url: '/api/v1/table/notes/insert', headers: { 'x-test-uid': uid }, payload: { values: { owner: uid }, returning: 'id' } })).json()[0].id
  }
  const edit = async (uid: string, owner: string) => await app.inject({ method: 'POST', url: `/api/v1/table/notes/edit/${ids[owner]}`, headers: { 'x-test-uid': uid }, payload: { stars: 1 } })
  for (let round = 0; round < 2; round++) {
    t.equal((await edit('ann', 'ann')).statusCode, 200, 'ann edits her note')
    t.equal((await edit('ann', 'ben')).statusCode, 404, "ann cannot edit ben's, right after editing hers with the same shape")
    t.equal((await edit('ben', 'ann')).statusCode, 404, "ben cannot edit ann's")
    t.equal((await edit('ben', 'ben')).statusCode, 200, 'ben edits his')
  }
})

// A write plan's bindings compiled once (lib/crud/plan-cache.ts#slotFiller): each binding kept as it
// is, or the record id, the value given one of the plan's fields (by position, whatever the order of
// the bindings), or a global, encoded for its column as fillSlots encodes it.
forEachDialect(t, 'slot fillers bind what fillSlots binds', async (t, dialect) => {
  const app = await buildApp(t, counters, { dialect })
  const table = app.fastbase.descriptors.get('counters')!
  const field = (name: string) => table.fields.get(name)!
  const ctx = crudContext(app.fastbase.executor, table, { ...ANONYMOUS, uid: 'u1' })
  const encode = (name: string, value: unknown) => app.fastbase.executor.dialect.encode(field(name), value)
  const bindings: Binding[] = [
    'as is',
    { path: valueSlot('n'), field: field('n') },
    { path: '$id', field: field('id') },
    { path: valueSlot('label'), field: field('label') },
    { path: valueSlot('flag'), field: field('flag') },
    { path: 'auth.uid' },
    7
  ]
  // The plan's fields are label, n: flag is not among them, so its slot binds null.
  const fill = slotFiller(bindings, [field('label'), field('n')])
  const values = [encode('label', 'A'), encode('n', 2)]
  const filled = fill(ctx, 42, values)
  t.same(filled, ['as is', values[1], encode('id', 42), values[0], null, fillSlots(ctx, [bindings[5]])[0], 7])
  t.same(filled.slice(2, 3), fillSlots(ctx, [bindings[2]], 42), 'the record id is bound as fillSlots binds it')
  t.equal(filled[5], 'u1', 'a global is read from the caller')
  t.same(fill(ctx, 43, values)[2], encode('id', 43), 'each run binds its own id')
  const refused = thrown(() => fill(ctx, 'not a number', values))
  t.match(refused, { statusCode: 400 }, 'an id that does not fit its column is a 400')
  t.same(refused, thrown(() => fillSlots(ctx, [bindings[2]], 'not a number')), 'the same 400 as fillSlots gives')
})

function thrown (run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}
