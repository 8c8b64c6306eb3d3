// lib/table/descriptor.ts#describeTables: a descriptor is complete when it is returned. An auth
// table's write hooks (passwords hashed, a changed email unverified) come with it, from the factory
// the kernel passes; nothing sets them, or anything else, afterwards.
import t from 'tap'
import { describeTables, type WriteHooks } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { authFields, baseFields } from '../../../lib/config/helpers.js'
import type { AuthExtension, TableData } from '../../../schemas/config.js'

const users = { name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields], extensions: [{ name: 'auth', jwtSecret: 'x' }, { name: 'rules', viewRule: 'true' }] } as TableData
const notes = {
  name: 'notes',
  autoSetUid: true,
  fields: [...baseFields, { name: 'owner', type: 'text', sqlType: 'text', foreignKey: { table: 'users', column: 'id' } }],
  extensions: [{ name: 'rules', viewRule: 'true' }]
} as TableData

const hooks: WriteHooks = { beforeBatch: () => {}, beforeInsert: async () => [], beforeUpdate: async () => ({ values: {}, system: {} }), notSettable: new Set(), hidden: new Set(['password']), resets: [] }

t.test('an auth table gets its write hooks when it is described; other tables none', async (t) => {
  const asked: Array<[string, string]> = []
  const tables = describeTables([users, notes], sqlite, (table, ext: AuthExtension) => {
    asked.push([table.name, ext.name])
    return hooks
  })
  t.same(asked, [['users', 'auth']], 'asked once, for the auth table, with its auth extension')
  t.equal(tables.get('users')?.writeHooks, hooks)
  t.equal(tables.get('notes')?.writeHooks, undefined)
  t.equal(describeTables([users], sqlite).get('users')?.writeHooks, undefined, 'without the factory (tools that only read the schema) there are none')
})

t.test('a described table cannot be changed afterwards', async (t) => {
  const tables = describeTables([users, notes], sqlite, () => hooks)
  const descriptor = tables.get('notes')!
  t.ok(Object.isFrozen(descriptor))
  t.throws(() => { (descriptor as { writeHooks?: WriteHooks }).writeHooks = hooks }, TypeError, 'no hooks set later')
  t.equal(descriptor.foreignKeys.length, 1, 'its foreign keys were linked before it was sealed')
  t.equal(descriptor.foreignKeys[0].target, tables.get('users'))
  t.throws(() => { (descriptor.foreignKeys as unknown[]).push({}) }, TypeError, 'and stay as linked')
})
