// A user token's context is made again only when the user's row reads differently
// (lib/auth/sessions/user-context.ts): whatever changes in the row (role, name, json meta) or the session
// takes effect on the very next request.
import t from 'tap'
import { buildApp, forEachDialect, adminToken } from '../../helper.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'reuse-secret',
  appUrl: 'http://localhost',
  rateLimit: false,
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600, maxTokenRefresh: 3 },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: null, deleteRule: null }
      ]
    },
    {
      name: 'boards',
      autoSetUid: true,
      fields: [...baseFields, { name: 'title', type: 'text', sqlType: 'text', notNull: true }],
      extensions: [{
        name: 'rules',
        listRule: "auth.role == 'staff' | auth.name == 'Grace' | auth.meta.level == 'gold'",
        viewRule: 'true', createRule: null, updateRule: null, deleteRule: null
      }]
    }
  ]
}

forEachDialect(t, 'a change to the user\'s row or session shows on the next request', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect })
  const admin = { authorization: `Bearer ${adminToken}` }
  await app.inject({ method: 'POST', url: '/api/v1/table/boards/insert', headers: admin, payload: { values: { title: 'plans' } } })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'ada', email: 'ada@example.com', name: 'Ada', password: 'correct horse battery' } })
  t.equal(signUp.statusCode, 200, signUp.body)
  const { token, record } = signUp.json() as { token: string, record: { id: string } }
  const boards = async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/table/boards/list', headers: { authorization: `Bearer ${token}` } })
    return res.statusCode === 200 ? res.json().total as number : res.statusCode
  }
  const change = async (values: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/table/users/edit/${record.id}`, headers: admin, payload: values })
    t.equal(res.statusCode, 200, res.body)
  }
  t.equal(await boards(), 0, 'not staff, not Grace, no gold')
  t.equal(await boards(), 0, 'the same again (the same context)')
  await change({ role: 'staff' })
  t.equal(await boards(), 1, 'the new role, on the next request')
  await change({ role: null })
  t.equal(await boards(), 0, 'and taken away again')
  await change({ name: 'Grace' })
  t.equal(await boards(), 1, 'a renamed user')
  await change({ name: 'Ada' })
  t.equal(await boards(), 0)
  await change({ meta: { level: 'gold' } })
  t.equal(await boards(), 1, 'a json field, read as a new object each time on PostgreSQL')
  await change({ meta: { level: 'silver' } })
  t.equal(await boards(), 0, 'its changed content')
  const logout = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/logout', headers: { authorization: `Bearer ${token}` } })
  t.equal(logout.statusCode, 200, logout.body)
  t.equal(await boards(), 401, 'a session ended: the token is refused at once')
})
