// Field rules as a user meets them from the command line (decision D96): `fastbase check` warns
// about an auth table whose emails anyone can list, the warning goes once a field rule guards
// `email`, and `fastbase migrate` of a config that adds a field rule has nothing to change in the
// database (a rule is no schema), while the running app reads the field under it.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fastbase, skip } from '../../cli-run.js'
import { buildApp, forEachDialect, sharedDatabase, adminToken } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'
import { authFields, baseFields } from '../../../lib/config/helpers.js'

const usersConfig = (fieldRules?: Record<string, string>): DatabaseSettings => ({
  jwtSecret: 'field-rules-cli-secret',
  appUrl: 'http://127.0.0.1',
  tables: [{
    name: 'users',
    autoSetUid: true,
    fields: [...baseFields, ...authFields],
    extensions: [
      { name: 'auth', jwtSecret: 'users-secret', jwtTokenDuration: 600 },
      { name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'id == auth.uid', deleteRule: null, ...(fieldRules === undefined ? {} : { fieldRules }) }
    ]
  }]
})

t.test('check and migrate of a config that adds a field rule', { skip }, (t) => forEachDialect(t, 'field rules from the CLI', async (t, dialect) => {
  const dir = t.testdir()
  const file = join(dir, 'fastbase.config.json')
  const databaseUrl = sharedDatabase(t, dialect)
  const env = { DATABASE_URL: databaseUrl }

  writeFileSync(file, JSON.stringify(usersConfig()))
  const open = await fastbase(['check', file], { env })
  t.equal(open.code, 0, open.stderr)
  t.match(open.stderr, /warning: tables\.users: its listRule and viewRule can let anonymous callers read accounts, and with them every email: add fieldRules: \{ email: 'id == auth\.uid' \}/)
  const applied = await fastbase(['migrate', file, '--apply'], { env })
  t.equal(applied.code, 0, applied.stderr)

  writeFileSync(file, JSON.stringify(usersConfig({ email: 'id == auth.uid' })))
  const guarded = await fastbase(['check', file], { env })
  t.equal(guarded.code, 0, guarded.stderr)
  t.notMatch(guarded.stderr, /email/, 'no warning once a field rule guards it')
  const plan = await fastbase(['migrate', file], { env })
  t.equal(plan.code, 0, plan.stderr)
  t.match(plan.stdout, /nothing to do, the database matches the config/, 'a field rule changes no schema')

  const bad = usersConfig({ nope: 'true' })
  writeFileSync(file, JSON.stringify(bad))
  const refused = await fastbase(['check', file], { env })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /tables\.users\.fieldRules\.nope: users has no field "nope"/)

  // The migrated database, served with the field rule: anonymous callers list accounts without emails.
  const app = await buildApp(t, usersConfig({ email: 'id == auth.uid' }), { dialect, databaseUrl })
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'ann', email: 'ann@mail.test', name: 'Ann', password: 'a long password 1' } })
  t.equal(signUp.statusCode, 200, signUp.body)
  t.equal(signUp.json().record.email, 'ann@mail.test', 'the new account reads its own email')
  const anonymous = await app.inject({ method: 'GET', url: '/api/v1/table/users/list' })
  t.same(anonymous.json().items.map((u: { username: string, email: string | null }) => [u.username, u.email]), [['ann', null]], 'anonymous: the account, not its email')
  const asAnn = await app.inject({ method: 'GET', url: '/api/v1/table/users/list', headers: { authorization: `Bearer ${signUp.json().token}` } })
  t.same(asAnn.json().items[0].email, 'ann@mail.test', 'its owner reads it')
  const asAdmin = await app.inject({ method: 'GET', url: '/api/v1/table/users/list', headers: { authorization: `Bearer ${adminToken}` } })
  t.same(asAdmin.json().items[0].email, 'ann@mail.test', 'admins read it')
}))
