// `fastbase check [config]`: the server's start-up checks without starting it. The same loader
// (lib/config/load.ts) and the same checks (lib/config/startup-checks.ts) the server runs at start.
import { loadConfigFile } from '../config/load.js'
import type { Env, UnsetSecrets } from '../config/secrets.js'
import { startupChecks, type StartupCheck } from '../config/startup-checks.js'
import { bundledExampleConfig, loadBundledExample, withExampleSecrets } from '../config/example.js'
import { configFileOf, dataDirOf, databaseUrlOf, describeLocations, EnvFileError, insideFastbaseCheckout, withEnvFile } from '../config/locations.js'
import { ConfigError } from '../errors.js'
import { dialectOfUrl } from '../dialects/index.js'
import { EXIT, atMost, err, out, parse, UsageError, type Command } from './io.js'

/** How every command that reads a config finds it (lib/config/locations.ts), for its --help. */
export const LOCATION_HELP = `  config              a .json, .js, .mjs or .ts config. Default: FASTBASE_CONFIG (from the
                      environment or .env), else fastbase.config.{ts,mts,js,mjs,json} in the
                      current folder; none found: an error (the bundled example only inside
                      the fastbase checkout). The server finds it the same way.
  --env-file <file>   the .env file to read. Default: .env in the current folder, when there
                      is one (variables already set in the environment win)`

export const check: Command = {
  summary: 'validate a config and list every problem',
  help: `Usage: fastbase check [config] [--env-file <file>]

Validates a config the way the server does at start, by the same code (load, $NAME secrets,
schema, cross-field checks, FASTBASE_CORS_ORIGINS, rules, search and actions compiled for the
database's dialect, external token issuers' keys, the schema a fresh database gets) and prints
every problem and every warning, one per line. Prints "config OK: N tables, M actions" when there is no problem.

${LOCATION_HELP}

Environment: the config's $NAME secrets, FASTBASE_CORS_ORIGINS; DATABASE_URL picks the SQL
dialect (postgres://... = PostgreSQL, anything else = SQLite). The database is not opened: what
only it can refuse (an SQL text the config passes through, its recorded schema) shows at start.
Exit codes: 0 config OK, 1 problems found or no config found, 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { 'env-file': { type: 'string' } })
    atMost(positionals, 1)
    const { file, result } = await loadCheckedConfig(positionals[0], values['env-file'])
    if (!reportProblems(file, result)) return EXIT.failed
    out(`config OK: ${result.tables} table${result.tables === 1 ? '' : 's'}, ${result.actions} action${result.actions === 1 ? '' : 's'} (${file})`)
    return EXIT.ok
  }
}

export interface CheckedConfig {
  file: string
  /** process.env, with the .env file's variables and the bundled example's development secrets. */
  env: Env
  /** The database the server would open with this environment. */
  databaseUrl: string
  dataDir: string
  result: CheckResult
}

/**
 * The config a command works on, found by the server's rule (lib/config/locations.ts), loaded and
 * checked as the server does at start. Prints (stderr) which config, .env and database it uses.
 * Throws (exit 1) when no config is found outside the fastbase checkout: a guessed config could plan
 * the project's tables away.
 */
export async function loadCheckedConfig (given: string | undefined, envFile: string | boolean | undefined, unset: UnsetSecrets = 'problem'): Promise<CheckedConfig> {
  const loaded = await commandEnv(envFile)
  let env = loaded.env
  const location = configFileOf(given, env)
  if (location.file === undefined && !insideFastbaseCheckout()) {
    throw new Error(`no config found in ${process.cwd()}: pass the config file as an argument, set FASTBASE_CONFIG (in the environment or .env), or run this in the folder that holds fastbase.config.ts`)
  }
  const file = location.file ?? bundledExampleConfig
  if (location.file === undefined) {
    const example = withExampleSecrets(env)
    env = example.env
    for (const name of example.filled) err(`note: ${name} is not set: the bundled example uses a public development value (as npm start does)`)
  }
  const dataDir = dataDirOf(undefined, env)
  const databaseUrl = databaseUrlOf(undefined, env, dataDir)
  err(`using ${describeLocations(`${file} (${location.file === undefined ? 'bundled example' : location.from})`, loaded.file, databaseUrl)}`)
  const load = location.file === undefined ? loadBundledExample() : loadConfigFile(file)
  return { file, env, databaseUrl, dataDir, result: await checkConfig(await load.catch(problemsOf), env, databaseUrl, unset) }
}

/** process.env with the .env file's variables (`--env-file`, else .env of the working directory), as the server reads them. */
export async function commandEnv (envFile: string | boolean | undefined): ReturnType<typeof withEnvFile> {
  return await withEnvFile(process.env, typeof envFile === 'string' ? envFile : undefined).catch((error: unknown) => {
    if (error instanceof EnvFileError) throw new UsageError(`--env-file ${error.file}: cannot read the file`)
    throw error
  })
}

/** Prints the warnings and problems of a check to stderr; true when there is no problem. */
export function reportProblems (file: string, result: CheckResult): boolean {
  for (const warning of result.warnings) err(`warning: ${warning}`)
  if (result.problems.length === 0) return true
  err(`${file}: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}`)
  for (const problem of result.problems) err(`  - ${problem}`)
  return false
}

class LoadProblems { constructor (readonly problems: string[]) {} }

function problemsOf (error: unknown): LoadProblems {
  if (error instanceof ConfigError) return new LoadProblems(error.problems)
  throw error
}

export interface CheckResult extends StartupCheck {
  tables: number
  actions: number
}

async function checkConfig (raw: unknown, env: Env, databaseUrl: string, unset: UnsetSecrets): Promise<CheckResult> {
  if (raw instanceof LoadProblems) return { problems: raw.problems, warnings: [], tables: 0, actions: 0 }
  const checked = await startupChecks(raw, env, dialectOfUrl(databaseUrl), unset)
  return { ...checked, tables: checked.config?.tables.length ?? 0, actions: checked.config?.actions?.length ?? 0 }
}
