// PostgreSQL through pg: a Knex pool, fastbase's own type parsers, `?schema=` URLs, and statements
// run outside transactions as named prepared statements (parsed and planned once per connection),
// unnamed behind a transaction-mode pooler (`?pooler=transaction`, decision D102).
import { createRequire } from 'node:module'
import { createHash } from 'node:crypto'
import knexFactory, { type Knex } from 'knex'
import type Pg from 'pg'
import { memoize } from '../memo.js'
import { quote } from './common.js'
import { LIFT_STATEMENT_TIMEOUT, schemaLockSql } from './postgres-ddl.js'
import { DEFAULT_LONG_READS, MAX_PREPARED_TEXT, QUEUED_LONG_READS, envInt, type Connection, type ConnectionSettings, type DirectRunner, type Row } from './connection.js'
import { errorCode, errorMessage } from '../thrown.js'
import { ReadGate } from './read-gate.js'
import { isoFromUtcText } from './postgres-timestamp.js'
import { ConnectionLease, type LeasePool } from './postgres-lease.js'
import { explainConnectError, knexLog } from './postgres-reachable.js'

const PG_INT8 = 20
/** The column a spanned write returns its transaction id in (DirectRunner#write). */
const WRITE_ID = 'fb_write_id'
const PG_NUMERIC = 1700
const PG_INT8_ARRAY = 1016
const PG_NUMERIC_ARRAY = 1231
const PG_TEXT_ARRAY = 1009
const PG_TIMESTAMPTZ = 1184

const toNumber = (value: string): number => Number(value)
type Parser = (value: string) => unknown
// pg is loaded with the first PostgreSQL connection: SQLite deployments never load it.
let pgModule: typeof Pg | undefined
const loadPg = (): typeof Pg => (pgModule ??= createRequire(import.meta.url)('pg'))
type ParserFormat = Parameters<typeof Pg.types.getTypeParser>[1]
// pg's own parsers (typed `any` by pg-types: each oid's parser gives its own type).
const builtinParser = (oid: number, format?: ParserFormat): Parser => loadPg().types.getTypeParser(oid, format)

/**
 * Type parsers of fastbase's pg connections (passed per connection, never set on the global
 * pg.types, so other pg users in the process are unaffected): counts, bigint and numeric columns
 * come back as JSON numbers (decision D31), timestamptz keeps pg's Date.
 */
const pgTypes: Knex.PgCustomTypesConfig = {
  getTypeParser (oid: number, format: string): Parser {
    if (format !== 'binary') {
      if (oid === PG_INT8 || oid === PG_NUMERIC) return toNumber
      if (oid === PG_INT8_ARRAY || oid === PG_NUMERIC_ARRAY) {
        const parseTextArray = builtinParser(PG_TEXT_ARRAY) as (value: string) => Array<string | null>
        return (value) => parseTextArray(value).map((v) => (v === null ? null : Number(v)))
      }
    }
    return builtinParser(oid, format === 'binary' ? 'binary' : 'text')
  }
}

/**
 * The parsers of fastbase's own statements on the direct path, whose rows fastbase decodes itself: as
 * pgTypes, but a timestamptz in the UTC form the session prints is ISO text at once, not a Date made
 * and turned back into text (decision D81). Knex queries, a developer's included, keep pgTypes.
 */
const directTypes: Knex.PgCustomTypesConfig = {
  getTypeParser (oid: number, format: string): Parser {
    if (oid === PG_TIMESTAMPTZ && format !== 'binary') return isoTimestamptz
    return pgTypes.getTypeParser(oid, format)
  }
}

function isoTimestamptz (value: string): unknown {
  return isoFromUtcText(value) ?? builtinParser(PG_TIMESTAMPTZ)(value)
}

export function isPostgresUrl (url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url)
}

/** The URL parameter that says a transaction-mode pooler (PgBouncer, Supavisor, ...) stands between fastbase and PostgreSQL. */
export const POOLER_PARAMETER = 'pooler'

/**
 * fastbase's own parameters of a PostgreSQL URL (`?schema=`, `?pooler=transaction`), and the URL
 * pg gets without them. A pooler and a schema do not go together: the schema is the connection's
 * search_path, session state a transaction-mode pooler does not keep (decision D102).
 */
export function postgresUrlParts (url: string): { connectionString: string, schema: string | undefined, pooler: boolean } {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  const pooler = parsed.searchParams.get(POOLER_PARAMETER) ?? undefined
  if (pooler !== undefined && pooler !== 'transaction') throw new Error(`${POOLER_PARAMETER}=${pooler} in the database URL: the only value is "transaction" (a transaction-mode pooler such as PgBouncer); leave it out for a direct connection or a session-mode pooler`)
  if (pooler !== undefined && schema !== undefined) throw new Error(`the database URL has both ?schema= and ?${POOLER_PARAMETER}=transaction: a transaction-mode pooler does not keep a connection's search_path. Behind a pooler, give the project its own database (or a role whose search_path names the schema: ALTER ROLE ... SET search_path) and leave ?schema= out`)
  parsed.searchParams.delete('schema')
  parsed.searchParams.delete(POOLER_PARAMETER)
  return { connectionString: parsed.toString(), schema, pooler: pooler !== undefined }
}

/**
 * What every pool connection runs under, so that every statement a caller causes does, whichever
 * path it takes (prepared on the pool, inside a transaction, an action's): no JIT — compiling a
 * generated statement costs far more than running it, every time — and, when `statementTimeout`
 * is set, a cancel past that many milliseconds. fastbase's own long work (schema changes, the
 * purge) lifts the timeout for its transaction (LIFT_STATEMENT_TIMEOUT). Times are UTC whatever the
 * server's own time zone (decision D81): dates print, cast and truncate as they do on SQLite, and
 * come back in the one text form directTypes turns into ISO text without a Date.
 */
function sessionSettings (statementTimeout: number | undefined): string {
  return `SET jit = off; ${POOLER_SESSION}; SET statement_timeout = ${statementTimeout === undefined ? 0 : Math.floor(statementTimeout)}`
}

/**
 * Behind a transaction-mode pooler a SET lands on whichever server connection ran it: only the time
 * zone, which PgBouncer tracks per client and sets again on each server connection it lends, holds.
 * jit and the statement timeout are then the role's or database's (docs/running.md says how).
 */
const POOLER_SESSION = "SET TIME ZONE 'UTC'"


export function connectPostgres (url: string, settings: ConnectionSettings = {}): Connection {
  const { connectionString, schema, pooler } = postgresUrlParts(url)
  const session = pooler ? POOLER_SESSION : sessionSettings(settings.statementTimeout)
  const longReads = envInt('FASTBASE_PG_LONG_READS', DEFAULT_LONG_READS)
  const gate = longReads > 0 ? new ReadGate(longReads, longReads * QUEUED_LONG_READS) : undefined
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString, types: pgTypes },
    searchPath: schema === undefined ? undefined : [schema],
    log: knexLog,
    pool: {
      min: 0,
      max: envInt('FASTBASE_PG_POOL_MAX', 10),
      afterCreate: (connection: PgConnection, done: (err: Error | null, connection: PgConnection) => void) => {
        connection.query(session).then(() => done(null, connection), (err: Error) => done(err, connection))
      }
    }
  })
  // Knex types its client `any`: the pool methods the lease uses.
  const client: LeasePool<PgConnection> = knex.client
  const lease = new ConnectionLease(client)
  const seen: PoolerSeen = { pooler }
  const direct: DirectRunner = {
    read: (statement, bindings) => {
      if (statement.native.length > MAX_PREPARED_TEXT) return undefined
      const run = () => runPooled(lease, statement.native, bindings, seen, statement.planEachRun === true)
      return statement.offThread === true && gate !== undefined ? gate.run(run) : run()
    },
    write: (sql, bindings, span) => {
      if (sql.length > MAX_PREPARED_TEXT) return undefined
      const spanned = span === undefined ? null : withWriteId(sql)
      if (span === undefined || spanned === null) return runPooled(lease, numbered(sql), bindings, seen)
      return runPooled(lease, spanned, bindings, seen).then((rows) => {
        const id = rows[0]?.[WRITE_ID]
        if (typeof id === 'string') span.span = { id }
        // The rows of the statement's own RETURNING list, as without a span: a caller may answer them as they are.
        return rows.map(({ [WRITE_ID]: _id, ...row }) => row)
      })
    },
    held: () => lease.held(),
    // The cluster's snapshot (xmin:xmax:in-progress ids): equal texts mean no transaction committed
    // in between (committing moves xmax or leaves the in-progress list), on this instance or any other.
    dataVersion: async () => String((await runPooled(lease, 'SELECT pg_current_snapshot()::text AS v', [], seen))[0].v)
  }
  return {
    knex,
    dialectName: 'postgres',
    direct,
    // A first connection now, so a database that is not there stops the start with one clear line.
    prepare: async () => {
      try {
        await (schema !== undefined ? createSchema(knex, schema) : knex.raw('select 1'))
      } catch (err) {
        throw explainConnectError(err, url)
      }
    },
    close: async () => {
      lease.close()
      await knex.destroy()
    }
  }
}

/**
 * Creates the `?schema=` schema if missing. The advisory lock makes concurrent starts safe
 * (two concurrent CREATE SCHEMA IF NOT EXISTS can otherwise fail on a catalog unique index).
 */
async function createSchema (knex: Knex, schema: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw(LIFT_STATEMENT_TIMEOUT)
    await trx.raw(schemaLockSql('?'), [schema])
    await trx.raw(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`)
  })
}

/** `?` placeholders -> `$1, $2, ...` (fastbase's SQL has no other question marks). */
const numbered = memoize(2000, (sql: string) => { let n = 0; return sql.replace(/\?/g, () => `$${++n}`) })

/**
 * A write with RETURNING, numbered, returning one more column: the id of the statement's own
 * transaction (it runs alone, outside any transaction block), which later snapshots list as in
 * progress or completed. Null without RETURNING (kept too). Kept per text: a plan's text is one string,
 * so a repeated write neither builds nor hashes a new one.
 */
const withWriteId = memoize(2000, (sql: string) => sql.includes(' RETURNING ') ? numbered(`${sql}, pg_current_xact_id()::text AS ${WRITE_ID}`) : null)

interface PgConnection {
  __knex__disposed?: unknown
  query: ((config: { name?: string, text: string, values: readonly unknown[], types: Knex.PgCustomTypesConfig }) => Promise<{ rows: Row[] }>) & ((text: string) => Promise<unknown>)
  /** pg's record of the statements prepared on this connection (name -> text). */
  connection: { parsedStatements: Record<string, string> }
}

// Prepared statements live as long as their connection: past this many on one connection (callers
// can send endless distinct shapes), they are all dropped and prepared again as they recur.
const PREPARED_PER_CONNECTION = 256
const preparedCounts = new WeakMap<object, number>()

// A name per statement text: PostgreSQL parses and plans a named statement once per connection.
const statementName = memoize(2000, (text: string) => `fb_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`)

function isStalePlan (err: unknown): boolean {
  return errorCode(err) === '0A000' && /cached plan must not change result type/.test(errorMessage(err))
}

/** Whether a transaction-mode pooler stands in between: declared in the URL, or seen losing a named statement. */
interface PoolerSeen { pooler: boolean }

/**
 * A named statement missing on the connection pg prepared it on, or there already under its name: a
 * transaction-mode pooler lent another server connection. The statement did not run.
 */
function isPoolerLoss (err: unknown): boolean {
  const code = errorCode(err)
  return code === '26000' || code === '42P05'
}

/**
 * On a leased pool connection: as a named prepared statement, or (`unnamed`) planned for these values,
 * which is also how every statement runs behind a transaction-mode pooler: a named statement lives on
 * one server connection, and the pooler lends the next transaction another. A pooler nobody declared
 * shows itself by losing a named statement: from then on the connection's statements run unnamed.
 */
async function runPooled (lease: ConnectionLease<PgConnection>, text: string, values: readonly unknown[], seen: PoolerSeen, unnamed = false): Promise<Row[]> {
  const acquired = lease.acquire()
  const connection = acquired instanceof Promise ? await acquired : acquired
  try {
    if (unnamed || seen.pooler) return (await connection.query({ text, values, types: directTypes })).rows
    const name = statementName(text)
    const prepared = connection.connection.parsedStatements
    if (!Object.hasOwn(prepared, name)) {
      const count = (preparedCounts.get(prepared) ?? 0) + 1
      if (count > PREPARED_PER_CONNECTION) {
        await connection.query('DEALLOCATE ALL')
        connection.connection.parsedStatements = {}
      } else {
        preparedCounts.set(prepared, count)
      }
    }
    try {
      return (await connection.query({ name, text, values, types: directTypes })).rows
    } catch (err) {
      if (isPoolerLoss(err)) {
        seen.pooler = true
        return (await connection.query({ text, values, types: directTypes })).rows
      }
      // A schema change (a migration, here or on another instance) changed what the statement
      // returns: PostgreSQL refuses the plan prepared before it. Prepare everything again, once.
      if (!isStalePlan(err)) throw err
      await connection.query('DEALLOCATE ALL')
      connection.connection.parsedStatements = {}
      preparedCounts.delete(prepared)
      return (await connection.query({ name, text, values, types: directTypes })).rows
    }
  } finally {
    lease.release(connection)
  }
}

/**
 * Behind a transaction-mode pooler fastbase cannot set the statement timeout per connection: when the
 * role or database sets none either, callers' statements run unbounded. What to do, or undefined.
 */
export async function poolerTimeoutWarning (connection: Connection, databaseUrl: string): Promise<string | undefined> {
  if (connection.dialectName !== 'postgres' || !postgresUrlParts(databaseUrl).pooler) return undefined
  const result: { rows?: Array<{ statement_timeout?: unknown }> } = await connection.knex.raw('SHOW statement_timeout')
  if (result.rows?.[0]?.statement_timeout !== '0') return undefined
  return 'behind a transaction-mode pooler (?pooler=transaction) fastbase cannot set limits.statementTimeout per connection, and the database sets none: set it on the role, e.g. ALTER ROLE <user> SET statement_timeout = \'5s\' (docs/running.md, Behind a connection pooler)'
}
