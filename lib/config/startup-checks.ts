// Every check a start runs on a config before it opens the database, in one function: the server
// (lib/kernel/config.ts) and `fastbase check` (lib/cli/check.ts) both call it, so a config `check`
// passes never fails a start for a reason the config holds, and both word each problem the same.
// What remains for the start alone depends on the database itself (reachable, its recorded schema,
// its own refusal of an SQL text the config passes through: a trigger body, a default expression).
import type { DatabaseSettings } from '../../schemas/config.js'
import type { DialectName } from '../dialects/types.js'
import { resolveSecrets, type Env, type UnsetSecrets } from './secrets.js'
import { validateConfig } from './validate.js'
import { ConfigError } from '../errors.js'
import { describeTables, type TableDescriptor } from '../table/descriptor.js'
import { compileActions } from '../actions/run.js'
import { dialectFor } from '../dialects/index.js'
import { planMigrations } from '../db/migration-plan.js'
import { internalTablesFor } from '../internal/internal-tables.js'
import { originsFromEnv } from '../auth/sessions/request-origin.js'
import { IdTokenVerifier, ownIssuerOf, providerEntries } from '../auth/oauth/id-tokens.js'
import { RemoteKeySets } from '../auth/oauth/key-sets.js'
import { errorMessage } from '../thrown.js'
import { exposedEmailWarnings } from './exposed-email.js'
import { configNotes } from './warnings.js'

export interface StartupCheck {
  /** Every problem, one line each (`path: message`); none = the start goes on to the database. */
  problems: string[]
  /** Logged once at start (teenybase keys dropped, provider entries that trust nothing, lib/config/warnings.ts). */
  warnings: string[]
  /** Logged at start as information (lib/config/warnings.ts). */
  notes?: string[]
  /** The validated config (secrets resolved), when there is no problem. */
  config?: DatabaseSettings
}

/**
 * Checks `raw` (a loaded config, `$NAME` secrets unresolved) for a server on a `dialect` database
 * with environment `env`: secrets, schema and cross-field checks, FASTBASE_CORS_ORIGINS, rules
 * and search compiled for the dialect, actions, external token issuers, and the schema a fresh
 * database would get. Each stage runs only when the one before found nothing (it reads what that
 * one validated).
 */
export async function startupChecks (raw: unknown, env: Env, dialect: DialectName, unset: UnsetSecrets = 'problem'): Promise<StartupCheck> {
  const secrets = resolveSecrets(raw, env, unset)
  const validated = validateConfig(secrets.config)
  const envProblems = originsFromEnv(env).problems
  const warnings = 'warnings' in validated ? [...validated.warnings] : []
  const early = [...secrets.problems, ...('problems' in validated ? validated.problems : []), ...envProblems]
  if (early.length > 0 || !('config' in validated)) return { problems: early, warnings }
  const { config } = validated

  const compiled = compileTables(config, dialect, warnings)
  if ('problems' in compiled) return { problems: compiled.problems, warnings }
  const { warnings: more, notes } = configNotes(config, compiled.tables)
  warnings.push(...more)
  const problems = [...await issuerProblems(config, warnings), ...schemaProblems(config, dialect)]
  return problems.length > 0 ? { problems, warnings } : { problems, warnings, notes, config }
}

/**
 * Rules, search and actions compiled as the kernel compiles them (lib/kernel/index.ts); what they
 * expose, warned about. The tables, described, for the other checks; the kernel describes them again
 * with what only an open database gives (the password hooks over its session store).
 */
function compileTables (config: DatabaseSettings, dialect: DialectName, warnings: string[]): { tables: Map<string, TableDescriptor> } | { problems: string[] } {
  try {
    const tables = describeTables(config.tables, dialectFor(dialect))
    compileActions(config.actions ?? [], tables, dialectFor(dialect))
    warnings.push(...exposedEmailWarnings(tables, dialectFor(dialect)))
    return { tables }
  } catch (error) {
    if (error instanceof ConfigError) return { problems: [...error.problems] }
    throw error
  }
}

/**
 * Keys of external token issuers, as the sign-in routes build them (only with an auth table: without
 * one no route reads them). Entry by entry, so every bad one is listed. Nothing is fetched: a JWKS is
 * read on first use.
 */
async function issuerProblems (config: DatabaseSettings, warnings: string[]): Promise<string[]> {
  if (!config.tables.some((t) => t.extensions?.some((e) => e.name === 'auth'))) return []
  const options = { ownIssuer: ownIssuerOf(config), keySets: new RemoteKeySets(), warn: (message: string) => { warnings.push(message) } }
  const problems: string[] = []
  for (const entry of providerEntries(config)) {
    await IdTokenVerifier.create([entry], options).catch((error: unknown) => { problems.push(errorMessage(error)) })
  }
  return problems
}

/** The schema a fresh database would get (the planner refuses what the dialect cannot create). */
function schemaProblems (config: DatabaseSettings, dialect: DialectName): string[] {
  try {
    planMigrations(undefined, { tables: [...internalTablesFor(config, dialect), ...config.tables] }, dialect)
    return []
  } catch (error) {
    return [`tables: the ${dialectFor(dialect).label} schema cannot be created: ${errorMessage(error)}`]
  }
}
