// Where a server keeps its data and which database it opens: one rule for the server (plugins/config.ts)
// and the CLI (`fastbase migrate`), so both work on the same database by default.
import { join, resolve } from 'node:path'
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
