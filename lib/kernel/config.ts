// The first step of the kernel: loads the project config (an object, or a file found by the rule the
// CLI shares, lib/config/locations.ts: option, FASTBASE_CONFIG, fastbase.config.* in the working
// directory, else the bundled example for fastbase's own server and a ConfigError for a host),
// resolves its `$NAME` secrets, validates it, resolves the runtime options, runs every check of the
// config a start makes (lib/config/startup-checks.ts, shared with `fastbase check`) and logs which
// config, .env and database it uses. Any problem stops the start with a `ConfigError` listing all of
// them, before the database is opened.
import { mkdir } from 'node:fs/promises'
import type { DatabaseSettings } from '../../schemas/config.js'
import { loadConfigFile } from '../config/load.js'
import type { Env } from '../config/secrets.js'
import { startupChecks } from '../config/startup-checks.js'
import { dialectOfUrl } from '../dialects/index.js'
import { ConfigError } from '../errors.js'
import { bundledExampleConfig, loadBundledExample, withExampleSecrets } from '../config/example.js'
import { resolveLimits, type Limits } from '../limits.js'
import { CONFIG_FILE_NAMES, configFileOf, dataDirOf, databaseUrlOf, describeLocations, nonEmpty, withEnvFile } from '../config/locations.js'
import { listedOrigins, originsFromEnv } from '../auth/sessions/request-origin.js'
import type { FastbaseRuntimeOptions, KernelInput, KernelLog, KernelOptions } from './types.js'

interface ConfigSource {
  /** What the log and errors call it: a file path or "the config object". */
  label: string
  load: () => Promise<unknown>
  bundledExample: boolean
}

export interface LoadedConfig {
  config: DatabaseSettings
  options: FastbaseRuntimeOptions
  limits: Limits
}

export async function loadConfig ({ options: opts, bundledExampleAllowed, log }: Pick<KernelInput, 'options' | 'bundledExampleAllowed' | 'log'>): Promise<LoadedConfig> {
  // An environment given by the host is used as is; otherwise .env of the working directory fills
  // in what the process environment does not set (as the CLI reads it).
  const { env, file: envFile } = opts.env !== undefined ? { env: opts.env, file: undefined } : await withEnvFile(process.env, undefined)
  const source = configSource(opts, env, bundledExampleAllowed)
  const raw = await source.load()
  const secretsEnv = source.bundledExample ? withExampleDefaults(env, log) : env
  const options = runtimeOptions(opts, env)
  // The checks `fastbase check` runs, by the same function: nothing is opened or created before they pass.
  const checked = await startupChecks(raw, secretsEnv, dialectOfUrl(options.databaseUrl))
  // Warnings first, as `fastbase check` prints them: a refused config's are worth reading too.
  for (const warning of checked.warnings) log.warn(`fastbase config: ${warning}`)
  if (checked.config === undefined) throw new ConfigError(checked.problems)

  const config: DatabaseSettings = checked.config
  for (const note of checked.notes ?? []) log.info(`fastbase config: ${note}`)
  await mkdir(options.dataDir, { recursive: true })
  log.info({ config: source.label, tables: config.tables.length, actions: config.actions?.length ?? 0 }, 'fastbase config loaded')
  log.info(`fastbase: using ${describeLocations(source.label, envFile, options.databaseUrl)}`)
  // Each entry an origin: checked with the config (lib/config/startup-checks.ts).
  const origins = listedOrigins(config, originsFromEnv(env).origins)
  return { config, options: { ...options, origins, ...(source.bundledExample ? { bundledExample: true } : {}) }, limits: resolveLimits(config) }
}

function configSource (opts: KernelOptions, env: Env, bundledExampleAllowed: boolean): ConfigSource {
  if (typeof opts.config === 'object' && opts.config !== null) {
    const config = opts.config
    return { label: 'the config object', load: async () => config, bundledExample: false }
  }
  const { file } = configFileOf(nonEmpty(opts.config), env)
  if (file !== undefined) return { label: file, load: async () => await loadConfigFile(file), bundledExample: false }
  // A host that forgot its config must not get a demo blog on public development secrets.
  if (!bundledExampleAllowed) {
    throw new ConfigError([`config: none given: pass the \`config\` option (an object or a file path), set FASTBASE_CONFIG, or put ${CONFIG_FILE_NAMES.join(' / ')} in the working directory (${process.cwd()}). Only fastbase's own server (\`npm start\`) serves the bundled example.`])
  }
  return { label: `${bundledExampleConfig} (bundled example: no config named or found)`, load: loadBundledExample, bundledExample: true }
}

/** `env` plus development values for the example's unset secrets (not in production: there a missing secret is an error). */
function withExampleDefaults (env: Env, log: KernelLog): Env {
  const { env: filled, filled: names } = withExampleSecrets(env)
  for (const name of names) {
    log.warn(`${name} is not set: the bundled example config uses a public development value. Set ${name} before exposing this server.`)
  }
  return filled
}

function runtimeOptions (opts: KernelOptions, env: Env): Omit<FastbaseRuntimeOptions, 'origins'> {
  const dataDir = dataDirOf(opts.dataDir, env)
  return {
    dataDir,
    databaseUrl: databaseUrlOf(opts.databaseUrl, env, dataDir),
    databaseDirectUrl: nonEmpty(opts.databaseDirectUrl) ?? nonEmpty(env.DATABASE_DIRECT_URL),
    adminServiceToken: nonEmpty(opts.adminServiceToken) ?? nonEmpty(env.ADMIN_SERVICE_TOKEN),
    adminJwtSecret: nonEmpty(env.ADMIN_JWT_SECRET),
    smtpUrl: nonEmpty(env.SMTP_URL),
    exposeErrors: env.NODE_ENV !== 'production'
  }
}
