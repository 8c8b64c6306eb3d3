// `fastbase migrate [config] [--apply]`: the schema migrations between a database and a config, the
// server's own (lib/db/migrations.ts) — printed, or applied with --apply. For deployments that apply
// destructive changes from a release step rather than through `POST /api/v1/migrations`.
import { migrate as runMigrations, type MigrateResult, type PendingMigration } from '../db/migrations.js'
import { internalTablesFor } from '../auth/store-tables.js'
import { dataDirOf, databaseUrlOf } from '../config/locations.js'
import { connect, schemaDialect } from '../dialects/index.js'
import { isPostgresUrl } from '../dialects/postgres-connection.js'
import { loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, atMost, out, parse, type Command } from './io.js'

export const migrate: Command = {
  summary: 'print the schema migrations a database needs; --apply runs them',
  help: `Usage: fastbase migrate [config] [--apply] [--env-file <file>]

Compares the database with the config, as the server does when it starts, and prints every
pending migration with its SQL: the safe ones the server applies on start (unless the config says
autoMigrate: false) and the destructive ones (dropping a table or column, changing a type, new
constraints on existing rows) that wait for an explicit apply. Nothing changes without --apply.

  config              a .json, .js, .mjs or .ts config. Default: FASTBASE_CONFIG, then the
                      bundled example (as npm start does)
  --apply             apply every pending migration, in one transaction: all or none
  --env-file <file>   read variables from a .env file first (variables already set win)

Environment: DATABASE_URL (default: sqlite:<FASTBASE_DATA_DIR or ./data>/fastbase.sqlite, the
server's default), the config's $NAME secrets.
Exit codes: 0 done (or nothing to do), 1 config problems, database unreachable or a migration
refused (nothing applied), 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { apply: { type: 'boolean' }, 'env-file': { type: 'string' } })
    atMost(positionals, 1)
    const { file, env, result } = await loadCheckedConfig(positionals[0], values['env-file'])
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const config = result.config
    const databaseUrl = databaseUrlOf(undefined, env, dataDirOf(undefined, env))
    const dialect = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite'
    const connection = connect(databaseUrl, dataDirOf(undefined, env))
    const log = { info: () => {}, warn: () => {} }
    try {
      await connection.prepare()
      const tables = [...internalTablesFor(config, dialect), ...config.tables]
      const migrated = await runMigrations({ knex: connection.knex, ddl: schemaDialect(dialect), dialect, log }, tables, { mode: values.apply === true ? 'apply' : 'dry-run' })
      report(safeUrl(databaseUrl), migrated, values.apply === true)
      return EXIT.ok
    } finally {
      await connection.close()
    }
  }
}

function report (database: string, result: MigrateResult, applied: boolean): void {
  if (applied) {
    if (result.applied.length === 0) out(`${database}: nothing to apply, the database matches the config`)
    else out(`${database}: applied ${count(result.applied.length)}`)
    for (const migration of result.applied) out(`  ${migration.name}`)
    return
  }
  if (result.pending.length === 0) {
    out(`${database}: nothing to do, the database matches the config`)
    return
  }
  const destructive = result.pending.filter((p) => p.destructive).length
  out(`${database}: ${count(result.pending.length)} pending${destructive > 0 ? ` (${destructive} destructive)` : ''}; run with --apply to apply them`)
  for (const pending of result.pending) out(pendingBlock(pending))
}

function count (n: number): string {
  return `${n} migration${n === 1 ? '' : 's'}`
}

function pendingBlock (pending: PendingMigration): string {
  const head = `\n  ${pending.name}${pending.destructive ? ` [destructive: ${pending.reason ?? 'may lose data'}]` : ''}${pending.waitsFor !== undefined ? ` (after ${pending.waitsFor.join(', ')})` : ''}`
  const sql = pending.sql.trimEnd().split('\n').map((line) => `    ${line}`)
  return [head, ...sql].join('\n')
}

/** The URL without its password, for output. */
function safeUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
  }
}
