// What a start says about a config that it still runs, in one list: `fastbase check` prints the same
// lines (lib/config/startup-checks.ts returns them to both), so a check never says less than a start (decision D93).
import type { DatabaseSettings } from '../../schemas/config.js'
import { RULE_NAMES, type TableDescriptor } from '../table/descriptor.js'
import { unguardedRoleWarnings } from '../auth/role-check.js'
import { authCookieOf } from '../auth/sessions/auth-cookie.js'

export interface ConfigNotes {
  /** Likely oversights: a table without rules, a rule left out, an unguarded role field, the auth cookie, an action_link that moves nothing. */
  warnings: string[]
  /** Decisions worth a line in the log (a rule written as `null`), not warnings. */
  notes: string[]
}

/** The warnings and notes of a validated config, whose tables `tables` describes (their rules compiled). */
export function configNotes (config: DatabaseSettings, tables: ReadonlyMap<string, TableDescriptor>): ConfigNotes {
  const warnings: string[] = []
  const notes: string[] = []
  for (const table of tables.values()) {
    if (!table.hasRulesExtension) warnings.push(`table "${table.name}" has no rules extension: only admins can use it`)
    else {
      // A rule left out may be an oversight (a warning); one written as `null` is a decision (noted).
      const rules = table.data.extensions?.find((e) => e.name === 'rules') ?? {}
      const locked = RULE_NAMES.filter((r) => table.rules[r] === null)
      const unset = locked.filter((r) => !(r in rules))
      const nulls = locked.filter((r) => r in rules)
      if (unset.length > 0) warnings.push(`table "${table.name}": ${unset.join(', ')} not set: admins only for those operations`)
      if (nulls.length > 0) notes.push(`table "${table.name}": ${nulls.join(', ')} null: admins only for those operations`)
    }
    warnings.push(...unguardedRoleWarnings(table))
  }
  const cookie = authCookieOf(config.appUrl, config.authCookie)
  if (cookie?.warning !== undefined) warnings.push(cookie.warning)
  // teenybase reads action_link per template only; a config-wide one changes no link (lib/auth/mailer.ts).
  if (config.email?.variables?.action_link !== undefined) {
    warnings.push('email.variables.action_link does not change the links in verification and reset emails (as in teenybase, each email\'s default comes after it): set action_link in the auth extension\'s emailTemplates.verification.variables and emailTemplates.passwordReset.variables')
  }
  return { warnings, notes }
}
