// Every foreign key gets an index (decision D95): a relation path (`post_id.public`) looks the
// related row up by the referenced column (a key or unique, so indexed), and a rule on the parent
// side or a delete that checks its children looks rows up by the referencing column, which nothing
// indexes unless the config says so. Where no declared index, key or unique constraint starts with
// the field, the migration plan adds `idx_<table>_fk_<field>`, so an existing database gets it too.
import type { TableData, TableIndex } from '../../schemas/config.js'
import { isInternalTable } from './schema-model.js'

/** The first column an index covers, as written (`"post_id" COLLATE x DESC` -> post_id). */
function leadingColumn (index: TableIndex): string | undefined {
  const first = (typeof index.fields === 'string' ? index.fields.split(',') : index.fields)[0]?.trim() ?? ''
  return /^"?([A-Za-z_][A-Za-z0-9_]*)"?(?:\s|$)/.exec(first)?.[1]
}

/** The config's tables with an index added for each foreign key field nothing indexes yet. */
export function withForeignKeyIndexes (tables: TableData[]): TableData[] {
  return tables.map((table) => {
    if (isInternalTable(table.name)) return table
    const primary = table.fields.filter((f) => f.primary === true)
    const covered = new Set((table.indexes ?? []).map(leadingColumn))
    if (primary.length > 0) covered.add(primary[0].name)
    const added: TableIndex[] = table.fields
      .filter((f) => f.foreignKey !== undefined && f.unique !== true && !covered.has(f.name))
      .map((f) => ({ name: `fk_${f.name}`, fields: [f.name] }))
    return added.length === 0 ? table : { ...table, indexes: [...(table.indexes ?? []), ...added] }
  })
}
