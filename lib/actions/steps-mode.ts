// Steps mode: each step goes through the table API's own operations (rules, noInsert/noUpdate,
// hooks, typed values) unless the action sets applyTableRules: false.
import type { ActionStep } from '../../schemas/config.js'
import type { CrudContext } from '../crud/context.js'
import { compileCaller } from '../crud/context.js'
import { select } from '../crud/read.js'
import { insert, update, remove } from '../crud/write.js'
import { errors } from '../errors.js'

type Row = Record<string, unknown>

/** `limit: 'params.n'`: an expression that must come out as a whole number. */
function count (ctx: CrudContext, action: string, what: string, value: number | string | undefined): number | undefined {
  if (value === undefined || typeof value === 'number') return value
  const compiled = compileCaller(ctx, what, value)
  if (compiled.kind !== 'lit' || typeof compiled.value !== 'number' || !Number.isInteger(compiled.value) || compiled.value < 0) {
    throw errors.actionConfig(action, `${what} must be a whole number (got ${compiled.kind === 'lit' ? JSON.stringify(compiled.value) : 'an expression over columns'})`)
  }
  return compiled.value
}

export async function runStep (ctx: CrudContext, action: string, step: ActionStep): Promise<Row[]> {
  switch (step.type) {
    case 'SELECT':
      return await select(ctx, {
        where: step.where,
        select: step.select,
        order: step.order,
        group: step.group,
        limit: count(ctx, action, 'limit', step.limit),
        offset: count(ctx, action, 'offset', step.offset),
        distinct: step.distinct
      })
    case 'INSERT':
      return await insert(ctx, { values: step.values ?? {}, expr: step.expr, returning: step.returning, or: step.or })
    case 'UPDATE':
      return await update(ctx, { where: step.where ?? '', set: step.set, setFromConfig: true, setValues: step.setValues, returning: step.returning, or: step.or })
    case 'DELETE':
      return await remove(ctx, { where: step.where ?? '', returning: step.returning })
  }
}
