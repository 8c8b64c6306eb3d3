// The fields that make up `auth.role` decide what rules and guards let a user do. teenybase clients
// send them at sign-up, so they stay writable; but a create or update rule that never looks at them
// lets anyone who may sign up (or edit their record) pick their own role. Start-up warns about it.
import type { TableDescriptor } from '../table/descriptor.js'
import { identifierPaths } from '../expr/index.js'
import { authFieldsOf } from './fields.js'

/** One warning per audience field a writing rule leaves unchecked; empty when every path is closed. */
export function unguardedRoleWarnings (table: TableDescriptor): string[] {
  if (table.auth === undefined) return []
  const warnings: string[] = []
  for (const field of authFieldsOf(table.data, table.auth).audience) {
    const writes = [
      { rule: 'createRule', closed: field.noInsert === true },
      { rule: 'updateRule', closed: field.noUpdate === true }
    ] as const
    for (const { rule, closed } of writes) {
      const expr = table.rules[rule]
      if (closed || expr === null) continue
      // `role` and `new.role` both read the value being written (create rules see the new row).
      const reads = identifierPaths(expr).some((p) => p.at(-1) === field.name && (p.length === 1 || p[0] === 'new' || p[0] === table.name))
      if (!reads) {
        warnings.push(`table "${table.name}": ${rule} does not check "${field.name}", which becomes auth.role: any caller it admits can set their own role. ` +
          `Check it in the rule (e.g. ${rule === 'createRule' ? `${field.name} == 'user'` : `new.${field.name} == ${field.name}`}) or mark the field ${rule === 'createRule' ? 'noInsert' : 'noUpdate'}.`)
      }
    }
  }
  return warnings
}
