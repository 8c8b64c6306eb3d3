// Compiles every table's descriptor once at start-up; bad rules stop the start with their paths.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { describeTables, RULE_NAMES, RuleError } from '../lib/table.js'
import { compile, ExpressionError } from '../lib/expr/index.js'
import { ANONYMOUS, authGlobals } from '../lib/auth-context.js'

async function tables (app: FastifyInstance): Promise<void> {
  const { config, dialect } = app.fastbase
  const descriptors = describeTables(config.tables, dialect)
  const problems: string[] = []
  for (const table of descriptors.values()) {
    // Compile each rule once with an anonymous caller: unknown columns and functions surface now, not per request.
    for (const rule of RULE_NAMES) {
      const expr = table.rules[rule]
      if (expr === null) continue
      try {
        compile(expr, { dialect, table, globals: { auth: authGlobals(ANONYMOUS), request: {}, params: {} }, seesHidden: true, newValues: rule === 'createRule' || rule === 'updateRule' ? 'row' : undefined })
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error
        problems.push(`tables.${table.name}.${rule}: ${error.message}`)
      }
    }
    const locked = RULE_NAMES.filter((r) => table.rules[r] === null)
    if (!table.hasRulesExtension) app.log.warn(`table "${table.name}" has no rules extension: only admins can use it`)
    else if (locked.length > 0) app.log.warn(`table "${table.name}": ${locked.join(', ')} not set: admins only for those operations`)
  }
  if (problems.length > 0) throw new RuleError(problems.join('\n'))
  app.fastbase.tables = descriptors
}

export default fp(tables, { name: 'fastbase-tables', dependencies: ['fastbase-database'] })
