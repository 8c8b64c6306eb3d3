// A table whose writes need a second factor (rules `mfaForWrites`, decisions D117 and D127), on every
// write path: the table routes (insert, upsert, update, edit, edit?or=INSERT, delete), actions in
// SQL mode (INSERT, INSERT OR REPLACE, UPDATE, DELETE), in steps mode with and without the table's
// rules, in code mode, and the in-process API acting as a user. A one-factor session (aal 1) and an
// anonymous caller are refused and change nothing; an aal 2 session and an admin write.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import fastbase, { options as serverOptions } from '../../../app.js'
import { defineAction } from '../../../plugins/define-action.js'
import { adminToken, forEachDialect, freshDir, sharedDatabase } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { totpNow } from '../../fixtures/totp.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const byId = { where: { q: 'id = {:id}' } }
const config: DatabaseSettings = {
  jwtSecret: 'mfa-writes-secret',
  appUrl: 'https://app.example.com',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [{ name: 'auth', jwtSecret: 'users-key', totp: { issuer: 'Acme' } }, { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id' }]
    },
    {
      name: 'vault',
      autoSetUid: true,
      fields: [...baseFields, { name: 'owner', type: 'text', sqlType: 'text' }, { name: 'body', type: 'text', sqlType: 'text' }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true', mfaForWrites: true }]
    }
  ],
  actions: [
    { name: 'sql_insert', params: { id: 'string', body: 'string' }, sql: { type: 'INSERT', table: 'vault', values: { id: '{:id}', body: '{:body}' } } },
    { name: 'sql_replace', params: { id: 'string', body: 'string' }, sql: { type: 'INSERT', table: 'vault', or: 'REPLACE', values: { id: '{:id}', body: '{:body}' } } },
    { name: 'sql_update', params: { id: 'string', body: 'string' }, sql: { type: 'UPDATE', table: 'vault', set: { body: '{:body}' }, ...byId } },
    { name: 'sql_delete', params: { id: 'string' }, sql: { type: 'DELETE', table: 'vault', ...byId } },
    { name: 'sql_read', params: { id: 'string' }, sql: { type: 'SELECT', table: 'vault', selects: ['body'], ...byId } },
    { name: 'steps_insert', params: { id: 'string', body: 'string' }, steps: { type: 'INSERT', table: 'vault', expr: { id: 'params.id', body: 'params.body' } } },
    { name: 'steps_insert_unruled', applyTableRules: false, params: { id: 'string', body: 'string' }, steps: { type: 'INSERT', table: 'vault', expr: { id: 'params.id', body: 'params.body' } } },
    { name: 'steps_update_unruled', applyTableRules: false, params: { id: 'string', body: 'string' }, steps: { type: 'UPDATE', table: 'vault', where: 'id == params.id', set: { body: 'params.body' } } },
    { name: 'steps_delete_unruled', applyTableRules: false, params: { id: 'string' }, steps: { type: 'DELETE', table: 'vault', where: 'id == params.id' } }
  ]
}

/** A code action writing as its caller: the caller's level decides, as on the routes. */
const codeWrite = defineAction({
  name: 'code_write',
  params: Type.Object({ id: Type.String(), body: Type.String() }),
  handler: async ({ params, caller, tables }) => {
    await tables.vault.edit({ id: params.id, values: { body: params.body } }, { as: caller })
    return { ok: true }
  }
})

async function start (t: Test, dialect: 'sqlite' | 'postgres'): Promise<FastifyInstance> {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(fastbase, { config, databaseUrl: sharedDatabase(t, dialect), dataDir: freshDir(t), adminServiceToken: adminToken, actions: [codeWrite] })
  await app.ready()
  return app
}

forEachDialect(t, 'mfaForWrites on every write path', async (t, dialect) => {
  const app = await start(t, dialect)
  const { db } = app.fastbase
  const call = async (url: string, payload: unknown, token?: string) => {
    const reply = await app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return { status: reply.statusCode, code: reply.headers['fastbase-error-code'], body: reply.json() }
  }
  const signUp = async (name: string) => (await call('/table/users/auth/sign-up', { username: name, email: `${name}@example.com`, password: 'correct horse', name })).body
  const one = await signUp('dee')
  t.equal(one.aal, 1)
  // Confirming TOTP raises the confirming session to aal 2 (lib/auth/mfa/mfa-flows.ts).
  const two = await signUp('hal')
  const enroll = await call('/table/users/auth/mfa/totp/enroll', {}, two.token)
  t.equal((await call('/table/users/auth/mfa/totp/confirm', { code: totpNow(enroll.body.secret) }, two.token)).status, 200)

  const seed = async (id: string) => { await db('vault').insert({ id, body: 'before' }) }
  const bodyOf = async (id: string) => (await db('vault').where({ id }).first())?.body as string | undefined

  // Each path: what it sends for a record id and a new body, for a row that exists (seeded) or not.
  const paths: Array<{ what: string, seeded: boolean, send: (id: string, token?: string) => Promise<{ status: number, code?: unknown }>, after: string | undefined }> = [
    { what: 'insert', seeded: false, send: async (id, token) => await call('/table/vault/insert', { values: { id, body: 'after' } }, token), after: 'after' },
    { what: 'insert or REPLACE (upsert)', seeded: true, send: async (id, token) => await call('/table/vault/insert', { values: { id, body: 'after' }, or: 'REPLACE' }, token), after: 'after' },
    { what: 'update', seeded: true, send: async (id, token) => await call('/table/vault/update', { where: `id == '${id}'`, setValues: { body: 'after' } }, token), after: 'after' },
    { what: 'edit', seeded: true, send: async (id, token) => await call(`/table/vault/edit/${id}`, { body: 'after' }, token), after: 'after' },
    { what: 'edit?or=INSERT', seeded: false, send: async (id, token) => await call(`/table/vault/edit/${id}?or=INSERT`, { body: 'after' }, token), after: 'after' },
    { what: 'delete', seeded: true, send: async (id, token) => await call('/table/vault/delete', { where: `id == '${id}'` }, token), after: undefined },
    { what: 'SQL-mode INSERT', seeded: false, send: async (id, token) => await call('/action/sql_insert', { id, body: 'after' }, token), after: 'after' },
    { what: 'SQL-mode INSERT OR REPLACE', seeded: true, send: async (id, token) => await call('/action/sql_replace', { id, body: 'after' }, token), after: 'after' },
    { what: 'SQL-mode UPDATE', seeded: true, send: async (id, token) => await call('/action/sql_update', { id, body: 'after' }, token), after: 'after' },
    { what: 'SQL-mode DELETE', seeded: true, send: async (id, token) => await call('/action/sql_delete', { id }, token), after: undefined },
    { what: 'steps-mode INSERT', seeded: false, send: async (id, token) => await call('/action/steps_insert', { id, body: 'after' }, token), after: 'after' },
    { what: 'steps-mode INSERT, applyTableRules: false', seeded: false, send: async (id, token) => await call('/action/steps_insert_unruled', { id, body: 'after' }, token), after: 'after' },
    { what: 'steps-mode UPDATE, applyTableRules: false', seeded: true, send: async (id, token) => await call('/action/steps_update_unruled', { id, body: 'after' }, token), after: 'after' },
    { what: 'steps-mode DELETE, applyTableRules: false', seeded: true, send: async (id, token) => await call('/action/steps_delete_unruled', { id }, token), after: undefined },
    { what: 'code mode, writing as the caller', seeded: true, send: async (id, token) => await call('/action/code_write', { id, body: 'after' }, token), after: 'after' }
  ]

  let n = 0
  for (const path of paths) {
    await t.test(path.what, async (t) => {
      for (const [who, token] of [['an aal 1 session', one.token], ['an anonymous caller', undefined]] as const) {
        const id = `r${++n}`
        if (path.seeded) await seed(id)
        const refused = await path.send(id, token)
        t.same([refused.status, refused.code], [403, 'FB_ERR_MFA_REQUIRED'], `${who}: refused`)
        t.equal(await bodyOf(id), path.seeded ? 'before' : undefined, `${who}: nothing written`)
      }
      for (const [who, token] of [['an aal 2 session', two.token], ['an admin', adminToken]] as const) {
        const id = `r${++n}`
        if (path.seeded) await seed(id)
        const done = await path.send(id, token)
        t.equal(done.status, 200, `${who}: ${JSON.stringify(done)}`)
        t.equal(await bodyOf(id), path.after, `${who}: written`)
      }
    })
  }

  await t.test('reads are not writes', async (t) => {
    await seed('readable')
    t.same((await call('/action/sql_read', { id: 'readable' }, one.token)).body, [[{ body: 'before' }]], 'a SQL-mode SELECT at aal 1')
    const view = await app.inject({ method: 'GET', url: '/api/v1/table/vault/view/readable', headers: { authorization: `Bearer ${one.token}` } })
    t.same([view.statusCode, view.json().body], [200, 'before'], 'a view at aal 1')
  })

  await t.test('the in-process API as the user', async (t) => {
    const dee = await app.fastbase.callerFor('users', one.record.id)
    t.equal(dee.aal, 1)
    await t.rejects(app.fastbase.tables.vault.insert({ values: { id: 'api', body: 'x' } }, { as: dee }), { code: 'FB_ERR_MFA_REQUIRED' }, 'insert')
    await seed('api-seeded')
    await t.rejects(app.fastbase.tables.vault.update({ where: "id == 'api-seeded'", setValues: { body: 'x' } }, { as: dee }), { code: 'FB_ERR_MFA_REQUIRED' }, 'update')
    await t.rejects(app.fastbase.tables.vault.edit({ id: 'api-seeded', values: { body: 'x' } }, { as: dee }), { code: 'FB_ERR_MFA_REQUIRED' }, 'edit')
    await t.rejects(app.fastbase.tables.vault.delete({ where: "id == 'api-seeded'" }, { as: dee }), { code: 'FB_ERR_MFA_REQUIRED' }, 'delete')
    t.equal(await bodyOf('api-seeded'), 'before', 'nothing changed')
    t.equal(await bodyOf('api'), undefined)
    await app.fastbase.tables.vault.insert({ values: { id: 'api', body: 'system' } }, { as: 'system' })
    t.equal(await bodyOf('api'), 'system', 'the system writes, as ever')
  })
})
