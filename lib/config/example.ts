// The bundled example project (examples/bundled/fastbase.config.ts): what the server and `fastbase check`
// use when no config is given, and the public development values for its secrets.
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { packageRoot } from '../package.js'
import { loadConfigFile } from './load.js'
import type { Env } from './secrets.js'

export const bundledExampleConfig = join(packageRoot, 'examples', 'bundled', 'fastbase.config.ts')
/** The same config compiled by `npm run build` (tsconfig.build.json includes examples/bundled/). */
const compiledExample = join(packageRoot, 'dist', 'examples', 'bundled', 'fastbase.config.js')

/**
 * The bundled example's config. The build's compiled copy is used while it is at least as new as
 * the source: importing it skips the TypeScript transpiler, a tenth of a start. An edited example
 * (newer than the build) is read from its source, so an edit takes effect without a rebuild.
 */
export async function loadBundledExample (): Promise<unknown> {
  return await loadFresher(bundledExampleConfig, compiledExample)
}

/** Loads `compiled` when it exists and is at least as new as `source`, else `source`. */
export async function loadFresher (source: string, compiled: string): Promise<unknown> {
  const [sourceStat, compiledStat] = await Promise.all([stat(source), stat(compiled).catch(() => undefined)])
  const fresh = compiledStat !== undefined && compiledStat.mtimeMs >= sourceStat.mtimeMs
  return await loadConfigFile(fresh ? compiled : source)
}

/**
 * Public, well-known values for the secrets the bundled example references, so `npm start` works
 * with zero set-up. Used only for the bundled example, only where the variable is unset, never in
 * production, and always with a warning.
 */
export const EXAMPLE_DEV_SECRETS: Readonly<Record<string, string>> = {
  JWT_SECRET: 'dev-only-insecure-jwt-secret-change-me',
  JWT_SECRET_USERS: 'dev-only-insecure-users-secret-change-me'
}

/** `env` plus development values for the example's unset secrets, and the names filled (none in production). */
export function withExampleSecrets (env: Env): { env: Env, filled: string[] } {
  if (env.NODE_ENV === 'production') return { env, filled: [] }
  const filled: string[] = []
  const result: Env = { ...env }
  for (const [name, value] of Object.entries(EXAMPLE_DEV_SECRETS)) {
    if (typeof env[name] === 'string' && env[name] !== '') continue
    result[name] = value
    filled.push(name)
  }
  return { env: result, filled }
}
