// Compiles the config's actions at start-up and decorates `app.fastbase.runAction`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { compileActions, compileCodeActionsWith, runAction, sqlWritesOf, type CompiledAction, type RunOptions } from '../lib/actions/run.js'
import type { CodeAction } from '../lib/actions/code.js'
import { errors } from '../lib/errors.js'
import type { Fastbase } from './types.js'

async function actions (app: FastifyInstance, opts: { code?: ReadonlyArray<CodeAction<any, any, any>> }): Promise<void> {
  const { config, dialect, descriptors: tables } = app.fastbase
  const fromConfig = compileActions(config.actions ?? [], tables, dialect)
  const compiled: Map<string, CompiledAction> = new Map([...fromConfig, ...compileCodeActionsWith(opts.code ?? [], fromConfig, dialect)])
  app.fastbase.actions = compiled
  // Before any host code can register a hook: `hooks.on` refuses a before-hook these could not run (decision D69).
  app.fastbase.executor.hooks?.writtenBySql(sqlWritesOf(fromConfig))
  const run = async (name: string, params: unknown = {}, options: RunOptions = {}): Promise<unknown> => {
    const action = compiled.get(name)
    if (action === undefined) throw errors.actionNotFound(name)
    return await runAction({ executor: app.fastbase.executor, storage: app.fastbase.storage, tables, tablesWithin: (trx) => app.fastbase.tablesWithin(trx) }, action, params, options)
  }
  // The declared type narrows params per action (FastbaseActions); any params reach the same checks.
  app.fastbase.runAction = run as Fastbase['runAction']
}

export default fp(actions, { name: 'fastbase-actions', dependencies: ['fastbase-tables'] })
