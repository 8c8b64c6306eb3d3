// GET /health/ready on both dialects: 200 when the database answers and has what the config needs;
// 503 when a safe migration waits (autoMigrate: false) or the database is gone; ready, with the
// count, when only destructive steps wait; counts only, never a table name; cached briefly.
import t from 'tap'
import { buildApp, forEachDialect, sharedDatabase } from '../helper.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const field = (name: string) => ({ name, type: 'text' as const, sqlType: 'text' as const })
const configWith = (fields: string[], extra: Partial<DatabaseSettings> = {}): DatabaseSettings => ({
  appUrl: 'http://localhost:3000',
  jwtSecret: 'x',
  rateLimit: false,
  tables: [{ name: 'secret_ledger', fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, ...fields.map(field)] }],
  ...extra
})

forEachDialect(t, 'readiness', async (t, dialect) => {
  const databaseUrl = sharedDatabase(t, dialect)
  const first = await buildApp(t, configWith(['a', 'b']), { dialect, databaseUrl })
  const ready = await first.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { ready: true, database: 'ok', pending: 0, destructive: 0, configOutdated: false })
  await first.close()

  // A config that wants a column the database lacks, not applied on start.
  const behind = await buildApp(t, configWith(['a', 'b', 'c'], { autoMigrate: false }), { dialect, databaseUrl })
  const waiting = await behind.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(waiting.statusCode, 503, 'not ready while the schema lacks what the config needs')
  t.same(waiting.json(), { code: 503, message: 'Not ready: 1 schema migration the config needs is not applied', data: { ready: false, database: 'ok', pending: 1, destructive: 0, configOutdated: false } })
  t.equal(waiting.headers['fastbase-error-code'], 'FB_ERR_NOT_READY')
  t.notMatch(waiting.body, /secret_ledger|add_column|"c"/, 'no table, column or step name to anonymous callers')
  t.equal((await behind.inject({ method: 'GET', url: '/api/v1/health' })).statusCode, 200, '/health stays the liveness check')
  await behind.close()

  // A config that dropped a column: the step is destructive and waits; the instance serves.
  const dropped = await buildApp(t, configWith(['a']), { dialect, databaseUrl })
  const serving = await dropped.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(serving.statusCode, 200, 'ready while only destructive steps wait')
  t.same(serving.json(), { ready: true, database: 'ok', pending: 1, destructive: 1, configOutdated: false })

  // The database gone: after the cached answer expires, 503.
  await dropped.fastbase.db.destroy()
  await new Promise((resolve) => setTimeout(resolve, 2100))
  const gone = await dropped.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(gone.statusCode, 503)
  t.same(gone.json(), { code: 503, message: 'Not ready: the database is unavailable', data: { ready: false, database: 'unavailable', pending: 0, destructive: 0, configOutdated: false } })
  t.notMatch(gone.body, /pool|destroy|Unable/i, 'no error text')
})
