// `fastbase migrate [config] [--apply [--allow-destructive]]`: the schema migrations between a database
// and a config, the server's own (lib/db/migrations.ts) — printed, or applied with --apply. The safe
// ones apply; a destructive one (it drops or changes data) only when the user names it: with
// --allow-destructive, or by typing "yes" when asked on a terminal. A config older than the one the
// database last applied plans nothing unless --allow-older-config says it is a roll-back, and after an
// apply the instances that run on the database (their heartbeats) are named: they serve the config
// they started with until restarted (decision D98).
import { createInterface } from 'node:readline/promises'
import { migrate as runMigrations, dropsEveryTableMessage, outdatedMessage, projectOf, type MigrateOptions, type MigrateResult, type MigrationDatabase, type PendingMigration } from '../db/migrations.js'
import { internalTablesFor } from '../internal/internal-tables.js'
import { liveInstances, type LiveInstance } from '../backup/liveness.js'
import { safeDatabaseUrl } from '../config/locations.js'
import { connect, dialectOfUrl, schemaDialect } from '../dialects/index.js'
import { LOCATION_HELP, loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, atMost, err, out, parse, UsageError, type Command } from './io.js'

export const migrate: Command = {
  summary: 'print the schema migrations a database needs; --apply runs the safe ones',
  help: `Usage: fastbase migrate [config] [--apply [--allow-destructive] [--allow-drop-all] [--allow-older-config]] [--env-file <file>]

Compares the database with the config, as the server does when it starts, and prints every
pending migration with its SQL, the destructive ones (dropping a table or column, changing a type,
new constraints on existing rows) marked with their reason. Nothing changes without --apply.

${LOCATION_HELP}
  --apply             apply the pending safe migrations, in one transaction: all or none.
                      Destructive ones are held back and listed (exit 1), unless:
  --allow-destructive apply the destructive ones too. On a terminal (not CI), --apply asks
                      instead, and applies them only when you type "yes"
  --allow-drop-all    with --allow-destructive: apply even a plan that drops every table the
                      config recorded (otherwise refused: the config is probably the wrong one)
  --allow-older-config plan from this config even though the database has since applied a newer
                      one (a deliberate roll-back; otherwise nothing is planned)

After --apply, the fastbase servers running on the database (seen by their heartbeats) are named:
they keep serving the config they started with until they are restarted.

A config only plans changes to the tables it created itself: tables another config (another
appName) made in the same database are never dropped.

Environment: DATABASE_URL (default: sqlite:<FASTBASE_DATA_DIR or ./data>/fastbase.sqlite, the
server's default), the config's $NAME secrets.
Exit codes: 0 done (or nothing to do), 1 no config found, config problems, database unreachable,
a migration refused (nothing applied) or destructive migrations held back (the safe ones were
applied), 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, {
      apply: { type: 'boolean' },
      'allow-destructive': { type: 'boolean' },
      'allow-drop-all': { type: 'boolean' },
      'allow-older-config': { type: 'boolean' },
      'env-file': { type: 'string' }
    })
    atMost(positionals, 1)
    const apply = values.apply === true
    const allow: Pick<MigrateOptions, 'allowDestructive' | 'allowDropAll' | 'allowOlderConfig'> = { allowDestructive: values['allow-destructive'] === true, allowDropAll: values['allow-drop-all'] === true, allowOlderConfig: values['allow-older-config'] === true }
    if (!apply && (allow.allowDestructive === true || allow.allowDropAll === true || allow.allowOlderConfig === true)) throw new UsageError('--allow-destructive, --allow-drop-all and --allow-older-config go with --apply')
    if (allow.allowDropAll === true && allow.allowDestructive !== true) throw new UsageError('--allow-drop-all goes with --allow-destructive')
    const { file, env, databaseUrl, dataDir, result } = await loadCheckedConfig(positionals[0], values['env-file'])
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const config = result.config
    const dialect = dialectOfUrl(databaseUrl)
    const connection = connect(databaseUrl, dataDir)
    const log = { info: () => {}, warn: () => {} }
    try {
      await connection.prepare()
      const tables = [...internalTablesFor(config, dialect), ...config.tables]
      const database: MigrationDatabase = { knex: connection.knex, ddl: schemaDialect(dialect), dialect, log }
      const run = async (options: MigrateOptions): Promise<MigrateResult> => await runMigrations(database, tables, { ...options, project: projectOf(config) })
      const where = safeDatabaseUrl(databaseUrl)
      if (!apply) {
        const plan = await run({ mode: 'dry-run' })
        reportPlan(where, plan)
        return plan.outdated !== undefined ? EXIT.failed : EXIT.ok
      }
      if (allow.allowDestructive !== true && interactive(env)) allow.allowDestructive = await confirmDestructive(await run({ mode: 'dry-run', allowOlderConfig: allow.allowOlderConfig }))
      const applied = await run({ mode: 'apply', ...allow })
      reportApplied(where, applied)
      reportRunning(await liveInstances(connection.knex))
      return applied.pending.length > 0 ? EXIT.failed : EXIT.ok
    } finally {
      await connection.close()
    }
  }
}

/** A person at a terminal who can answer a question; never in CI. */
function interactive (env: NodeJS.ProcessEnv): boolean {
  return process.stdin.isTTY === true && nonEmpty(env.CI) === undefined
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value === '' || value === 'false' || value === '0' ? undefined : value
}

/** Lists the destructive steps of a plan and asks; true only for a typed "yes". */
async function confirmDestructive (plan: MigrateResult): Promise<boolean> {
  const destructive = plan.pending.filter((p) => p.destructive)
  if (destructive.length === 0 || plan.dropsEveryTable !== undefined) return false
  out(`${count(destructive.length)} would lose or change data:`)
  for (const pending of destructive) out(`  ${pending.name}: ${pending.reason ?? 'may lose data'}`)
  const prompt = createInterface({ input: process.stdin, output: process.stdout })
  try {
    const answer = await prompt.question('Type "yes" to apply them too (anything else applies the safe ones only): ')
    return answer.trim() === 'yes'
  } finally {
    prompt.close()
  }
}

function reportPlan (database: string, result: MigrateResult): void {
  if (result.outdated !== undefined) {
    err(`${database}: ${outdatedMessage(result.outdated)}`)
    return
  }
  if (result.pending.length === 0) {
    out(`${database}: nothing to do, the database matches the config`)
    return
  }
  const destructive = result.pending.filter((p) => p.destructive).length
  const how = destructive > 0 ? 'run with --apply to apply the safe ones, --apply --allow-destructive for all' : 'run with --apply to apply them'
  out(`${database}: ${count(result.pending.length)} pending${destructive > 0 ? ` (${destructive} destructive)` : ''}; ${how}`)
  for (const pending of result.pending) out(pendingBlock(pending))
  if (result.dropsEveryTable !== undefined) err(`warning: ${dropsEveryTableMessage(result.dropsEveryTable)}`)
}

function reportApplied (database: string, result: MigrateResult): void {
  if (result.applied.length === 0) out(`${database}: nothing applied${result.pending.length === 0 ? ', the database matches the config' : ''}`)
  else out(`${database}: applied ${count(result.applied.length)}`)
  for (const migration of result.applied) out(`  ${migration.name}`)
  if (result.pending.length === 0) return
  err(`held back ${count(result.pending.length)} that would lose or change data (or that wait for one that does):`)
  for (const pending of result.pending) err(`  ${pending.name}${pending.reason !== undefined ? `: ${pending.reason}` : ''}${pending.waitsFor !== undefined ? ` (after ${pending.waitsFor.join(', ')})` : ''}`)
  err('Review them with `fastbase migrate`, back up the database, then run `fastbase migrate --apply --allow-destructive` to apply them.')
}

/** The servers that run on the database: they serve the config they started with until restarted. */
function reportRunning (instances: LiveInstance[]): void {
  if (instances.length === 0) return
  const list = instances.slice(0, 10).map((i) => `  ${i.host} pid ${i.pid} (seen ${i.seenSecondsAgo} s ago)`)
  err(`${instances.length} fastbase server${instances.length === 1 ? ' runs' : 's run'} on this database with the config ${instances.length === 1 ? 'it' : 'they'} started with: restart ${instances.length === 1 ? 'it' : 'them'} to serve this one.`)
  for (const line of list) err(line)
  if (instances.length > list.length) err(`  and ${instances.length - list.length} more`)
}

function count (n: number): string {
  return `${n} migration${n === 1 ? '' : 's'}`
}

function pendingBlock (pending: PendingMigration): string {
  const head = `\n  ${pending.name}${pending.destructive ? ` [destructive: ${pending.reason ?? 'may lose data'}]` : ''}${pending.waitsFor !== undefined ? ` (after ${pending.waitsFor.join(', ')})` : ''}`
  const sql = pending.sql.trimEnd().split('\n').map((line) => `    ${line}`)
  return [head, ...sql].join('\n')
}
