// SQLite dialect. (Expression/value parts are being written; DDL parts come from sqlite-ddl.ts.)
import type { Dialect } from './types.js'
import { sqliteDdl } from './sqlite-ddl.js'

export const sqlite = { name: 'sqlite', ...sqliteDdl } as unknown as Dialect
