// Compiles the config's actions at start-up and decorates `app.fastbase.runAction`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { compileActions, runAction, type CompiledAction, type RunOptions } from '../lib/actions/run.js'
import { errors } from '../lib/errors.js'

export type RunActionFn = (name: string, params?: Record<string, unknown>, options?: RunOptions) => Promise<Array<Array<Record<string, unknown>>>>

async function actions (app: FastifyInstance): Promise<void> {
  const { config, dialect, descriptors: tables } = app.fastbase
  const compiled: Map<string, CompiledAction> = compileActions(config.actions ?? [], tables, dialect)
  app.fastbase.actions = compiled
  app.fastbase.runAction = async (name, params = {}, options = {}) => {
    const action = compiled.get(name)
    if (action === undefined) throw errors.actionNotFound(name)
    return await runAction({ executor: app.fastbase.executor, storage: app.fastbase.storage, tables }, action, params, options)
  }
}

export default fp(actions, { name: 'fastbase-actions', dependencies: ['fastbase-tables'] })
