// What a start says when PostgreSQL cannot be used at all: one line naming the cause and what to do,
// not the driver's stack (decision D99). The database of the URL missing is the usual first step a new
// user skips: PostgreSQL does not create it on connect.
import type { Knex } from 'knex'
import { errorCode, errorMessage } from '../thrown.js'

/** PostgreSQL's SQLSTATE for a database that does not exist (invalid_catalog_name). */
const NO_SUCH_DATABASE = '3D000'

/**
 * Knex's logger for PostgreSQL: a failed connection attempt is left to the error the caller gets (Knex
 * would print it with its stack first); everything else goes to the console as Knex would.
 */
export const knexLog: Knex.Config['log'] = {
  warn: (message: string) => { if (!message.startsWith('Acquire connection error')) console.warn(message) },
  error: (message: string) => { console.error(message) },
  deprecate: (method: string, alternative: string) => { console.warn(`${method} is deprecated, use ${alternative}`) },
  debug: (message: string) => { console.debug(message) }
}

/** `err` as a one-line Error when it says the database of `url` does not exist; otherwise `err` itself. */
export function explainConnectError (err: unknown, url: string): unknown {
  if (errorCode(err) !== NO_SUCH_DATABASE) return err
  const parsed = new URL(url)
  const name = decodeURIComponent(parsed.pathname.slice(1)) || parsed.username || 'postgres'
  const user = parsed.username === '' ? '' : ` -U ${decodeURIComponent(parsed.username)}`
  const port = parsed.port === '' ? '' : ` -p ${parsed.port}`
  return new Error(`${errorMessage(err)} on ${parsed.hostname}: PostgreSQL does not create it on connect. Create it once with \`createdb -h ${parsed.hostname}${port}${user} ${name}\` (or CREATE DATABASE "${name}"), then start again`)
}
