// Where a project's config, `.env` and database are: one rule for the server (lib/kernel/config.ts,
// scripts/start.mjs) and the CLI (lib/cli/), so that `npm start` and `npx fastbase migrate` in the same
// folder always work on the same config and the same database, and each says which it used.
//
// - `.env`: the one named (`--env-file`), else `.env` in the working directory when there is one.
//   Variables already set in the environment win over it.
// - config: the one named (argument or option), else FASTBASE_CONFIG (from the environment or .env),
//   else `fastbase.config.{ts,mts,js,mjs,json}` in the working directory. None found: fastbase's own
//   server (`npm start`) serves the bundled example, a host that registers fastbase gets a ConfigError,
//   and the CLI uses the example only inside the fastbase checkout and otherwise stops.
// - database: the one named, else DATABASE_URL, else SQLite `fastbase.sqlite` in the data directory
//   (the one named, else FASTBASE_DATA_DIR, else `./data`).
import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { packageRoot } from '../package.js'
import type { Env } from './secrets.js'

/** Unset and empty mean the same thing for options and environment variables. */
export function nonEmpty (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The given directory, else FASTBASE_DATA_DIR, else `./data`; absolute. */
export function dataDirOf (given: string | undefined, env: Env): string {
  return resolve(nonEmpty(given) ?? nonEmpty(env.FASTBASE_DATA_DIR) ?? './data')
}

/** The given URL, else DATABASE_URL, else the SQLite file `fastbase.sqlite` in the data directory. */
export function databaseUrlOf (given: string | undefined, env: Env, dataDir: string): string {
  return nonEmpty(given) ?? nonEmpty(env.DATABASE_URL) ?? `sqlite:${join(dataDir, 'fastbase.sqlite')}`
}

/** Config file names looked for in the working directory, in this order. */
export const CONFIG_FILE_NAMES = ['fastbase.config.ts', 'fastbase.config.mts', 'fastbase.config.js', 'fastbase.config.mjs', 'fastbase.config.json'] as const

export interface ConfigLocation {
  /** Absolute path, or undefined when none was named or found. */
  file: string | undefined
  /** How it was found, for the line that says so. */
  from: 'argument' | 'FASTBASE_CONFIG' | 'working directory' | 'none'
}

/** The named config, else FASTBASE_CONFIG, else a `fastbase.config.*` in `cwd`. */
export function configFileOf (given: string | undefined, env: Env, cwd: string = process.cwd()): ConfigLocation {
  const named = nonEmpty(given)
  if (named !== undefined) return { file: resolve(cwd, named), from: 'argument' }
  const fromEnv = nonEmpty(env.FASTBASE_CONFIG)
  if (fromEnv !== undefined) return { file: resolve(cwd, fromEnv), from: 'FASTBASE_CONFIG' }
  for (const name of CONFIG_FILE_NAMES) {
    const file = join(cwd, name)
    if (statSync(file, { throwIfNoEntry: false })?.isFile() === true) return { file, from: 'working directory' }
  }
  return { file: undefined, from: 'none' }
}

/**
 * True in the root folder of fastbase's own checkout, the one place where "no config" means its
 * bundled example to the CLI. Not its subfolders: a project made inside it (a scaffold in a temp
 * folder under it) must never be mistaken for the example.
 */
export function insideFastbaseCheckout (cwd: string = process.cwd()): boolean {
  return relative(packageRoot, resolve(cwd)) === '' && existsSync(join(packageRoot, 'examples', 'bundled', 'fastbase.config.ts'))
}

export interface EnvWithFile {
  /** The environment with the file's variables under it (those already set win). */
  env: Env
  /** The file read, or undefined when there was none. */
  file: string | undefined
}

/**
 * `env` with the variables of the named `.env` file (it must exist), else of `.env` in `cwd` when
 * there is one. Variables already set in `env` win.
 */
export async function withEnvFile (env: Env, given: string | undefined, cwd: string = process.cwd()): Promise<EnvWithFile> {
  const named = nonEmpty(given)
  const file = named !== undefined ? resolve(cwd, named) : join(cwd, '.env')
  if (named === undefined && statSync(file, { throwIfNoEntry: false })?.isFile() !== true) return { env, file: undefined }
  const text = await readFile(file, 'utf8').catch(() => { throw new EnvFileError(file) })
  return { env: { ...parseEnvFile(text), ...env }, file }
}

export class EnvFileError extends Error {
  constructor (readonly file: string) {
    super(`${file}: cannot read the env file`)
    this.name = 'EnvFileError'
  }
}

/** `KEY=value` lines of a .env file (`#` comments, optional `export `, single or double quotes). */
export function parseEnvFile (text: string): Env {
  const env: Env = {}
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line)
    if (match === null) continue
    let value = match[2]
    const quoted = /^(["'])(.*)\1$/.exec(value)
    if (quoted !== null) value = quoted[2]
    else value = value.replace(/\s+#.*$/, '')
    env[match[1]] = value
  }
  return env
}

/** A database URL without its password, for logs and output. */
export function safeDatabaseUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
  }
}

/** The one line that says what was used: `config <file> (<how>), .env <file|none>, database <url>`. */
export function describeLocations (config: string, envFile: string | undefined, databaseUrl: string): string {
  return `config ${config}, .env ${envFile ?? '(none)'}, database ${safeDatabaseUrl(databaseUrl)}`
}
