// The one registry of dialects: the SQL dialect, the DDL dialect and the connection of each.
import { join } from 'node:path'
import type { Knex } from 'knex'
import type { Dialect, DialectName } from './types.js'
import type { SchemaDialect } from './ddl.js'
import { sqlite } from './sqlite.js'
import { postgres } from './postgres.js'
import { sqliteDdl } from './sqlite-ddl.js'
import { postgresDdl } from './postgres-ddl.js'
import { connectSqlite } from './sqlite-connection.js'
import { connectPostgres, isPostgresUrl } from './postgres-connection.js'
import type { Connection, ConnectionSettings } from './connection.js'

export type { Dialect, DialectName, Fragment } from './types.js'
export type { Connection, DirectRunner } from './connection.js'

const dialects: Record<DialectName, { sql: Dialect, ddl: SchemaDialect }> = {
  sqlite: { sql: sqlite, ddl: sqliteDdl },
  postgres: { sql: postgres, ddl: postgresDdl }
}

export function dialectFor (name: DialectName): Dialect {
  return dialects[name].sql
}

/** The DDL dialect schema sync uses for a database of this kind. */
export function schemaDialect (name: DialectName): SchemaDialect {
  return dialects[name].ddl
}

/** The DDL dialect of the database `knex` talks to (for code handed a Knex instance alone). */
export function schemaDialectOf (knex: Knex): SchemaDialect {
  return schemaDialect(knex.client.dialect === 'postgresql' ? 'postgres' : 'sqlite')
}

/** The kind of database a URL names: postgres:// (or postgresql://) is PostgreSQL, anything else a SQLite file. */
export function dialectOfUrl (databaseUrl: string): DialectName {
  return isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite'
}

/** A connection for `databaseUrl` (postgres:// or a SQLite file); empty means `<dataDir>/fastbase.sqlite`. */
export function connect (databaseUrl: string, dataDir: string, settings: ConnectionSettings = {}): Connection {
  const url = databaseUrl === '' ? join(dataDir, 'fastbase.sqlite') : databaseUrl
  return isPostgresUrl(url) ? connectPostgres(url, settings) : connectSqlite(url, settings)
}
