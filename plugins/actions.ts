// Compiles the config's actions at start-up and decorates `app.fastbase.runAction`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { compileActions, compileCodeActionsWith, runAction, type CompiledAction, type RunOptions } from '../lib/actions/run.js'
import type { CodeAction } from '../lib/actions/code.js'
import { errors } from '../lib/errors.js'

/** Runs an action: a config action answers one array of rows per query or step; a code action, what its handler returns. */
export type RunActionFn = (name: string, params?: Record<string, unknown>, options?: RunOptions) => Promise<unknown>

async function actions (app: FastifyInstance, opts: { code?: ReadonlyArray<CodeAction<any, any, any>> }): Promise<void> {
  const { config, dialect, descriptors: tables } = app.fastbase
  const fromConfig = compileActions(config.actions ?? [], tables, dialect)
  const compiled: Map<string, CompiledAction> = new Map([...fromConfig, ...compileCodeActionsWith(opts.code ?? [], fromConfig, dialect)])
  app.fastbase.actions = compiled
  app.fastbase.runAction = async (name, params = {}, options = {}) => {
    const action = compiled.get(name)
    if (action === undefined) throw errors.actionNotFound(name)
    return await runAction({ executor: app.fastbase.executor, storage: app.fastbase.storage, tables, tablesWithin: (trx) => app.fastbase.tablesWithin(trx) }, action, params, options)
  }
}

export default fp(actions, { name: 'fastbase-actions', dependencies: ['fastbase-tables'] })
