// GET <prefix>/health: liveness (the process answers and its database answers `select 1`; decision
// D23 fixes the 200 body's `status`). GET <prefix>/health/ready: readiness for a load balancer during
// rolling deploys: the database answers and its schema has what this instance's config needs.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
// The `app.fastbase` declaration.
import type {} from '../plugins/types.js'
import { packageVersion } from '../lib/package.js'
import { errors } from '../lib/errors.js'
import { ErrorSchema } from '../schemas/http/error.js'
import { requestLog } from '../plugins/server-log.js'

export const HealthSchema = Type.Object({
  status: Type.Literal('ok'),
  name: Type.String({ description: 'The config\'s `appName`, or `fastbase`' }),
  appName: Type.Optional(Type.String({ description: 'The config\'s `appName`, when it has one (as teenybase answers it)' })),
  version: Type.Optional(Type.Number({ description: 'The config\'s `version` number, when it has one (teenybase\'s settings version)' })),
  fastbase: Type.String({ description: 'The fastbase package version serving the API' }),
  dialect: Type.Optional(Type.String()),
  uptime: Type.Number({ description: 'Seconds since the process started' }),
  timestamp: Type.Integer({ description: 'The server\'s clock in milliseconds since 1970 (Date.now()), as teenybase answers it' })
})

/** A check that hangs (exhausted pool, dead PostgreSQL host) must fail before the prober gives up. */
const DB_CHECK_TIMEOUT_MS = 3000

const ReadySchema = Type.Object({
  ready: Type.Boolean(),
  database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  pending: Type.Integer({ description: 'Schema migrations the config needs that the database has not applied (names: GET /migrations, admins)' }),
  destructive: Type.Integer({ description: 'How many of them are destructive: they wait for an operator and do not make the instance unready' }),
  configOutdated: Type.Boolean({ description: 'The database has applied a newer config than this instance runs: restart it with the new config (it serves meanwhile, and plans no migration)' })
}, { description: 'Counts only: which migrations, tables or errors stays with admins' })

/** Readiness is computed at most this often: a prober (or anyone) asking faster gets the last answer. */
const READY_CACHE_MS = 2000

type Readiness = Static<typeof ReadySchema>

const health: FastifyPluginAsync = async (app) => {
  let last: { at: number, answer: Promise<Readiness> } | undefined
  // Logged once per streak, not on every probe.
  let warnedOutdated = false

  /**
   * Not ready when the database does not answer, or when a safe migration is pending (the database
   * lacks a table or column the config uses: `autoMigrate: false`, or another instance's start has
   * not applied it yet). Pending destructive steps (a column the config dropped, a new constraint)
   * leave the instance ready: it serves as before while they wait for an operator.
   */
  async function readiness (): Promise<Readiness> {
    try {
      const status = await withTimeout(app.fastbase.schema.status(), DB_CHECK_TIMEOUT_MS)
      const destructive = status.pending.filter((p) => p.destructive).length
      const configOutdated = status.outdated !== undefined
      if (configOutdated && !warnedOutdated) app.log.warn('readiness check: the database has applied a newer config than this instance runs: restart it with the new config (decision D98)')
      warnedOutdated = configOutdated
      return { ready: status.pending.length === destructive, database: 'ok', pending: status.pending.length, destructive, configOutdated }
    } catch (err) {
      app.log.warn({ err }, 'readiness check: database unavailable')
      return { ready: false, database: 'unavailable', pending: 0, destructive: 0, configOutdated: false }
    }
  }

  app.get('/health/ready', {
    schema: {
      tags: ['meta'],
      operationId: 'health_ready',
      summary: 'Readiness check (load balancers)',
      'x-document': { errors: [401, 503] },
      description: 'Answers 200 when this instance can serve: its database answers and has every table and column the config needs. 503 otherwise, with the same counts as `data` (and, from Fastify, while the instance shuts down). Computed at most every 2 seconds.',
      security: [],
      response: { 200: ReadySchema, 503: ErrorSchema }
    }
  }, async () => {
    if (last === undefined || Date.now() - last.at > READY_CACHE_MS) last = { at: Date.now(), answer: readiness() }
    const answer = await last.answer
    if (answer.ready) return answer
    // The shared error body, with the same counts as `data`.
    throw errors.notReady(answer.database === 'ok' ? `Not ready: ${answer.pending - answer.destructive} schema migration${answer.pending - answer.destructive === 1 ? ' the config needs is' : 's the config needs are'} not applied` : 'Not ready: the database is unavailable', answer)
  })

  app.get('/health', {
    schema: {
      tags: ['meta'],
      operationId: 'health',
      summary: 'Health check',
      'x-document': { errors: [401, 503] },
      description: 'Answers 503 when the database does not answer `select 1`.',
      security: [],
      response: { 200: HealthSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    try {
      await withTimeout(app.fastbase.db.raw('select 1'), DB_CHECK_TIMEOUT_MS)
    } catch (err) {
      requestLog(request).warn({ err }, 'health check: database unavailable')
      throw errors.databaseUnavailable()
    }
    const { appName, version } = app.fastbase.config
    return {
      status: 'ok' as const,
      name: appName ?? 'fastbase',
      appName,
      version,
      fastbase: packageVersion,
      dialect: app.fastbase.dialect?.name,
      uptime: process.uptime(),
      timestamp: Date.now()
    }
  })
}

async function withTimeout<T> (work: PromiseLike<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}


export default health
