// The composition root on its own, without Fastify (lib/kernel/index.ts): every service built once and
// sealed; the config and limits the services read are read-only all the way down; the services that
// route plugins used to build for themselves come from here, one each.
import t from 'tap'
import { buildKernel } from '../../../lib/kernel/index.js'
import { baseFields, authFields } from '../../../lib/config/helpers.js'
import { adminToken, freshDir, sharedDatabase } from '../../helper.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  jwtSecret: 'kernel-secret',
  appUrl: 'https://app.example.com',
  tables: [
    { name: 'users', autoSetUid: true, fields: [...baseFields, ...authFields], extensions: [{ name: 'auth', jwtSecret: 'users-secret' }, { name: 'rules', listRule: 'true' }] },
    { name: 'notes', fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text' }], extensions: [{ name: 'rules', listRule: 'true' }] }
  ]
}

const lines: string[] = []
const log = {
  info: (a: object | string, b?: string) => { lines.push(String(b ?? a)) },
  warn: (a: object | string, b?: string) => { lines.push(String(b ?? a)) },
  error: (a: object | string, b?: string) => { lines.push(String(b ?? a)) },
  debug: () => {}
}

t.test('the kernel builds every service once and seals them', async (t) => {
  const { services, lifecycle } = await buildKernel({
    options: { config, databaseUrl: sharedDatabase(t, 'sqlite'), dataDir: freshDir(t, 'kernel-'), adminServiceToken: adminToken },
    bundledExampleAllowed: false,
    codeActions: [],
    log
  })
  t.teardown(async () => { await lifecycle.preClose(); await lifecycle.close() })

  t.ok(Object.isFrozen(services), 'the services object')
  t.ok(Object.isFrozen(services.executor), 'the executor')
  t.ok(Object.isFrozen(services.descriptors.get('notes')), 'a table descriptor')
  t.throws(() => { (services as { storage: unknown }).storage = {} }, TypeError, 'no service is replaced')

  // Deep: a service reading config.tables or a limit later reads what it read at start.
  t.ok(Object.isFrozen(services.config), 'the config')
  t.ok(Object.isFrozen(services.config.tables[1].fields[0]), 'a field of a table of the config')
  t.throws(() => { (services.config.tables as unknown[]).push({}) }, TypeError, 'no table is added')
  t.throws(() => { (services.config.tables[1] as { name: string }).name = 'renamed' }, TypeError, 'no table is renamed')
  t.ok(Object.isFrozen(services.limits), 'the limits')
  t.throws(() => { (services.limits as { bodySize: number }).bodySize = 1 }, TypeError, 'no limit is changed')

  // One of each per app, whoever asks.
  t.equal(services.auth.oauthProviders(), services.auth.oauthProviders(), 'one OAuth provider registry')
  t.equal(await services.auth.idTokens(), await services.auth.idTokens(), 'one ID-token verifier')
  t.ok(services.thumbnails, 'the thumbnail maker')
  t.equal(services.auth.rateLimitStore, undefined, 'SQLite: one instance per database, so rate limits are counted in memory')
  t.same(lines.filter((l) => /fail|error/i.test(l)), [], 'nothing failed while building')
})
