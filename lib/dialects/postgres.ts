// PostgreSQL dialect. (Expression/value parts are being written; DDL parts come from postgres-ddl.ts.)
import type { Dialect } from './types.js'
import { postgresDdl } from './postgres-ddl.js'

export const postgres = { name: 'postgres', ...postgresDdl } as unknown as Dialect
