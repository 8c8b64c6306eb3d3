// Migration planner (decisions D21, D28, D32): diffs the config last applied against the next one and
// turns the difference into named, dialect-specific steps. Pure logic: no database, no Fastify;
// lib/db/migrations.ts runs the steps.
//
// Each step also says what it changes in the schema model (`effects`), so that when only some steps
// run (destructive ones wait for a superadmin) the model recorded with them is exactly what the
// database holds, and the next plan starts from there.
//
// Tables and fields are matched by name, or by `lastName` (rename hint) when the applied config has
// no table/field of the new name. Statements come from the dialect DDL (lib/dialects/*-ddl.ts):
// pieces of a table (a column definition, an index, a trigger) are taken from the CREATE statements
// of a table reduced to that piece, so names and quoting are the ones ddl.ts uses.
import type { DatabaseSettings, TableData, TableField, TableIndex, TableTrigger } from '../../schemas/config.js'
import { addForeignKeySql, constraintName, forwardReferences, indexName, referencedField, sortByDependencies, triggerName, triggersOf, type SchemaDialect } from '../dialects/ddl.js'
import { schemaDialect, type DialectName } from '../dialects/index.js'
import { quote } from '../dialects/common.js'
import { searchIndexOf } from '../search/fts.js'
import { schemaOf, fieldSchemaOf, isInternalTable, searchFormatOf, withSearchFormat, type Effect } from './schema-model.js'

export type StepKind =
  | 'create_table' | 'drop_table' | 'rename_table'
  | 'add_column' | 'drop_column' | 'rename_column' | 'alter_column'
  | 'add_index' | 'drop_index' | 'add_trigger' | 'drop_trigger' | 'search'
  | 'rebuild_table'
  /** A table another config (project) on the database also owns: forgotten by this one, never dropped. */
  | 'release_table'

export interface Step {
  /** Stable, descriptive name, e.g. `add_column_posts_views`. */
  name: string
  table: string
  kind: StepKind
  /** True when the step may lose data or fail on existing rows: it waits for an explicit apply. */
  destructive: boolean
  /** Why a destructive step waits. */
  reason?: string
  /** Statements, run in order in one transaction. */
  sql: string[]
  /** Steps of the same plan this one needs first (an index on a column a waiting step adds). */
  requires?: string[]
  /** What the step changes in the schema model (`applyEffects`). */
  effects: Effect[]
}


export interface Plan {
  steps: Step[]
  /**
   * Set when the plan drops every table of the applied schema (fastbase's own excepted) and keeps
   * none: the names it would drop. A config that shares no table with the database it is run on is
   * almost always the wrong config, not a wish to empty the database (lib/db/migrations.ts refuses).
   */
  dropsEveryTable?: string[]
}

export interface PlanOptions {
  /** Tables another config on the same database also owns: released (no DDL) rather than dropped. */
  shared?: ReadonlySet<string>
}

/** What the planner reads of a config: its tables (a whole config will do). */
export type SchemaTables = Pick<DatabaseSettings, 'tables'>

// ---- pieces of a table's DDL ----

interface CreateParts { before: string[], create: string, after: string[] }

/** The table's CREATE statements split around the CREATE TABLE itself. */
function createParts (table: TableData, tables: TableData[], ddl: SchemaDialect): CreateParts {
  const statements = ddl.createTable(table, tables)
  const at = statements.findIndex((s) => s.startsWith('CREATE TABLE '))
  return { before: statements.slice(0, at), create: statements[at], after: statements.slice(at + 1) }
}

function bare (table: TableData): TableData {
  return { ...table, indexes: [], triggers: [], fullTextSearch: undefined }
}

/** Column definition of `field` in `table` (`"c" TYPE ... constraints`) and its prerequisites. */
function columnDefinition (tableName: string, field: TableField, tables: TableData[], ddl: SchemaDialect): { before: string[], definition: string } {
  const parts = createParts({ name: tableName, fields: [field] }, tables, ddl)
  const head = `CREATE TABLE ${quote(tableName)} (\n  `
  return { before: parts.before, definition: parts.create.slice(head.length, -'\n)'.length) }
}

/** `TYPE [COLLATE ...]` of a column. A PostgreSQL foreign key takes the type of what it references. */
function columnTypeSql (tableName: string, field: TableField, tables: TableData[], ddl: SchemaDialect): string {
  const base = ddl.migration.foreignKeyTakesReferencedType ? (referencedField(field, tables) ?? field) : field
  const stripped: TableField = { name: field.name, type: base.type, sqlType: base.sqlType, ...(field.collate ? { collate: field.collate } : {}) }
  return columnDefinition(tableName, stripped, tables, ddl).definition.slice(quote(field.name).length + 1)
}

/** The definition of one constraint clause alone (`CONSTRAINT "n" ...`, or ` DEFAULT ...`). */
function clauseOf (tableName: string, field: TableField, extra: Partial<TableField>, tables: TableData[], ddl: SchemaDialect, marker: string): string {
  const stripped: TableField = { name: field.name, type: field.type, sqlType: field.sqlType, ...(field.collate ? { collate: field.collate } : {}), ...extra }
  const definition = columnDefinition(tableName, stripped, tables, ddl).definition
  return definition.slice(definition.indexOf(marker) + marker.length)
}

function indexStatement (table: TableData, index: TableIndex, tables: TableData[], ddl: SchemaDialect): string {
  return createParts({ ...bare(table), indexes: [index] }, tables, ddl).after[0]
}

function triggerStatements (table: TableData, trigger: TableTrigger, tables: TableData[], ddl: SchemaDialect): string[] {
  return createParts({ ...bare(table), triggers: [trigger] }, tables, ddl).after
}

function searchSql (table: TableData, ddl: SchemaDialect): string[] {
  const index = searchIndexOf(table)
  return index === undefined ? [] : ddl.migration.search(index)
}

/** A table searched with an index of another layout than this code makes (decision D71): it is made anew. */
function staleSearch (before: TableData, ddl: SchemaDialect): boolean {
  return searchIndexOf(before) !== undefined && searchFormatOf(before) !== ddl.migration.searchFormat
}

// ---- matching ----

function findMatch<T extends { name: string, lastName?: string }> (item: T, applied: T[]): T | undefined {
  return applied.find((a) => a.name === item.name) ??
    (item.lastName !== undefined ? applied.find((a) => a.name === item.lastName) : undefined)
}

function same (a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}

function isPrimary (field: TableField): boolean {
  return field.primary === true || field.autoIncrement === true
}

function primaryKey (table: TableData): Array<[string, boolean]> {
  return table.fields.filter(isPrimary).map((f) => [f.name, f.autoIncrement === true])
}

// ---- the planner ----

/**
 * Steps that take a database from the `applied` config to `next` (from nothing when `applied` is
 * undefined). The same config twice gives no steps.
 */
export function planMigrations (applied: SchemaTables | undefined, next: SchemaTables, dialect: DialectName, options: PlanOptions = {}): Plan {
  const ddl = schemaDialect(dialect)
  const nextTables = sortByDependencies(next.tables)
  if (applied === undefined) return { steps: createTableSteps(nextTables, next.tables, ddl) }
  const appliedTables = applied.tables
  const steps: Step[] = []
  const pairs: Array<{ before: TableData, after: TableData }> = []
  const created: TableData[] = []
  for (const table of nextTables) {
    const before = findMatch(table, appliedTables)
    if (before === undefined) created.push(table)
    else pairs.push({ before, after: table })
  }
  // 1. table renames, 2. new tables (referenced first), 3. changes per table, 4. dropped tables.
  for (const { before, after } of pairs) {
    if (before.name !== after.name) steps.push(renameTableStep(before, after, appliedTables, ddl))
  }
  steps.push(...createTableSteps(created, next.tables, ddl))
  // After the renames, a renamed table is its applied shape under its new name, and a foreign key
  // names what it references by the new names (the database follows renames by itself).
  const follow = renamesFollower(pairs)
  for (const { before, after } of pairs) steps.push(...tableSteps({ ...before, name: after.name }, after, appliedTables, next.tables, ddl, follow))
  const kept = new Set(pairs.map((p) => p.before.name))
  const gone = appliedTables.filter((t) => !kept.has(t.name))
  for (const table of gone.filter((t) => options.shared?.has(t.name) === true)) steps.push(releaseTableStep(table.name))
  const dropOrder = sortByDependencies(gone.filter((t) => options.shared?.has(t.name) !== true))
  const dropped = [...dropOrder].reverse()
  for (const table of dropped) {
    // In a cycle, a table dropped later still references this one: where a key needs its table, that key goes first.
    const referrers = ddl.migration.foreignKeyNeedsTable
      ? dropOrder.flatMap((other) => forwardReferences(other, dropOrder).filter((f) => f.foreignKey?.table === table.name).map((field) => ({ table: other.name, field: field.name })))
      : []
    steps.push({
      name: `drop_table_${table.name}`,
      table: table.name,
      kind: 'drop_table',
      destructive: true,
      reason: `table ${table.name} is no longer in the config: dropping it deletes its rows`,
      effects: [...referrers.map((r): Effect => ({ op: 'patch_field', table: r.table, field: r.field, set: { foreignKey: undefined } })), { op: 'drop_table', table: table.name }],
      sql: [
        ...referrers.map((r) => `ALTER TABLE ${quote(r.table)} DROP CONSTRAINT IF EXISTS ${quote(constraintName(r.table, r.field, 'fkey'))}`),
        ...ddl.migration.dropTable(table)
      ]
    })
  }
  const droppedNames = dropped.filter((t) => !isInternalTable(t.name)).map((t) => t.name)
  const keepsOne = appliedTables.some((t) => !isInternalTable(t.name) && !droppedNames.includes(t.name))
  if (droppedNames.length > 0 && !keepsOne) return { steps, dropsEveryTable: droppedNames }
  return { steps }
}

type ForeignKey = TableField['foreignKey']

/** The table stays for the other config that owns it; only this config's record of it goes. */
function releaseTableStep (table: string): Step {
  return { name: `release_table_${table}`, table, kind: 'release_table', destructive: false, sql: [], effects: [{ op: 'drop_table', table }] }
}

/** A foreign key of the applied config, with the table and column it references under their new names. */
function renamesFollower (pairs: Array<{ before: TableData, after: TableData }>): (fk: ForeignKey) => ForeignKey {
  const tables = new Map<string, string>()
  const columns = new Map<string, string>()
  for (const { before, after } of pairs) {
    if (before.name !== after.name) tables.set(before.name, after.name)
    for (const field of after.fields) {
      const old = findMatch(field, before.fields)
      if (old !== undefined && old.name !== field.name) columns.set(`${before.name}\u0000${old.name}`, field.name)
    }
  }
  return (fk) => fk === undefined ? undefined : { ...fk, table: tables.get(fk.table) ?? fk.table, column: columns.get(`${fk.table}\u0000${fk.column}`) ?? fk.column }
}

/**
 * Steps that create `created` (in dependency order). PostgreSQL checks a foreign key's table at
 * CREATE TABLE, so the keys of a cycle that point at a table created later are added once every
 * table exists; SQLite takes them inline.
 */
function createTableSteps (created: TableData[], tables: TableData[], ddl: SchemaDialect): Step[] {
  const creates: Step[] = []
  const keys: Step[] = []
  for (const table of created) {
    const later = ddl.migration.foreignKeyNeedsTable ? forwardReferences(table, created) : []
    const omitted = new Set(later.map((f) => f.name))
    const withoutLater = { ...table, fields: table.fields.map((f) => (omitted.has(f.name) ? { ...f, foreignKey: undefined } : f)) }
    creates.push({ name: `create_table_${table.name}`, table: table.name, kind: 'create_table', destructive: false, sql: ddl.createTable(table, tables, omitted), effects: [{ op: 'put_table', table: withSearchFormat(schemaOf(withoutLater), ddl.migration.searchFormat) }] })
    for (const field of later) {
      keys.push({ name: `add_foreign_key_${table.name}_${field.name}`, table: table.name, kind: 'alter_column', destructive: false, sql: [addForeignKeySql(table.name, field)], effects: [{ op: 'patch_field', table: table.name, field: field.name, set: { foreignKey: field.foreignKey } }] })
    }
  }
  return [...creates, ...keys]
}

function renameTableStep (before: TableData, after: TableData, appliedTables: TableData[], ddl: SchemaDialect): Step {
  const renamed = { ...before, name: after.name }
  const sql = [`ALTER TABLE ${quote(before.name)} RENAME TO ${quote(after.name)}`]
  // Constraints, indexes, triggers and the search index carry the table's name (ddl.ts): they follow
  // the new one, so the table is exactly what its config would create under that name. (The error
  // mapping finds a violated column by its constraint's name.)
  if (ddl.migration.renamesConstraints) {
    for (const field of before.fields) {
      for (const [suffix, present] of [['key', field.unique], ['check', field.check !== undefined], ['fkey', field.foreignKey]] as const) {
        if (present) sql.push(`ALTER TABLE ${quote(after.name)} RENAME CONSTRAINT ${quote(constraintName(before.name, field.name, suffix))} TO ${quote(constraintName(after.name, field.name, suffix))}`)
      }
    }
    for (const index of before.indexes ?? []) sql.push(`ALTER INDEX IF EXISTS ${quote(indexName(before.name, index))} RENAME TO ${quote(indexName(after.name, index))}`)
  } else {
    for (const index of before.indexes ?? []) sql.push(`DROP INDEX IF EXISTS ${quote(indexName(before.name, index))}`, indexStatement(renamed, index, appliedTables, ddl))
  }
  const search = searchIndexOf(renamed)
  if (search !== undefined) sql.push(...ddl.migration.renameSearch(before.name, search))
  // Triggers are made anew in every dialect: a PostgreSQL trigger function's body names the table.
  for (const trigger of triggersOf(before, ddl.name)) {
    sql.push(...ddl.migration.dropTrigger(after.name, triggerName(before.name, trigger)), ...triggerStatements(renamed, trigger, appliedTables, ddl))
  }
  return { name: `rename_table_${before.name}_to_${after.name}`, table: after.name, kind: 'rename_table', destructive: false, sql, effects: [{ op: 'rename_table', table: before.name, to: after.name }] }
}

/**
 * PostgreSQL refuses to change the type of a column its stored search vector is computed from: the
 * vector goes first and is computed again after (decision D71).
 */
function aroundSearch (change: ColumnChange, after: TableData, ddl: SchemaDialect): string[] {
  const index = searchIndexOf(after)
  if (index === undefined || !change.what.startsWith('alter_column_type_') || !index.fields.includes(change.field)) return change.sql
  return [...ddl.migration.dropSearch(after.name), ...change.sql, ...searchSql(after, ddl)]
}

interface ColumnChange { field: string, what: string, destructive: boolean, reason?: string, sql: string[], effects: Effect[] }

/** Steps for a table kept (and possibly renamed already): `before` is its applied shape. */
function tableSteps (before: TableData, after: TableData, appliedTables: TableData[], tables: TableData[], ddl: SchemaDialect, follow: (fk: ForeignKey) => ForeignKey): Step[] {
  const t = after.name
  const steps: Step[] = []
  const renames: Step[] = []
  const adds: Step[] = []
  const changes: ColumnChange[] = []
  // Name of each applied field in the next config (after renames).
  const matched = new Map<string, TableField>()
  for (const field of after.fields) {
    const old = findMatch(field, before.fields)
    if (old === undefined) continue
    matched.set(old.name, field)
    if (old.name !== field.name) {
      const sql = [`ALTER TABLE ${quote(t)} RENAME COLUMN ${quote(old.name)} TO ${quote(field.name)}`]
      if (ddl.migration.renamesConstraints) {
        for (const [suffix, present] of [['key', old.unique], ['check', old.check !== undefined], ['fkey', old.foreignKey]] as const) {
          // The table was renamed first (with its constraints).
          if (present) sql.push(`ALTER TABLE ${quote(t)} RENAME CONSTRAINT ${quote(constraintName(t, old.name, suffix))} TO ${quote(constraintName(t, field.name, suffix))}`)
        }
      }
      renames.push({ name: `rename_column_${t}_${old.name}_to_${field.name}`, table: t, kind: 'rename_column', destructive: false, sql, effects: [{ op: 'rename_field', table: t, field: old.name, to: field.name }] })
    }
  }
  // Added columns.
  const addedByAlter: string[] = []
  let rebuildAdds: ColumnChange[] = []
  for (const field of after.fields) {
    if (findMatch(field, before.fields) !== undefined) continue
    const { before: prereq, definition } = columnDefinition(t, { ...field, primary: undefined }, tables, ddl)
    const addSql = [...prereq, `ALTER TABLE ${quote(t)} ADD COLUMN ${definition}`]
    const hasDefault = field.default !== undefined
    const needsValue = field.notNull === true && !hasDefault
    const destructive = needsValue || isPrimary(field)
    const reason = isPrimary(field)
      ? `column ${field.name} changes the primary key of ${t}`
      : needsValue ? `column ${field.name} is NOT NULL without a default: existing rows have no value for it` : undefined
    const rebuild = ddl.migration.rebuildsTables &&
      !ddl.migration.addsColumnInPlace(field, hasDefault ? clauseOf(t, field, { default: field.default }, tables, ddl, ' DEFAULT ') : 'NULL')
    const effects: Effect[] = [{ op: 'put_field', table: t, field: fieldSchemaOf(field) }]
    if (rebuild) rebuildAdds.push({ field: field.name, what: `add_column_${t}_${field.name}`, destructive, reason, sql: [], effects })
    else {
      addedByAlter.push(field.name)
      adds.push({ name: `add_column_${t}_${field.name}`, table: t, kind: 'add_column', destructive, ...(reason ? { reason } : {}), sql: addSql, effects })
    }
  }
  // Dropped columns.
  for (const old of before.fields) {
    if (matched.has(old.name)) continue
    changes.push({
      field: old.name,
      what: `drop_column_${t}_${old.name}`,
      destructive: true,
      reason: `column ${old.name} is no longer in the config: dropping it deletes its values`,
      sql: [`ALTER TABLE ${quote(t)} DROP COLUMN ${quote(old.name)}`],
      effects: [{ op: 'drop_field', table: t, field: old.name }]
    })
  }
  // Changed columns.
  const beforeByNext = new Map([...matched].map(([oldName, f]) => [f.name, before.fields.find((b) => b.name === oldName)!]))
  for (const field of after.fields) {
    const old = beforeByNext.get(field.name)
    if (old === undefined) continue
    changes.push(...columnChanges(t, old, field, appliedTables, tables, ddl, follow))
  }
  const beforePk = before.fields.filter(isPrimary).map((f) => [matched.get(f.name)?.name ?? f.name, f.autoIncrement === true])
  if (!same(beforePk, primaryKey(after))) {
    const pk = after.fields.filter(isPrimary).map((f) => quote(f.name))
    changes.push({
      field: '',
      what: `alter_primary_key_${t}`,
      destructive: true,
      reason: `the primary key of ${t} changes`,
      sql: [`ALTER TABLE ${quote(t)} DROP CONSTRAINT IF EXISTS ${quote(`${t}_pkey`)}`, ...(pk.length > 0 ? [`ALTER TABLE ${quote(t)} ADD PRIMARY KEY (${pk.join(', ')})`] : [])],
      effects: after.fields.map((f) => ({ op: 'patch_field', table: t, field: f.name, set: { primary: f.primary, autoIncrement: f.autoIncrement } }))
    })
  }

  // Indexes, triggers and search, compared by the statements they render to. On PostgreSQL new ones
  // wait for any column a destructive step adds (an index on it cannot exist before it does); drops
  // never wait.
  const waitingAdds = adds.filter((s) => s.destructive).map((s) => s.name)
  const indexSteps: Step[] = []
  const pushIndexStep = (name: string, kind: StepKind, sql: string[], effect: Effect): void => {
    const waits = waitingAdds.length > 0 && !kind.startsWith('drop_')
    indexSteps.push({ name, table: t, kind, destructive: false, sql, ...(waits ? { requires: waitingAdds } : {}), effects: [effect] })
  }
  const beforeIndexes = (before.indexes ?? []).map((i) => ({ index: i, name: indexName(before.name, i), sql: indexStatement(before, i, appliedTables, ddl) }))
  const afterIndexes = (after.indexes ?? []).map((i) => ({ index: i, name: indexName(t, i), sql: indexStatement(after, i, tables, ddl) }))
  for (const { index, name, sql } of beforeIndexes) {
    if (afterIndexes.find((a) => a.name === name)?.sql !== sql) {
      pushIndexStep(`drop_index_${t}_${name}`, 'drop_index', [`DROP INDEX IF EXISTS ${quote(name)}`], { op: 'drop_index', table: t, index })
    }
  }
  for (const { index, name, sql } of afterIndexes) {
    if (beforeIndexes.find((b) => b.name === name)?.sql !== sql) {
      pushIndexStep(`add_index_${t}_${name}`, 'add_index', [sql], { op: 'put_index', table: t, index })
    }
  }
  const beforeTriggers = triggersOf(before, ddl.name).map((tr) => ({ trigger: tr, name: triggerName(before.name, tr), sql: triggerStatements(before, tr, appliedTables, ddl) }))
  const afterTriggers = triggersOf(after, ddl.name).map((tr) => ({ trigger: tr, name: triggerName(t, tr), sql: triggerStatements(after, tr, tables, ddl) }))
  for (const { trigger, name, sql } of beforeTriggers) {
    if (!same(afterTriggers.find((a) => a.name === name)?.sql, sql)) {
      pushIndexStep(`drop_trigger_${t}_${name}`, 'drop_trigger', ddl.migration.dropTrigger(t, name), { op: 'drop_trigger', table: t, trigger })
    }
  }
  for (const { trigger, name, sql } of afterTriggers) {
    if (!same(beforeTriggers.find((b) => b.name === name)?.sql, sql)) {
      pushIndexStep(`add_trigger_${t}_${name}`, 'add_trigger', sql, { op: 'put_trigger', table: t, trigger })
    }
  }
  const beforeSearch = searchSql(before, ddl)
  const afterSearch = searchSql(after, ddl)
  if (!same(beforeSearch, afterSearch) || staleSearch(before, ddl)) {
    pushIndexStep(`search_${t}`, 'search', [...(beforeSearch.length > 0 ? ddl.migration.dropSearch(t) : []), ...afterSearch], { op: 'set_search', table: t, search: after.fullTextSearch, format: ddl.migration.searchFormat })
  }

  steps.push(...renames, ...adds)
  if (!ddl.migration.rebuildsTables) {
    steps.push(...indexSteps)
    for (const c of changes) {
      steps.push({ name: c.what, table: t, kind: kindOf(c.what), destructive: c.destructive, ...(c.reason ? { reason: c.reason } : {}), sql: aroundSearch(c, after, ddl), effects: c.effects })
    }
    return steps
  }
  // Everything ALTER cannot do becomes one rebuild of the table, which recreates its
  // indexes, triggers and search index as the config has them.
  rebuildAdds = rebuildAdds.concat(changes)
  if (rebuildAdds.length === 0) return [...steps, ...indexSteps]
  const destructive = rebuildAdds.some((c) => c.destructive)
  const reasons = rebuildAdds.flatMap((c) => (c.reason ? [c.reason] : []))
  const copied = after.fields.filter((f) => beforeByNext.has(f.name) || addedByAlter.includes(f.name)).map((f) => quote(f.name))
  steps.push({
    name: rebuildAdds.length === 1 ? rebuildAdds[0].what : `rebuild_table_${t}`,
    table: t,
    kind: rebuildAdds.length === 1 ? kindOf(rebuildAdds[0].what) : 'rebuild_table',
    destructive,
    ...(destructive ? { reason: reasons.join('; ') } : {}),
    sql: rebuildSql(after, tables, copied, searchIndexOf(before) !== undefined || searchIndexOf(after) !== undefined, ddl),
    effects: [{ op: 'put_table', table: withSearchFormat(schemaOf(after), ddl.migration.searchFormat) }]
  })
  return steps
}

function kindOf (what: string): StepKind {
  if (what.startsWith('drop_column_')) return 'drop_column'
  if (what.startsWith('add_column_')) return 'add_column'
  return 'alter_column'
}

/** Changes of one kept column; SQL is PostgreSQL's (SQLite rebuilds the table instead). */
function columnChanges (t: string, old: TableField, field: TableField, appliedTables: TableData[], tables: TableData[], ddl: SchemaDialect, follow: (fk: ForeignKey) => ForeignKey): ColumnChange[] {
  const c = field.name
  const alter = `ALTER TABLE ${quote(t)}`
  const out: ColumnChange[] = []
  const patch = (set: Partial<TableField>): Effect[] => [{ op: 'patch_field', table: t, field: c, set }]
  const oldType = columnTypeSql(t, old, appliedTables, ddl)
  const newType = columnTypeSql(t, field, tables, ddl)
  if (oldType !== newType) {
    const type = newType.replace(/ COLLATE .*$/, '')
    out.push({ field: c, what: `alter_column_type_${t}_${c}`, destructive: true, reason: `column ${c} changes type (${oldType} -> ${newType}): existing values are converted`, sql: [`${alter} ALTER COLUMN ${quote(c)} TYPE ${newType} USING ${quote(c)}::${type}`], effects: patch({ type: field.type, sqlType: field.sqlType, collate: field.collate }) })
  }
  if ((old.notNull === true) !== (field.notNull === true)) {
    out.push(field.notNull === true
      ? { field: c, what: `set_not_null_${t}_${c}`, destructive: true, reason: `column ${c} becomes NOT NULL: fails if a row holds NULL`, sql: [`${alter} ALTER COLUMN ${quote(c)} SET NOT NULL`], effects: patch({ notNull: true }) }
      : { field: c, what: `drop_not_null_${t}_${c}`, destructive: false, sql: [`${alter} ALTER COLUMN ${quote(c)} DROP NOT NULL`], effects: patch({ notNull: field.notNull }) })
  }
  const key = quote(constraintName(t, c, 'key'))
  if ((old.unique === true) !== (field.unique === true)) {
    out.push(field.unique === true
      ? { field: c, what: `add_unique_${t}_${c}`, destructive: true, reason: `column ${c} becomes UNIQUE: fails if rows hold duplicates`, sql: [`${alter} ADD CONSTRAINT ${key} UNIQUE (${quote(c)})`], effects: patch({ unique: true }) }
      : { field: c, what: `drop_unique_${t}_${c}`, destructive: false, sql: [`${alter} DROP CONSTRAINT IF EXISTS ${key}`], effects: patch({ unique: field.unique }) })
  }
  const check = quote(constraintName(t, c, 'check'))
  if (!same(old.check, field.check)) {
    const add = field.check === undefined ? [] : [`${alter} ADD CONSTRAINT ${clauseOf(t, field, { check: field.check }, tables, ddl, 'CONSTRAINT ')}`]
    out.push(field.check === undefined
      ? { field: c, what: `drop_check_${t}_${c}`, destructive: false, sql: [`${alter} DROP CONSTRAINT IF EXISTS ${check}`], effects: patch({ check: undefined }) }
      : { field: c, what: `set_check_${t}_${c}`, destructive: true, reason: `column ${c} gets a new CHECK: fails if a row does not pass it`, sql: [`${alter} DROP CONSTRAINT IF EXISTS ${check}`, ...add], effects: patch({ check: field.check }) })
  }
  const fkey = quote(constraintName(t, c, 'fkey'))
  if (!same(follow(old.foreignKey), field.foreignKey)) {
    if (field.foreignKey === undefined) {
      out.push({ field: c, what: `drop_foreign_key_${t}_${c}`, destructive: false, sql: [`${alter} DROP CONSTRAINT IF EXISTS ${fkey}`], effects: patch({ foreignKey: undefined }) })
    } else {
      out.push({ field: c, what: `set_foreign_key_${t}_${c}`, destructive: true, reason: `column ${c} gets a foreign key: fails if a row references nothing`, sql: [`${alter} DROP CONSTRAINT IF EXISTS ${fkey}`, addForeignKeySql(t, field)], effects: patch({ foreignKey: field.foreignKey }) })
    }
  }
  if (!same(old.default, field.default)) {
    out.push({
      field: c,
      what: `alter_default_${t}_${c}`,
      destructive: false,
      sql: [field.default === undefined
        ? `${alter} ALTER COLUMN ${quote(c)} DROP DEFAULT`
        : `${alter} ALTER COLUMN ${quote(c)} SET DEFAULT ${clauseOf(t, field, { default: field.default }, tables, ddl, ' DEFAULT ')}`],
      effects: patch({ default: field.default })
    })
  }
  return out
}

/**
 * SQLite's rebuild procedure (https://sqlite.org/lang_altertable.html#otheralter): a new table of
 * the new shape, the kept columns copied, the old one dropped, the new one renamed, its indexes,
 * triggers and search index recreated, then `PRAGMA foreign_key_check`. Meant to run in one
 * transaction with `PRAGMA foreign_keys` OFF around it (the pragma is a no-op inside a
 * transaction): the executor turns it off before and on after, and fails the migration when
 * foreign_key_check answers any row.
 */
function rebuildSql (table: TableData, tables: TableData[], copied: string[], hadSearch: boolean, ddl: SchemaDialect): string[] {
  const t = quote(table.name)
  const tmp = quote(`${table.name}__new`)
  const parts = createParts(table, tables, ddl)
  const list = copied.join(', ')
  return [
    ...(hadSearch ? ddl.migration.dropSearch(table.name) : []),
    ...parts.before,
    parts.create.replace(`CREATE TABLE ${t} (`, `CREATE TABLE ${tmp} (`),
    ...(copied.length > 0 ? [`INSERT INTO ${tmp} (${list}) SELECT ${list} FROM ${t}`] : []),
    `DROP TABLE ${t}`,
    `ALTER TABLE ${tmp} RENAME TO ${t}`,
    ...parts.after,
    'PRAGMA foreign_key_check'
  ]
}
