// Several instances on one database: rate limits counted once for the fleet (PostgreSQL; SQLite keeps
// one process's counters in memory), and the purge of expired auth rows on both dialects.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Knex } from 'knex'
import { buildApp, forEachDialect, sharedDatabase } from '../../../helper.js'
import { baseFields, authFields } from '../../../../lib/config/helpers.js'
import type { DatabaseSettings } from '../../../../schemas/config.js'
import { SESSIONS, REFRESH_TOKENS, ONE_TIME_TOKENS, OAUTH_STATES, EMAIL_CODES, MFA_CHALLENGES } from '../../../../lib/auth/stores/store-tables.js'
import { RATE_LIMITS } from '../../../../lib/auth/stores/rate-limit-store.js'
import { nowSeconds } from '../../../../lib/auth/stores/sessions.js'
import { INITIAL_MIGRATION, MIGRATIONS_TABLE } from '../../../../lib/db/migrations.js'
import { KEEP_EXPIRED_FOR, purgeExpired } from '../../../../lib/auth/stores/purge.js'
import { DatabaseRateLimitStore, type Hits } from '../../../../lib/auth/stores/rate-limit-store.js'

const config = (extra: Partial<DatabaseSettings> = {}): DatabaseSettings => ({
  jwtSecret: 'global-secret',
  appUrl: 'https://app.example.com',
  rateLimit: { max: 5, timeWindow: 60_000 },
  tables: [{
    name: 'users',
    autoSetUid: true,
    fields: [...baseFields, ...authFields],
    extensions: [
      { name: 'auth', jwtSecret: 'users-secret', maxTokenRefresh: 3 },
      { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
    ]
  }],
  ...extra
})

const post = async (app: FastifyInstance, url: string, payload: object) => await app.inject({ method: 'POST', url: `/api/v1${url}`, payload })
const login = async (app: FastifyInstance) => await post(app, '/table/users/auth/login-password', { identity: 'nobody', password: 'wrong password' })

forEachDialect(t, 'rate limits', async (t, dialect) => {
  if (dialect === 'sqlite') {
    // One process per SQLite file: the plugin's in-memory counters.
    const app = await buildApp(t, config(), { dialect })
    const codes: number[] = []
    for (let i = 0; i < 8; i++) codes.push((await login(app)).statusCode)
    t.same(codes, [400, 400, 400, 400, 400, 429, 429, 429], '5 allowed, then 429')
    return
  }
  const databaseUrl = sharedDatabase(t, dialect)
  // Started together: both create the counters' table if missing, under the schema lock.
  const apps = await Promise.all([buildApp(t, config(), { dialect, databaseUrl }), buildApp(t, config(), { dialect, databaseUrl })])
  const db = apps[0].fastbase.db
  t.same(await db(MIGRATIONS_TABLE).pluck('name'), [INITIAL_MIGRATION], 'one initial schema, counters included, for both instances')

  const replies = []
  for (let i = 0; i < 30; i++) replies.push(await login(apps[i % 2]))
  t.equal(replies.filter((r) => r.statusCode !== 429).length, 5, '5 of 30 logins across two instances get through')
  t.same(replies.slice(0, 5).map((r) => r.statusCode), [400, 400, 400, 400, 400], 'the first five')
  const refused = replies.slice(5).map((r) => ({ status: r.statusCode, body: r.json() }))
  const standard = ({ status, body }: { status: number, body: Record<string, unknown> }): boolean =>
    status === 429 && Object.keys(body).join() === 'code,message,data' && body.code === 429 && /^Too many requests, retry in \d+s$/.test(String(body.message))
  t.same(refused.filter((r) => !standard(r)), [], 'the other 25 answer 429 with the standard body { code, message, data }')
  t.ok(replies.slice(5).every((r) => r.headers['retry-after'] !== undefined), 'with retry-after')

  // Another route has its own counter; hits arriving together on both instances are all counted.
  const burst = await Promise.all(Array.from({ length: 20 }, async (_, i) => await post(apps[i % 2], '/admin/login', { password: 'not the password' })))
  t.same(burst.map((r) => r.statusCode).sort(), [...Array(5).fill(401), ...Array(15).fill(429)], 'concurrent: exactly 5 through')
  t.same((await db(RATE_LIMITS).select('key', 'hits').orderBy('key')).map((r: { key: string, hits: number }) => [r.key.replace(/ [^ ]+$/, ''), r.hits]), [
    ['POST /api/v1/admin/login', 20],
    ['POST /api/v1/table/users/auth/login-password', 30]
  ], 'one row per route and caller')

  t.test('windows', async (t) => {
    const store = new DatabaseRateLimitStore(db, () => {}).child({ routeInfo: { method: 'GET', url: '/windows' } })
    const hit = async (key: string, window: number) => await new Promise<Hits>((resolve, reject) => {
      store.incr(key, (err, hits) => (err === null ? resolve(hits!) : reject(err)), window)
    })
    const first = await hit('k', 300)
    t.equal(first.current, 1)
    t.ok(first.ttl > 0 && first.ttl <= 300, 'ttl within the window')
    t.equal((await hit('k', 300)).current, 2)
    await new Promise((resolve) => setTimeout(resolve, 350))
    t.equal((await hit('k', 300)).current, 1, 'a passed window starts over')
  })

  t.test('fails closed when the counters cannot be read', async (t) => {
    const errors: unknown[] = []
    const store = new DatabaseRateLimitStore(db, (err) => errors.push(err))
    await db.schema.renameTable(RATE_LIMITS, 'rate_limits_away')
    t.teardown(async () => { await db.schema.renameTable('rate_limits_away', RATE_LIMITS) })
    const refused = await login(apps[1])
    t.same({ status: refused.statusCode, body: refused.json() }, { status: 503, body: { code: 503, message: 'Rate limiting is unavailable, try again', data: {} } })
    const failed = await new Promise<Error | null>((resolve) => store.incr('k', resolve, 1000))
    t.match(failed, { statusCode: 503, cause: { code: '42P01' } }, 'the store calls back with the error')
    t.equal(errors.length, 1, 'and reports the database error')
  })
})

/** Epoch seconds long enough ago that the purge takes the row. */
const longAgo = (): number => nowSeconds() - KEEP_EXPIRED_FOR - 60

async function ids (db: Knex, table: string, key: string): Promise<string[]> {
  return (await db(table).select(key).orderBy(key)).map((r: Record<string, string>) => r[key])
}

forEachDialect(t, 'purgeExpired', async (t, dialect) => {
  const app = await buildApp(t, config(), { dialect })
  const { db } = app.fastbase
  const { sessions, oneTimeTokens } = app.fastbase.auth
  const setExpiry = async (table: string, where: object, expiresAt: number) => await db(table).where(where).update({ expires_at: expiresAt })

  // Sessions: live (refreshed once, so it holds a used and a current refresh token), revoked but not
  // yet expired, expired within the retention; and five long expired, two of them revoked.
  const live = await sessions.create('users', 'u1')
  t.ok(await sessions.refresh('users', live.refreshToken, 3), 'refreshed')
  const revoked = await sessions.create('users', 'u2')
  await sessions.revoke(revoked.sid)
  const recent = await sessions.create('users', 'u3')
  await setExpiry(SESSIONS, { id: recent.sid }, nowSeconds() - 60)
  const expired = []
  for (let i = 0; i < 5; i++) {
    const session = await sessions.create('users', `old${i}`)
    if (i < 2) await sessions.revoke(session.sid)
    await setExpiry(SESSIONS, { id: session.sid }, longAgo())
    expired.push(session.sid)
  }
  const keptSessions = [live.sid, revoked.sid, recent.sid].sort()
  const keptRefreshTokens = (await db(REFRESH_TOKENS).whereIn('session_id', keptSessions).select('hash')).length
  t.equal(keptRefreshTokens, 4)

  // One-time tokens: live, expired within the retention, long expired.
  await oneTimeTokens.issue('verify_email', 'users', { userId: 'u1', email: 'a@example.com' }, 3600)
  await oneTimeTokens.issue('reset_password', 'users', { userId: 'u2', email: 'b@example.com' }, 3600)
  await setExpiry(ONE_TIME_TOKENS, { user_id: 'u2' }, nowSeconds() - 60)
  for (let i = 0; i < 3; i++) await oneTimeTokens.issue('reset_password', 'users', { userId: `old${i}`, email: null }, 3600)
  await db(ONE_TIME_TOKENS).where('user_id', 'like', 'old%').update({ expires_at: longAgo() })

  // Used OAuth states: one still within its expiry, two long past it.
  await db(OAUTH_STATES).insert([{ id: 'live-state', expires_at: nowSeconds() + 600 }, { id: 'old-1', expires_at: longAgo() }, { id: 'old-2', expires_at: longAgo() }])

  // Email sign-in codes and second-factor challenges: one live each, the others long expired.
  const code = (hash: string, expires: number) => ({ hash, table_name: 'users', email: `${hash}@example.com`, code_hash: 'x', created_at: nowSeconds(), expires_at: expires })
  await db(EMAIL_CODES).insert([code('live-code', nowSeconds() + 600), code('old-code-1', longAgo()), code('old-code-2', longAgo())])
  const challenge = (hash: string, expires: number) => ({ hash, table_name: 'users', user_id: 'u1', created_at: nowSeconds(), expires_at: expires })
  await db(MFA_CHALLENGES).insert([challenge('live-challenge', nowSeconds() + 300), challenge('old-challenge', longAgo())])

  // Rate-limit counters (PostgreSQL): one live window, three passed.
  if (dialect === 'postgres') {
    const store = new DatabaseRateLimitStore(db, () => {})
    const hit = async (key: string, window: number) => await new Promise<void>((resolve, reject) => store.incr(key, (err) => (err === null ? resolve() : reject(err)), window))
    await hit('live', 60_000)
    for (const key of ['a', 'b', 'c']) await hit(key, 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  const deleted = await purgeExpired(db, 2)
  t.same(deleted, {
    [REFRESH_TOKENS]: 5,
    [SESSIONS]: 5,
    [ONE_TIME_TOKENS]: 3,
    [OAUTH_STATES]: 2,
    [EMAIL_CODES]: 2,
    [MFA_CHALLENGES]: 1,
    ...(dialect === 'postgres' ? { [RATE_LIMITS]: 3 } : {})
  }, 'the expired rows, in batches of two')
  t.same(await ids(db, SESSIONS, 'id'), keptSessions, 'live, revoked-unexpired and recently expired sessions stay')
  t.equal((await db(REFRESH_TOKENS).select('hash')).length, keptRefreshTokens, 'their refresh tokens stay, used ones too (replay detection)')
  t.same(await ids(db, ONE_TIME_TOKENS, 'user_id'), ['u1', 'u2'], 'live and recently expired one-time tokens stay')
  t.same(await ids(db, OAUTH_STATES, 'id'), ['live-state'], 'a used state stays until it could no longer verify')
  t.same(await ids(db, EMAIL_CODES, 'hash'), ['live-code'], 'a live email code stays')
  t.same(await ids(db, MFA_CHALLENGES, 'hash'), ['live-challenge'], 'a live challenge stays')
  if (dialect === 'postgres') t.same(await ids(db, RATE_LIMITS, 'key'), ['live'], 'the live rate-limit window stays')
  t.equal((await sessions.refresh('users', (await sessions.create('users', 'u1')).refreshToken, 3))?.userId, 'u1', 'sessions still work')

  t.same(await purgeExpired(db), Object.fromEntries(Object.keys(deleted).map((table) => [table, 0])), 'a second run finds nothing')
})

t.test('purgeExpired without auth tables', async (t) => {
  const app = await buildApp(t, config({ tables: [] }))
  t.same(await purgeExpired(app.fastbase.db), {}, 'nothing to purge, no error')
})
