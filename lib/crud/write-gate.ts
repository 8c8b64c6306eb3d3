// The checks a write meets before its body is read: could this caller write here at all? Each
// compiles the table's rules for the caller, which depends only on the config and the caller's
// class, so the answer is kept in the plan cache (plan-cache.ts) like a plan, and a request of a
// known class only looks it up.
import type { RuleName } from '../table/descriptor.js'
import { errors } from '../errors.js'
import { ruleCondition, type CrudContext } from './context.js'
import { cachedPlan } from './plan-cache.js'

/** The rules a write route checks up front, with the cache keys of both checks built once, not per request. */
export interface GateRules {
  rules: readonly RuleName[]
  writeKey: string
  tryKey: string
}

export function gateRules (...rules: RuleName[]): GateRules {
  return { rules, writeKey: `mayWrite:${rules.join(',')}`, tryKey: `mayTry:${rules.join(',')}` }
}

/**
 * Before a write does any work (file parts are stored before the body is validated): could any row
 * pass one of `rules` for this caller? A rule that is missing, or that folds to false for this
 * caller (`auth.uid != null` when anonymous), is a 403 now rather than after the upload.
 */
export function assertMayWrite (ctx: CrudContext, { rules, writeKey }: GateRules): void {
  assertAssurance(ctx)
  if (ctx.auth.admin || !ctx.applyRules) return
  const possible = cachedPlan(ctx, writeKey, (traced) => rules.some((rule) => traced.table.rules[rule] !== null &&
    ruleCondition(traced, rule, { newValues: rule === 'createRule' ? 'row' : new Map() }) !== false), NOTHING_HELD)
  if (!possible) throw errors.forbidden()
}

/**
 * Before a body is validated: would this write be refused whatever the body says? A missing rule is,
 * and so is a createRule that folds to false for this caller (an insert answers 403 for it). An
 * update or delete rule that folds to false is not: such a write narrows to no rows, as in teenybase.
 */
export function assertMayTry (ctx: CrudContext, { rules, tryKey }: GateRules): void {
  assertAssurance(ctx)
  if (ctx.auth.admin || !ctx.applyRules) return
  const possible = cachedPlan(ctx, tryKey, (traced) => rules.some((rule) => traced.table.rules[rule] !== null &&
    (rule !== 'createRule' || ruleCondition(traced, rule, { newValues: 'row' }) !== false)), NOTHING_HELD)
  if (!possible) throw errors.forbidden()
}

/**
 * A table whose writes need a second factor (rules `mfaForWrites`, decision D117): a caller below
 * level 2 who is not an admin is refused, whatever the rules say and whether they apply: the level
 * is the caller's, not the rules', so an action that skips the rules (SQL mode, `applyTableRules:
 * false`) does not skip it (decision D127). An auth flow's own write (sign-up) is the flow's; the
 * system caller is an admin. Admins meet `admin.requireMfa` at sign-in instead. Every write path
 * calls it: lib/crud/write.ts for the table API and steps, lib/actions/run.ts for SQL mode.
 */
export function assertAssurance (ctx: CrudContext): void {
  if (ctx.table.mfaForWrites && !ctx.auth.admin && ctx.auth.aal < 2 && ctx.source === undefined) throw errors.mfaRequired()
}

/** A decision holds no SQL text: it counts nothing against the cache's bound on text held. */
const NOTHING_HELD = (): number => 0
