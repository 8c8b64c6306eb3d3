// Test harness: every test can run on SQLite and, when FASTBASE_TEST_PG_URL is set, on PostgreSQL.
// FASTBASE_TEST_DIALECT=sqlite or =postgres runs the per-dialect tests on that one only (the other's
// are recorded as skipped), e.g. to debug one file on one database.
// Each app gets its own database (a file under the test's testdir, or a PostgreSQL schema
// `fbt_<random>` dropped afterwards) and is closed when the test ends. When FASTBASE_TEST_PG_URL goes
// through a transaction-mode pooler (`?pooler=transaction`, test/lib/dialects/pooler.test.ts), where a schema
// cannot be chosen per connection, each app gets a database of its own instead, made and dropped
// through FASTBASE_TEST_PG_DIRECT_URL, which its realtime also listens on.
import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import type { Test } from 'tap'
import fastbase, { options as serverOptions } from '../app.js'
import type { DatabaseSettings } from '../schemas/config.js'
import type { DialectName } from '../lib/dialects/types.js'
import { connect, type Connection } from '../lib/dialects/index.js'
import { FastbaseError } from '../lib/errors.js'

/** ADMIN_SERVICE_TOKEN of every app built by `buildApp` (unless overridden). */
export const adminToken = 'fastbase-test-admin-service-token'

/** PostgreSQL server for tests, e.g. `postgres://postgres@127.0.0.1:5432/test`; unset = SQLite only. */
const pgUrl = process.env.FASTBASE_TEST_PG_URL || undefined
/** Behind a pooler: the same server, directly (databases are made and dropped there). */
const pgDirectUrl = process.env.FASTBASE_TEST_PG_DIRECT_URL || undefined
const pooled = pgUrl !== undefined && new URL(pgUrl).searchParams.get('pooler') === 'transaction'
if (pooled && pgDirectUrl === undefined) throw new Error('FASTBASE_TEST_PG_URL names a pooler: set FASTBASE_TEST_PG_DIRECT_URL too')
/** The direct URL of each database made behind the pooler, by its pooled URL. */
const directUrls = new Map<string, string>()

/** The one dialect FASTBASE_TEST_DIALECT asks for, if any; anything else set there is a mistake. */
function onlyDialect (): DialectName | undefined {
  const value = process.env.FASTBASE_TEST_DIALECT || undefined
  if (value === undefined || value === 'sqlite' || value === 'postgres') return value
  throw new Error(`FASTBASE_TEST_DIALECT must be sqlite or postgres, not ${JSON.stringify(value)}`)
}
const only = onlyDialect()
if (only === 'postgres' && pgUrl === undefined) throw new Error('FASTBASE_TEST_DIALECT=postgres needs FASTBASE_TEST_PG_URL')

/** Why a dialect does not run, or undefined when it does. */
function skipReason (dialect: DialectName): string | undefined {
  if (only !== undefined && only !== dialect) return `FASTBASE_TEST_DIALECT=${only}`
  if (dialect === 'postgres' && pgUrl === undefined) return 'PostgreSQL not configured'
  return undefined
}

/** The dialects this run covers. */
export const dialects: DialectName[] = (['sqlite', 'postgres'] as const).filter((d) => skipReason(d) === undefined)

export type DialectTest = (t: Test, dialect: DialectName) => Promise<void>

/**
 * Runs `fn` as a subtest `<dialect>: <name>` per dialect. A dialect that does not run (no
 * PostgreSQL, or FASTBASE_TEST_DIALECT names the other) is recorded as a skipped subtest, so the run
 * reports how much work it did not do.
 */
export async function forEachDialect (t: Test, name: string, fn: DialectTest): Promise<void> {
  const runs = (['sqlite', 'postgres'] as const).map((dialect) => {
    const skip = skipReason(dialect)
    return skip === undefined
      ? t.test(`${dialect}: ${name}`, (t) => fn(t, dialect))
      : t.test(`${dialect}: ${name}`, { skip }, async () => {})
  })
  await Promise.all(runs)
}

// t.testdir() wipes its folder on every call, so it is called once per test and each database or
// app gets its own folder inside.
const testdirs = new WeakMap<Test, string>()

/** A new empty folder for this test (inside its testdir, removed after the test). */
export function freshDir (t: Test, prefix = 'dir-'): string {
  let root = testdirs.get(t)
  if (root === undefined) {
    root = t.testdir()
    testdirs.set(t, root)
  }
  return mkdtempSync(join(root, prefix))
}

async function dropSchema (schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

/**
 * A database URL of `dialect` that nothing else uses, removed when the test ends (after the apps
 * using it are closed: tap runs teardowns last-registered first). Several apps may share it: start
 * them one after the other (better-sqlite3 blocks the thread while it waits for a lock).
 */
export function sharedDatabase (t: Test, dialect: DialectName): string {
  if (dialect === 'sqlite') return `sqlite:${join(freshDir(t, 'db-'), 'fastbase.sqlite')}`
  if (pgUrl === undefined) throw new Error('PostgreSQL is not configured: set FASTBASE_TEST_PG_URL')
  if (pooled) return pooledDatabase(t, pgUrl)
  const schema = `fbt_${randomBytes(6).toString('hex')}`
  t.teardown(() => dropSchema(schema))
  const url = new URL(pgUrl)
  url.searchParams.set('schema', schema)
  return url.toString()
}

/** Behind the pooler: a new database, made at once (psql) so the URL works as soon as it is returned. */
function pooledDatabase (t: Test, url: string): string {
  const name = `fbt_${randomBytes(6).toString('hex')}`
  onDirect(`CREATE DATABASE "${name}"`)
  t.teardown(() => { onDirect(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) })
  const pooledUrl = new URL(url)
  pooledUrl.pathname = `/${name}`
  const direct = new URL(pgDirectUrl!)
  direct.pathname = `/${name}`
  directUrls.set(pooledUrl.toString(), direct.toString())
  return pooledUrl.toString()
}

function onDirect (sql: string): void {
  execFileSync('psql', [pgDirectUrl!, '-qXc', sql], { stdio: ['ignore', 'ignore', 'inherit'] })
}

/** A bare Knex connection to a fresh database, for tests below the app (closed after the test). */
export async function openTestDatabase (t: Test, dialect: DialectName): Promise<Connection & { databaseUrl: string }> {
  const databaseUrl = sharedDatabase(t, dialect)
  const connection = connect(databaseUrl, freshDir(t, 'data-'))
  t.teardown(connection.close)
  await connection.prepare()
  return { ...connection, databaseUrl }
}

export interface BuildOptions {
  /** Default 'sqlite'. */
  dialect?: DialectName
  /** A database to use instead of a fresh one (see `sharedDatabase`). */
  databaseUrl?: string
  /** Behind a pooler: the database's direct URL (realtime listens there). Default: the one `sharedDatabase` made. */
  databaseDirectUrl?: string
  /** A data directory to use instead of a fresh one (files, backups). */
  dataDir?: string
  /** Where `$NAME` config secrets are read from (default: process.env). */
  env?: Record<string, string | undefined>
  /** Default `adminToken`. */
  adminServiceToken?: string
  /** Runs after fastbase is registered, before ready(): extra hooks or routes a test needs. */
  setup?: (app: FastifyInstance) => void
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']

/** Logging is off unless FASTBASE_TEST_LOG is set (to a level name, or anything for `info`). */
function testLogger (): false | { level: string } {
  const level = process.env.FASTBASE_TEST_LOG
  if (!level) return false
  return { level: LOG_LEVELS.includes(level) ? level : 'info' }
}

/** The fastbase root plugin on a new Fastify instance with its own database, ready, closed after the test. */
export async function buildApp (t: Test, config: DatabaseSettings | string, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const databaseUrl = opts.databaseUrl ?? sharedDatabase(t, opts.dialect ?? 'sqlite')
  const app = Fastify({ ...serverOptions, logger: testLogger() })
  t.teardown(() => app.close())
  await app.register(fastbase, {
    config,
    databaseUrl,
    databaseDirectUrl: opts.databaseDirectUrl ?? directUrls.get(databaseUrl),
    dataDir: opts.dataDir ?? freshDir(t, 'app-'),
    env: opts.env,
    adminServiceToken: opts.adminServiceToken ?? adminToken
  })
  opts.setup?.(app)
  await app.ready()
  return app
}

/** The status of an in-process call: a FastbaseError's, 500 for any other error. */
export async function statusOf (call: () => Promise<unknown>): Promise<number> {
  try {
    await call()
    return 200
  } catch (error) {
    return error instanceof FastbaseError ? error.statusCode : 500
  }
}
