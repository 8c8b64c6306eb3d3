// The in-process API for server code: `app.fastbase.tables.<name>.<operation>(args, { as })`,
// `app.fastbase.callerFor(table, userId)` and `app.fastbase.transaction(fn)` (lib/api/tables.ts does
// the work). `as` is resolved here, where requests are known: a host request this instance's
// `authenticate` ran on, a caller fastbase gave (callerFor, a hook's or a code action's `caller`),
// or 'system', which bypasses every rule and field flag and is never a default.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Fastbase } from './types.js'
import { tablesApi, type ActingCaller } from '../lib/api/tables.js'
import { adminContext, type AuthContext } from '../lib/auth-context.js'
import { callerForUser } from '../lib/auth/user-context.js'
import { withinTransaction } from '../lib/crud/context.js'
import { errors } from '../lib/errors.js'
import { requestGlobals } from '../lib/request-globals.js'

/** Server code acting as itself: a superadmin past every rule and field flag. */
const SYSTEM: ActingCaller = Object.freeze({ auth: Object.freeze(adminContext('superadmin', 'system')), applyRules: false })

function isRequest (value: object): value is FastifyRequest {
  return 'raw' in value && 'routeOptions' in value && 'headers' in value
}

/** An AuthContext as fastbase makes them (lib/auth-context.ts). */
function isCaller (value: object): value is AuthContext {
  return 'uid' in value && 'admin' in value && typeof value.admin === 'boolean' && 'superadmin' in value && typeof value.superadmin === 'boolean' &&
    'jwt' in value && typeof value.jwt === 'object' && 'record' in value && typeof value.record === 'object'
}

async function tableApi (app: FastifyInstance): Promise<void> {
  const fb = app.fastbase
  const appUrl = fb.config.appUrl

  function resolve (as: unknown): ActingCaller {
    if (as === 'system') return SYSTEM
    if (typeof as === 'object' && as !== null) {
      if (isRequest(as)) return { auth: fb.callerOf(as), applyRules: true, request: requestGlobals(as, appUrl), requestId: as.id }
      if (isCaller(as)) return { auth: as, applyRules: true }
    }
    throw new TypeError('fastbase: `as` must be a request authenticated by this instance, a caller (app.fastbase.callerFor, a hook\'s or an action\'s caller), or \'system\'')
  }

  const over = tablesApi({ descriptors: fb.descriptors, resolve, storage: fb.storage, root: fb.db, log: app.log }, fb.limits)
  fb.tables = over(fb.executor) as Fastbase['tables']
  fb.tablesWithin = (trx) => over(withinTransaction(fb.executor, trx)) as Fastbase['tables']
  fb.executor.hooks!.tablesWithin = fb.tablesWithin
  fb.transaction = async (work) => await fb.db.transaction(async (trx) => await work({ tables: fb.tablesWithin(trx), db: trx }))
  fb.callerFor = async (table, userId) => {
    const at = fb.auth.tables.get(table)
    if (at === undefined) throw new Error(`fastbase callerFor: "${table}" is not an auth table`)
    const caller = await callerForUser(fb.executor, at, userId)
    if (caller === undefined) throw errors.recordNotFound()
    return caller
  }
}

export default fp(tableApi, { name: 'fastbase-table-api', dependencies: ['fastbase-auth-context', 'fastbase-files'] })
