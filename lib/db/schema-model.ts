// The schema model: the part of a config the database's shape depends on (tables, fields, indexes,
// triggers, search), kept in the database with the migrations (lib/db/migrations.ts) as the record
// of what was applied. Rules, actions and auth settings need no DDL and are left out, and so are
// secrets (an auth extension holds one): nothing but the shape is stored.
import type { TableData, TableField, TableIndex, TableTrigger } from '../../schemas/config.js'
import { indexName } from '../dialects/ddl.js'

/** fastbase's own tables (bookkeeping, auth stores, rate limits): shared by every config on a database, never dropped. */
export const INTERNAL_TABLE_PREFIX = '_fastbase_'

export function isInternalTable (name: string): boolean {
  return name.startsWith(INTERNAL_TABLE_PREFIX)
}

/** One change to the schema model, made by a migration step (lib/db/migration-plan.ts). */
export type Effect =
  | { op: 'put_table', table: TableData }
  | { op: 'drop_table', table: string }
  | { op: 'rename_table', table: string, to: string }
  | { op: 'put_field', table: string, field: TableField }
  | { op: 'drop_field', table: string, field: string }
  | { op: 'rename_field', table: string, field: string, to: string }
  /** Sets the listed attributes of a field; an attribute given as undefined is removed. */
  | { op: 'patch_field', table: string, field: string, set: Partial<TableField> }
  | { op: 'put_index', table: string, index: TableIndex }
  | { op: 'drop_index', table: string, index: TableIndex }
  | { op: 'put_trigger', table: string, trigger: TableTrigger }
  | { op: 'drop_trigger', table: string, trigger: TableTrigger }
  /** `format`: the layout the search index is made with (decision D71). */
  | { op: 'set_search', table: string, search: TableData['fullTextSearch'], format: number }

/** A table as the model records it: its shape, and the layout its search index was made with. */
export type ModelTable = TableData & { searchFormat?: number }

/** The layout of the table's search index (decision D71); a model from before layouts were recorded holds the first. */
export function searchFormatOf (table: ModelTable): number {
  return table.searchFormat ?? 1
}

/** The table, recorded as searched with an index of `format` (when it is searched). */
export function withSearchFormat (table: TableData, format: number): TableData {
  const recorded: ModelTable = table.fullTextSearch === undefined ? table : { ...table, searchFormat: format }
  return recorded
}

function withoutUndefined<T extends object> (value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/** A field as the model keeps it: without its rename hint. */
export function fieldSchemaOf (field: TableField): TableField {
  const { lastName: _hint, ...rest } = field
  return withoutUndefined(rest)
}

/** A table as the model keeps it: its shape only. */
export function schemaOf (table: ModelTable): TableData {
  return withoutUndefined({
    name: table.name,
    fields: table.fields.map(fieldSchemaOf),
    indexes: table.indexes !== undefined && table.indexes.length > 0 ? structuredClone(table.indexes) : undefined,
    triggers: table.triggers !== undefined && table.triggers.length > 0 ? structuredClone(table.triggers) : undefined,
    fullTextSearch: table.fullTextSearch === undefined ? undefined : structuredClone(table.fullTextSearch),
    searchFormat: table.fullTextSearch === undefined ? undefined : table.searchFormat
  })
}

/** Two index entries that render to the same index name on a table. */
function sameIndex (a: TableIndex, b: TableIndex): boolean {
  return indexName('', a) === indexName('', b)
}

/** A trigger may exist once per dialect under one name. */
function sameTrigger (a: TableTrigger, b: TableTrigger): boolean {
  return a.name === b.name && a.dialect === b.dialect
}

function editTable (tables: TableData[], name: string, edit: (table: TableData) => TableData): TableData[] {
  const at = tables.findIndex((t) => t.name === name)
  if (at < 0) throw new Error(`schema model has no table ${name}`)
  return tables.map((t, i) => (i === at ? schemaOf(edit(t)) : t))
}

function editField (tables: TableData[], table: string, field: string, edit: (field: TableField) => TableField | undefined): TableData[] {
  return editTable(tables, table, (t) => ({
    ...t,
    fields: t.fields.flatMap((f) => (f.name === field ? [edit(f)].filter((x): x is TableField => x !== undefined) : [f]))
  }))
}

/** Foreign keys that reference `table` (its `column`, or any) reference it by its new name, as the database's do. */
function retarget (tables: TableData[], table: string, column: string | undefined, toTable: string, toColumn: string | undefined): TableData[] {
  return tables.map((t) => ({
    ...t,
    fields: t.fields.map((f) => {
      const fk = f.foreignKey
      if (fk === undefined || fk.table !== table || (column !== undefined && fk.column !== column)) return f
      return { ...f, foreignKey: { ...fk, table: toTable, column: toColumn ?? fk.column } }
    })
  }))
}

function applyEffect (tables: TableData[], effect: Effect): TableData[] {
  switch (effect.op) {
    case 'put_table': return [...tables.filter((t) => t.name !== effect.table.name), schemaOf(effect.table)]
    case 'drop_table': return tables.filter((t) => t.name !== effect.table)
    case 'rename_table': return retarget(editTable(tables, effect.table, (t) => ({ ...t, name: effect.to })), effect.table, undefined, effect.to, undefined)
    case 'put_field': return editTable(tables, effect.table, (t) => ({ ...t, fields: [...t.fields.filter((f) => f.name !== effect.field.name), effect.field] }))
    case 'drop_field': return editField(tables, effect.table, effect.field, () => undefined)
    case 'rename_field': return retarget(editField(tables, effect.table, effect.field, (f) => ({ ...f, name: effect.to })), effect.table, effect.field, effect.table, effect.to)
    case 'patch_field': return editField(tables, effect.table, effect.field, (f) => ({ ...f, ...effect.set }))
    case 'put_index': return editTable(tables, effect.table, (t) => ({ ...t, indexes: [...(t.indexes ?? []).filter((i) => !sameIndex(i, effect.index)), effect.index] }))
    case 'drop_index': return editTable(tables, effect.table, (t) => ({ ...t, indexes: (t.indexes ?? []).filter((i) => !sameIndex(i, effect.index)) }))
    case 'put_trigger': return editTable(tables, effect.table, (t) => ({ ...t, triggers: [...(t.triggers ?? []).filter((tr) => !sameTrigger(tr, effect.trigger)), effect.trigger] }))
    case 'drop_trigger': return editTable(tables, effect.table, (t) => ({ ...t, triggers: (t.triggers ?? []).filter((tr) => !sameTrigger(tr, effect.trigger)) }))
    case 'set_search': return editTable(tables, effect.table, (t) => withSearchFormat({ ...t, fullTextSearch: effect.search }, effect.format))
  }
}

/** The model after `effects`, in order. The input is not changed. */
export function applyEffects (tables: TableData[], effects: Effect[]): TableData[] {
  return effects.reduce(applyEffect, tables)
}
