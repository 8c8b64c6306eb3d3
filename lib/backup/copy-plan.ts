// What a restore loads of an archive (decision D86): the rows of the tables fastbase made from the
// config, column by column, into a database fastbase made itself. The archive's own schema (its
// triggers, views, functions, defaults, checks) is never used; a table or column the config does not
// make is refused rather than silently left behind.
import { MIGRATIONS_TABLE, SCHEMA_TABLE } from '../db/migrations.js'
import { isInternalTable } from '../db/schema-model.js'
import { errors } from '../errors.js'
import { INSTANCES_TABLE } from '../internal/internal-tables.js'
import type { DatabaseFacts } from './sqlite-inspect.js'
import type { Manifest } from './manifest.js'

/**
 * Archive tables whose rows are never loaded: the schema model is the one fastbase just recorded
 * for the config, and the instances were those running when the backup was taken.
 */
const NOT_LOADED = new Set([SCHEMA_TABLE, INSTANCES_TABLE])

/** A table of the database fastbase made: its columns, and those the database computes itself. */
export interface MadeTable { columns: string[], generated: string[] }

/**
 * The archive's tables to load, in the archive's order. `declared`: the tables the config makes
 * (fastbase's own included); `made`: every table of the new database (search indexes' tables too).
 * Another table is refused unless fastbase's own (one the config no longer uses) or one the new
 * database has too (a search index's, rebuilt from the rows).
 */
export function tablesToLoad (archive: string[], declared: Iterable<string>, made: Set<string>): string[] {
  const wanted = new Set([...declared, MIGRATIONS_TABLE])
  const load: string[] = []
  const foreign: string[] = []
  for (const name of archive) {
    if (NOT_LOADED.has(name)) continue
    if (wanted.has(name) && made.has(name)) load.push(name)
    else if (!made.has(name) && !isInternalTable(name)) foreign.push(name)
  }
  if (foreign.length > 0) {
    throw errors.restoreRefused(`the archive holds tables this config does not make (${foreign.slice(0, 5).join(', ')}): it is a backup of another project, or was taken with another config; restore it with the config it was taken with`)
  }
  return load
}

/** The columns of `table` to load: the archive's, less those the new database computes; refused when the config lacks one. */
export function columnsToLoad (table: string, archive: string[], made: MadeTable): string[] {
  const missing = archive.filter((c) => !made.columns.includes(c))
  if (missing.length > 0) {
    throw errors.restoreRefused(`table ${table}: the archive has columns this config does not (${missing.slice(0, 5).join(', ')}); restore it with the config it was taken with`)
  }
  return archive.filter((c) => !made.generated.includes(c))
}

/** Differences between what a database holds and what its manifest says (empty when they agree); `only`: the tables to compare. */
export function factsMismatch (facts: DatabaseFacts, manifest: Manifest, only?: string[]): string[] {
  const problems: string[] = []
  if (facts.schema.migrations !== manifest.schema.migrations || facts.schema.last !== manifest.schema.last) {
    problems.push(`schema version: the database has ${facts.schema.migrations} migrations (last ${facts.schema.last ?? 'none'}), the manifest says ${manifest.schema.migrations} (last ${manifest.schema.last ?? 'none'})`)
  }
  const names = only ?? [...new Set([...Object.keys(facts.tables), ...Object.keys(manifest.tables)])].sort()
  for (const name of names) {
    if (facts.tables[name] !== manifest.tables[name]) problems.push(`table ${name}: ${facts.tables[name] ?? 'missing'} rows, the manifest says ${manifest.tables[name] ?? 'no such table'}`)
  }
  return problems.slice(0, 10)
}
