// Loads the project config (an object, or a file found by the rule the CLI shares,
// lib/config/locations.ts: option, FASTBASE_CONFIG, fastbase.config.* in the working directory, else
// the bundled example for fastbase's own server and a ConfigError for a host), resolves its `$NAME`
// secrets, validates it, resolves the runtime options, logs which config, .env and database it uses,
// and decorates `app.fastbase`. Any problem stops the start with a `ConfigError` listing all of them.
import { mkdir } from 'node:fs/promises'
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify'
import type { FastbaseOptions } from '../app.js'
import type { DatabaseSettings } from '../schemas/config.js'
import type { Fastbase, FastbaseRuntimeOptions } from './types.js'
import { loadConfigFile } from '../lib/config/load.js'
import { resolveSecrets, type Env } from '../lib/config/secrets.js'
import { validateConfig } from '../lib/config/validate.js'
import { ConfigError } from '../lib/errors.js'
import { bundledExampleConfig, loadBundledExample, withExampleSecrets } from '../lib/config/example.js'
import { resolveLimits } from '../lib/limits.js'
import { CONFIG_FILE_NAMES, configFileOf, dataDirOf, databaseUrlOf, describeLocations, nonEmpty, withEnvFile } from '../lib/config/locations.js'
import { ALLOWED_ORIGINS_ENV, originsFromEnv } from '../lib/auth/request-origin.js'

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
  const resolved = resolveSecrets(raw, secretsEnv)
  const result = validateConfig(resolved.config)
  const problems = [...resolved.problems, ...('problems' in result ? result.problems : [])]
  if (problems.length > 0 || !('config' in result)) throw new ConfigError(problems)

  const config: DatabaseSettings = result.config
  for (const warning of result.warnings) app.log.warn(`fastbase config: ${warning}`)
  const options = await runtimeOptions(opts, env)
  app.log.info({ config: source.label, tables: config.tables.length, actions: config.actions?.length ?? 0 }, 'fastbase config loaded')
  app.log.info(`fastbase: using ${describeLocations(source.label, envFile, options.databaseUrl)}`)
  // The other members of `Fastbase` (db, dialect, tables) are added by the plugins that own them.
  const fastbase: Pick<Fastbase, 'config' | 'options' | 'limits'> = { config, options, limits: resolveLimits(config) }
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

async function runtimeOptions (opts: FastbaseOptions, env: Env): Promise<FastbaseRuntimeOptions> {
  const dataDir = dataDirOf(opts.dataDir, env)
  await mkdir(dataDir, { recursive: true })
  return {
    dataDir,
    databaseUrl: databaseUrlOf(opts.databaseUrl, env, dataDir),
    adminServiceToken: nonEmpty(opts.adminServiceToken) ?? nonEmpty(env.ADMIN_SERVICE_TOKEN),
    adminJwtSecret: nonEmpty(env.ADMIN_JWT_SECRET),
    smtpUrl: nonEmpty(env.SMTP_URL),
    allowedOrigins: envOrigins(env),
    exposeErrors: env.NODE_ENV !== 'production'
  }
}

/** FASTBASE_ALLOWED_ORIGINS, each entry an origin (else the start stops, as for a bad config). */
function envOrigins (env: Env): string[] {
  const { origins, problems } = originsFromEnv(env[ALLOWED_ORIGINS_ENV])
  if (problems.length > 0) throw new ConfigError(problems)
  return origins
}

export default fp(configPlugin, { fastify: '5.x', name: 'fastbase-config' })
