// The start-up warning for an auth table whose `email` anyone may read (decision D96): a listRule
// or viewRule that an anonymous caller can pass, with no field rule on `email` and `email` not
// noSelect, hands every account's address to whoever lists the table.
import type { TableDescriptor } from '../table/descriptor.js'
import type { Dialect } from '../dialects/types.js'
import { compile, toCondition } from '../expr/index.js'
import { expressionHops } from '../expr/relations.js'
import { ANONYMOUS, authGlobals } from '../auth-context.js'

export function exposedEmailWarnings (tables: ReadonlyMap<string, TableDescriptor>, dialect: Dialect): string[] {
  const warnings: string[] = []
  for (const table of tables.values()) {
    const email = table.fields.get('email')
    if (table.auth === undefined || email === undefined || email.noSelect === true || table.fieldRules.has('email')) continue
    const open = (['listRule', 'viewRule'] as const).filter((rule) => {
      const expr = table.rules[rule]
      if (expr === null) return false
      const scope = { dialect, table, globals: { auth: authGlobals(ANONYMOUS), request: {}, params: {} }, seesHidden: true, expressionHops: expressionHops() }
      return toCondition(compile(expr, scope)) !== false
    })
    if (open.length > 0) {
      warnings.push(`tables.${table.name}: its ${open.join(' and ')} can let anonymous callers read accounts, and with them every email: add fieldRules: { email: 'id == auth.uid' } to its rules extension (or make email noSelect)`)
    }
  }
  return warnings
}
