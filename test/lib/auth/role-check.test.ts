// lib/auth/role-check.ts: which rules leave the auth.role fields writable by anyone they admit.
import t from 'tap'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { authFields, baseFields } from '../../../lib/config/helpers.js'
import { unguardedRoleWarnings } from '../../../lib/auth/role-check.js'
import type { TableData } from '../../../schemas/config.js'

function warnings (rules: Record<string, string | null>, fieldPatch: Record<string, unknown> = {}): string[] {
  const fields = [...baseFields, ...authFields].map((f) => (f.name === 'role' ? { ...f, ...fieldPatch } : f))
  const table = { name: 'users', autoSetUid: true, fields, extensions: [{ name: 'auth', jwtSecret: 'x' }, { name: 'rules', ...rules }] } as TableData
  return unguardedRoleWarnings(describeTables([table], sqlite).get('users')!)
}

t.test('open rules warn, one warning per rule', async (t) => {
  const found = warnings({ createRule: 'true', updateRule: 'auth.uid == id' })
  t.equal(found.length, 2)
  t.match(found[0], /createRule does not check "role".*noInsert/)
  t.match(found[1], /updateRule does not check "role".*new\.role == role/)
})

t.test('rules that check the field, noInsert / noUpdate, and null rules do not', async (t) => {
  t.same(warnings({ createRule: "role == null | role == 'user'", updateRule: 'auth.uid == id & new.role == role' }), [])
  t.same(warnings({ createRule: 'true', updateRule: 'true' }, { noInsert: true, noUpdate: true }), [])
  t.same(warnings({ createRule: null, updateRule: null }), [])
  t.equal(warnings({ createRule: "auth.role == 'x'", updateRule: null }).length, 1, 'auth.role is the caller, not the written value')
})
