// Full-text search (decision D37): what both dialects share. A table's `fullTextSearch` config
// becomes a SearchIndex; a caller's search text becomes a SearchQuery (lib/search/fts-query.ts, the
// grammar). Each dialect turns these into its own index (lib/dialects/sqlite-fts.ts,
// postgres-fts.ts) and its own match and score SQL.
import type { TableData } from '../../schemas/config.js'
import type { SearchQuery } from './fts-query.js'

export type Tokenizer = 'unicode61' | 'ascii' | 'porter' | 'trigram'

export interface SearchIndex {
  /** The table's name (unquoted). */
  table: string
  fields: string[]
  tokenize: Tokenizer
  /** SQLite: the integer column FTS5 uses as rowid (`content_rowid`); absent = the table's rowid. */
  rowid?: string
  /** SQLite: `rowid` is the table's rowid or its alias (an INTEGER PRIMARY KEY): one seek finds the row. */
  rowidIsKey: boolean
  /** SQLite: the index reads the text from the table (teenybase's `contentless`, default true) rather than keeping a copy. */
  external: boolean
  /** SQLite FTS5 tuning, passed through: prefix lengths, columnsize, detail. */
  prefix?: string
  columnsize?: 0 | 1
  detail?: 'full' | 'column' | 'none'
}

/**
 * A search to rank rows by (the first `@@` of a where, when no order is given): scored per row, from
 * the row's own text in `fields` and the query, never from statistics over other rows.
 */
export interface SearchRank { index: SearchIndex, fields: string[] | undefined, query: SearchQuery }

/**
 * Rows a rank scores: the first this many matching rows the caller may see, in primary-key order (on
 * SQLite, when the search drives the statement, in rowid order: decision D77). Scoring reads each
 * row's text again, so it is bounded; the rows after them follow in key order.
 */
export const RANK_CANDIDATES = 1000

/**
 * SQLite: the prefix lengths indexed when the config names none (`prefix: 0`: none). A `word*` of 2 or 3
 * letters is then one lookup instead of a merge of every indexed word it starts; the index is about
 * twice as large (decision D71).
 */
export const DEFAULT_PREFIX = '2 3'

/** The table's search index, or undefined when it has none (no `fullTextSearch`, or `enabled: false`). */
export function searchIndexOf (table: TableData): SearchIndex | undefined {
  const fts = table.fullTextSearch
  if (fts === undefined || fts.enabled === false) return undefined
  const rowid = fts.contentless === false ? undefined : fts.content_rowid
  return {
    table: table.name,
    fields: fts.fields,
    tokenize: fts.tokenize ?? 'unicode61',
    rowid,
    rowidIsKey: isRowidKey(table, rowid),
    external: fts.contentless !== false,
    prefix: prefixOf(fts),
    columnsize: fts.columnsize,
    detail: fts.detail
  }
}

/** The FTS5 prefix lengths: the config's, else DEFAULT_PREFIX; none for `0`, nor by default for trigram. */
function prefixOf (fts: NonNullable<TableData['fullTextSearch']>): string | undefined {
  if (fts.prefix === 0) return undefined
  // A trigram index finds any substring already: prefix indexes would only make it larger (decision D103).
  if (fts.prefix === undefined) return fts.tokenize === 'trigram' ? undefined : DEFAULT_PREFIX
  return String(fts.prefix).trim().split(/\s*[ ,]\s*/).join(' ')
}

/** SQLite: the table's own rowid (undefined, or named so with no column of that name), or the INTEGER PRIMARY KEY that aliases it. */
function isRowidKey (table: TableData, rowid: string | undefined): boolean {
  const column = table.fields.find((f) => f.name === (rowid ?? 'rowid'))
  if (column === undefined) return rowid === undefined || rowid.toLowerCase() === 'rowid'
  const primary = table.fields.filter((f) => f.primary === true || f.autoIncrement === true)
  return primary.length === 1 && primary[0] === column && (column.autoIncrement === true || column.sqlType.toUpperCase() === 'INTEGER')
}

/** SQLite's FTS5 table of `table` (teenybase's name, so a teenybase database keeps its index). */
export function ftsTableName (table: string): string {
  return `fts5_${table}_idx`
}
