// Compiles every table's descriptor once at start-up; bad rules stop the start with their paths.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { describeTables, RULE_NAMES } from '../lib/table/descriptor.js'
import { unguardedRoleWarnings } from '../lib/auth/role-check.js'
import { searchWarnings } from '../lib/search/fts.js'

async function tables (app: FastifyInstance): Promise<void> {
  const descriptors = describeTables(app.fastbase.config.tables, app.fastbase.dialect)
  for (const table of descriptors.values()) {
    if (!table.hasRulesExtension) app.log.warn(`table "${table.name}" has no rules extension: only admins can use it`)
    else {
      // A rule left out may be an oversight (a warning); one written as `null` is a decision (noted).
      const rules = table.data.extensions?.find((e) => e.name === 'rules') ?? {}
      const locked = RULE_NAMES.filter((r) => table.rules[r] === null)
      const unset = locked.filter((r) => !(r in rules))
      const nulls = locked.filter((r) => r in rules)
      if (unset.length > 0) app.log.warn(`table "${table.name}": ${unset.join(', ')} not set: admins only for those operations`)
      if (nulls.length > 0) app.log.info(`table "${table.name}": ${nulls.join(', ')} null: admins only for those operations`)
    }
    for (const warning of [...unguardedRoleWarnings(table), ...searchWarnings(table.data)]) app.log.warn(warning)
  }
  app.fastbase.descriptors = descriptors
}

export default fp(tables, { name: 'fastbase-tables', dependencies: ['fastbase-database'] })
