// What a caught value carries. `catch` and error callbacks give `unknown`: Node's errors, the
// drivers' (SQLite, pg), fetch's and what worker threads send back are read through these two
// accessors instead of each site asserting that the value is an Error.
import { isObject } from './plain.js'

/** The `code` of a caught error (Node's errno codes, SQLite's and PostgreSQL's), when it has one. */
export function errorCode (thrown: unknown): unknown {
  return isObject(thrown) ? thrown.code : undefined
}

/** A caught value as text: its message, or the value itself when it carries none. */
export function errorMessage (thrown: unknown): string {
  const message = isObject(thrown) ? thrown.message : undefined
  return typeof message === 'string' ? message : String(thrown)
}

/** A caught value as an Error, for callbacks that take one (Fastify's `done`): itself when it is one. */
export function thrownError (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(errorMessage(thrown))
}
