import type { Dialect, DialectName } from './types.js'
import { sqlite } from './sqlite.js'
import { postgres } from './postgres.js'

export type { Dialect, DialectName, Fragment } from './types.js'

export function dialectFor (name: DialectName): Dialect {
  return name === 'postgres' ? postgres : sqlite
}
