// Loads the project config (an object, or a file found by the rule the CLI shares,
// lib/config/locations.ts: option, FASTBASE_CONFIG, fastbase.config.* in the working directory, else
// the bundled example for fastbase's own server and a ConfigError for a host), resolves its `$NAME`
// secrets, validates it, resolves the runtime options, runs every check of the config a start makes
// (lib/config/startup-checks.ts, shared with `fastbase check`), logs which config, .env and database
// it uses, and decorates `app.fastbase`. Any problem stops the start with a `ConfigError` listing all
// of them, before the database is opened.
import { mkdir } from 'node:fs/promises'
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify'
import type { DatabaseSettings } from '../schemas/config.js'
import type { Fastbase, FastbaseOptions, FastbaseRuntimeOptions } from './types.js'
import { loadConfigFile } from '../lib/config/load.js'
import type { Env } from '../lib/config/secrets.js'
import { startupChecks } from '../lib/config/startup-checks.js'
import { dialectOfUrl } from '../lib/dialects/index.js'
import { ConfigError } from '../lib/errors.js'
import { bundledExampleConfig, loadBundledExample, withExampleSecrets } from '../lib/config/example.js'
import { resolveLimits } from '../lib/limits.js'
import { CONFIG_FILE_NAMES, configFileOf, dataDirOf, databaseUrlOf, describeLocations, nonEmpty, withEnvFile } from '../lib/config/locations.js'
import { listedOrigins, originsFromEnv } from '../lib/auth/request-origin.js'

export { ConfigError }

export interface ConfigPluginOptions extends FastbaseOptions {
  /** No config named or found means the bundled example: fastbase's own server only (app.ts, plugins/standalone.ts). */
  bundledExampleAllowed?: boolean
}

interface ConfigSource {
  /** What the log and errors call it: a file path or "the config object". */
  label: string
  load: () => Promise<unknown>
  bundledExample: boolean
}

const configPlugin: FastifyPluginAsync<ConfigPluginOptions> = async (app, opts) => {
  // An environment given by the host is used as is; otherwise .env of the working directory fills
  // in what the process environment does not set (as the CLI reads it).
  const { env, file: envFile } = opts.env !== undefined ? { env: opts.env, file: undefined } : await withEnvFile(process.env, undefined)
  const source = configSource(opts, env)
  const raw = await source.load()
  const secretsEnv = source.bundledExample ? withExampleDefaults(env, app.log) : env
  const options = runtimeOptions(opts, env)
  // The checks `fastbase check` runs, by the same function: nothing is opened or created before they pass.
  const checked = await startupChecks(raw, secretsEnv, dialectOfUrl(options.databaseUrl))
  // Warnings first, as `fastbase check` prints them: a refused config's are worth reading too.
  for (const warning of checked.warnings) app.log.warn(`fastbase config: ${warning}`)
  if (checked.config === undefined) throw new ConfigError(checked.problems)

  const config: DatabaseSettings = checked.config
  for (const note of checked.notes ?? []) app.log.info(`fastbase config: ${note}`)
  await mkdir(options.dataDir, { recursive: true })
  app.log.info({ config: source.label, tables: config.tables.length, actions: config.actions?.length ?? 0 }, 'fastbase config loaded')
  app.log.info(`fastbase: using ${describeLocations(source.label, envFile, options.databaseUrl)}`)
  // The other members of `Fastbase` (db, dialect, tables) are added by the plugins that own them.
  // Each entry an origin: checked with the config (lib/config/startup-checks.ts).
  const origins = listedOrigins(config, originsFromEnv(env).origins)
  const fastbase: Pick<Fastbase, 'config' | 'options' | 'limits'> = { config, options: { ...options, origins }, limits: resolveLimits(config) }
  app.decorate('fastbase', fastbase as Fastbase)
}

function configSource (opts: ConfigPluginOptions, env: Env): ConfigSource {
  if (typeof opts.config === 'object' && opts.config !== null) {
    const config = opts.config
    return { label: 'the config object', load: async () => config, bundledExample: false }
  }
  const { file } = configFileOf(nonEmpty(opts.config), env)
  if (file !== undefined) return { label: file, load: async () => await loadConfigFile(file), bundledExample: false }
  // A host that forgot its config must not get a demo blog on public development secrets.
  if (opts.bundledExampleAllowed !== true) {
    throw new ConfigError([`config: none given: pass the \`config\` option (an object or a file path), set FASTBASE_CONFIG, or put ${CONFIG_FILE_NAMES.join(' / ')} in the working directory (${process.cwd()}). Only fastbase's own server (\`npm start\`) serves the bundled example.`])
  }
  return { label: `${bundledExampleConfig} (bundled example: no config named or found)`, load: loadBundledExample, bundledExample: true }
}

/** `env` plus development values for the example's unset secrets (not in production: there a missing secret is an error). */
function withExampleDefaults (env: Env, log: FastifyBaseLogger): Env {
  const { env: filled, filled: names } = withExampleSecrets(env)
  for (const name of names) {
    log.warn(`${name} is not set: the bundled example config uses a public development value. Set ${name} before exposing this server.`)
  }
  return filled
}

function runtimeOptions (opts: FastbaseOptions, env: Env): Omit<FastbaseRuntimeOptions, 'origins'> {
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

export default fp(configPlugin, { fastify: '5.x', name: 'fastbase-config' })
