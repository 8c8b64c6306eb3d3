// The kernel's in-process API for server code: `tables.<name>.<operation>(args, { as })`,
// `callerFor(table, userId)` and `transaction(fn)` (lib/api/tables.ts does the work). `as` is a host
// request this instance's `authenticate` proved (plugins/host-auth.ts remembers it in `callers`), a
// caller fastbase gave (callerFor, a hook's or a code action's `caller`), or 'system', which
// bypasses every rule and field flag and is never a default.
import type { Knex } from 'knex'
import { tablesApi, type ActingCaller } from '../api/tables.js'
import { adminContext, type AuthContext } from '../auth-context.js'
import { callerForUser } from '../auth/sessions/user-context.js'
import type { ProvenCallers } from '../auth/proven-callers.js'
import { withinTransaction, type Executor } from '../crud/context.js'
import type { TableDescriptor } from '../table/descriptor.js'
import type { FileStorage } from '../files/tracker.js'
import { errors } from '../errors.js'
import type { Limits } from '../limits.js'
import { requestGlobals, type RequestParts } from '../request-globals.js'
import type { AuthServices, KernelLog, KernelServices, UntypedTables } from './types.js'

/** Server code acting as itself: a superadmin past every rule and field flag. */
const SYSTEM: ActingCaller = Object.freeze({ auth: Object.freeze(adminContext('superadmin', 'system')), applyRules: false })

/** A Fastify request, told by its shape (lib/ knows no Fastify). */
function isRequest (value: object): value is RequestParts & { id: string } {
  return 'raw' in value && 'routeOptions' in value && 'headers' in value
}

/** An AuthContext as fastbase makes them (lib/auth-context.ts). */
function isCaller (value: object): value is AuthContext {
  return 'uid' in value && 'admin' in value && typeof value.admin === 'boolean' && 'superadmin' in value && typeof value.superadmin === 'boolean' &&
    'jwt' in value && typeof value.jwt === 'object' && 'record' in value && typeof value.record === 'object'
}

interface TableApiInput {
  appUrl: string
  executor: Executor
  descriptors: ReadonlyMap<string, TableDescriptor>
  storage: FileStorage
  db: Knex
  limits: Limits
  auth: AuthServices
  callers: ProvenCallers
  log: KernelLog
}

export type ServerApi = Pick<KernelServices, 'tables' | 'tablesWithin' | 'transaction' | 'callerFor'>

export function serverApi ({ appUrl, executor, descriptors, storage, db, limits, auth, callers, log }: TableApiInput): ServerApi {
  function resolve (as: unknown): ActingCaller {
    if (as === 'system') return SYSTEM
    if (typeof as === 'object' && as !== null) {
      if (isRequest(as)) return { auth: callers.of(as), applyRules: true, request: requestGlobals(as, appUrl), requestId: as.id }
      if (isCaller(as)) return { auth: as, applyRules: true }
    }
    throw new TypeError('fastbase: `as` must be a request authenticated by this instance, a caller (app.fastbase.callerFor, a hook\'s or an action\'s caller), or \'system\'')
  }
  const over = tablesApi({ descriptors, resolve, storage, root: db, log }, limits)
  const tablesWithin = (trx: Knex.Transaction): UntypedTables => over(withinTransaction(executor, trx))
  return {
    tables: over(executor),
    tablesWithin,
    transaction: async (work) => await db.transaction(async (trx) => await work({ tables: tablesWithin(trx), db: trx })),
    callerFor: async (table, userId) => {
      const at = auth.tables.get(table)
      if (at === undefined) throw new Error(`fastbase callerFor: "${table}" is not an auth table`)
      const caller = await callerForUser(executor, at, userId)
      if (caller === undefined) throw errors.recordNotFound()
      return caller
    }
  }
}
