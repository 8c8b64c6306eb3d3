// Cross-field checks of tables as a whole: unique names, foreign keys, one record_* field each,
// table flags, and the columns indexes, triggers and full-text search refer to.
import type { DatabaseSettings } from '../../../schemas/config.js'
import { isObject } from '../../plain.js'
import { byName, duplicates, each, fieldsOf, hasFieldList, sqlBase, tablesOf } from './common.js'

export function checkTableNames (c: DatabaseSettings): string[] {
  return duplicates(tablesOf(c), 'table')
}

/** Column names fastbase keeps for itself (the stored search vector on PostgreSQL, decision D71). */
const RESERVED_FIELD_PREFIX = '_fastbase_'

export function checkFieldNames (c: DatabaseSettings): string[] {
  const reserved = tablesOf(c).flatMap((t) => fieldsOf(t)
    .filter(({ item }) => typeof item.name === 'string' && item.name.toLowerCase().startsWith(RESERVED_FIELD_PREFIX))
    .map(({ item, path }) => `${path}.name: "${item.name}" is reserved: names starting with ${RESERVED_FIELD_PREFIX} are fastbase's own columns`))
  return [...tablesOf(c).flatMap((t) => duplicates(fieldsOf(t), 'field')), ...reserved]
}

export function checkForeignKeys (c: DatabaseSettings): string[] {
  const tables = byName(tablesOf(c))
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const { item: field, path } of fieldsOf(t)) {
      const fk = field.foreignKey
      if (!isObject(fk) || typeof fk.table !== 'string' || typeof fk.column !== 'string') continue
      const target = tables.get(fk.table)
      if (target === undefined) {
        problems.push(`${path}.foreignKey.table: table "${fk.table}" does not exist`)
        continue
      }
      if (!hasFieldList(target)) continue
      const column = fieldsOf(target).find((f) => f.item.name === fk.column)?.item
      if (column === undefined) {
        problems.push(`${path}.foreignKey.column: column "${fk.column}" does not exist in table "${fk.table}"`)
      } else if (sqlBase(field.sqlType) !== undefined && sqlBase(column.sqlType) !== undefined && field.sqlType !== column.sqlType) {
        // Compared exactly, not by affinity: PostgreSQL maps e.g. json and text to different column types.
        problems.push(`${path}.sqlType: "${field.sqlType}" does not match the sqlType "${column.sqlType}" of ${fk.table}.${fk.column} it references`)
      }
    }
  }
  return problems
}

const RECORD_USAGES = ['record_uid', 'record_created', 'record_updated'] as const

export function checkRecordUsages (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    for (const usage of RECORD_USAGES) {
      const [first, ...others] = fieldsOf(t).filter((f) => f.item.usage === usage)
      for (const other of others) {
        problems.push(`${other.path}.usage: only one field per table may have usage ${usage} (already ${first.path})`)
      }
    }
  }
  return problems
}

export function checkTableFlags (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c)) {
    const uid = fieldsOf(t).find((f) => f.item.usage === 'record_uid')?.item
    if (t.item.autoSetUid === true && hasFieldList(t) && uid?.type !== 'text') {
      problems.push(`${t.path}.autoSetUid: needs a field with usage record_uid and type text`)
    }
    if (t.item.allowWildcard === true) {
      problems.push(`${t.path}.allowWildcard: true is not supported (* always expands to the table's columns)`)
    }
  }
  return problems
}

/** Column name of an index entry such as `name COLLATE NOCASE` or `created DESC`. */
const columnOf = (entry: string): string => entry.trim().split(/\s+/)[0]

/** Index, full-text and trigger `updateOf` entries must name columns of their table. */
export function checkColumnRefs (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c).filter(hasFieldList)) {
    const columns = new Set(fieldsOf(t).map((f) => f.item.name))
    const check = (entry: unknown, path: string): void => {
      if (typeof entry === 'string' && !columns.has(columnOf(entry))) {
        problems.push(`${path}: column "${columnOf(entry)}" does not exist in table "${String(t.item.name)}"`)
      }
    }
    for (const { item: index, path } of each<{ fields?: unknown }>(t.item.indexes, `${t.path}.indexes`)) {
      if (typeof index.fields === 'string') for (const entry of index.fields.split(',')) check(entry, `${path}.fields`)
      else if (Array.isArray(index.fields)) index.fields.forEach((entry, i) => { check(entry, `${path}.fields[${i}]`) })
    }
    const fts: unknown = t.item.fullTextSearch
    if (isObject(fts) && Array.isArray(fts.fields)) {
      fts.fields.forEach((entry, i) => { check(entry, `${t.path}.fullTextSearch.fields[${i}]`) })
    }
    for (const { item: trigger, path } of each<{ updateOf?: unknown }>(t.item.triggers, `${t.path}.triggers`)) {
      if (typeof trigger.updateOf === 'string') check(trigger.updateOf, `${path}.updateOf`)
      else if (Array.isArray(trigger.updateOf)) trigger.updateOf.forEach((entry, i) => { check(entry, `${path}.updateOf[${i}]`) })
    }
  }
  return problems
}

/**
 * fullTextSearch fields hold text on both databases (not json or date, which PostgreSQL stores as
 * jsonb and timestamptz); `content_rowid` is FTS5's rowid: an integer column without a foreign key;
 * a trigram index keeps positions (`detail: 'full'`).
 */
export function checkFullTextSearch (c: DatabaseSettings): string[] {
  const problems: string[] = []
  for (const t of tablesOf(c).filter(hasFieldList)) {
    const fts: unknown = t.item.fullTextSearch
    if (!isObject(fts)) continue
    const path = `${t.path}.fullTextSearch`
    const fields = new Map(fieldsOf(t).map((f) => [f.item.name, f.item]))
    const names = Array.isArray(fts.fields) ? fts.fields : []
    names.forEach((name, i) => {
      const field = typeof name === 'string' ? fields.get(name) : undefined
      if (field !== undefined && (sqlBase(field.sqlType) !== 'text' || field.type === 'json' || field.type === 'date')) {
        problems.push(`${path}.fields[${i}]: "${field.name}" is not a text field (type ${field.type}, sqlType ${field.sqlType})`)
      }
    })
    // FTS5 reads every trigram search term longer than three characters as a phrase (decision D103).
    if (fts.tokenize === 'trigram' && fts.detail !== undefined && fts.detail !== 'full') problems.push(`${path}.detail: tokenize "trigram" needs detail "full" (the default)`)
    if (typeof fts.content_rowid !== 'string') continue
    const rowid = fields.get(fts.content_rowid)
    if (fts.contentless === false) problems.push(`${path}.content_rowid: only used when contentless is true (the default)`)
    else if (rowid === undefined) problems.push(`${path}.content_rowid: column "${fts.content_rowid}" does not exist in table "${String(t.item.name)}"`)
    else if (sqlBase(rowid.sqlType) !== 'integer' || rowid.foreignKey !== undefined) problems.push(`${path}.content_rowid: "${rowid.name}" must be an integer column without a foreignKey`)
  }
  return problems
}
