// SQLite full-text search: an FTS5 table beside the table (`fts5_<table>_idx`), filled from it
// when created and kept in step by insert, update and delete triggers. A match is a rowid lookup
// in it (`rowid IN (SELECT rowid ... MATCH ?)`): the lookup does not depend on the row being
// tested, so it may be evaluated before the rule (lib/crud/context.ts#ruleFirst). A statement whose
// condition requires the match reads the matches from the index instead (`drive`, decision D77).
import type { Candidates, Fragment } from './types.js'
import { quoteString } from './ddl.js'
import { quote } from './common.js'
import { ftsTableName, type SearchIndex, type Tokenizer } from '../search/fts.js'
import type { SearchQuery } from '../search/fts-query.js'

// Accents are kept, as PostgreSQL's 'simple' configuration keeps them: on both, `cafe` does not find `café`.
const TOKENIZERS: Record<Tokenizer, string> = {
  unicode61: 'unicode61 remove_diacritics 0',
  ascii: 'ascii',
  porter: 'porter unicode61 remove_diacritics 0',
  // Substrings, case folded, accents kept (decision D103).
  trigram: 'trigram case_sensitive 0 remove_diacritics 0'
}

/** The FTS5 table, its back-fill and its triggers. */
export function ftsStatements (index: SearchIndex): string[] {
  const name = ftsTableName(index.table)
  const fts = quote(name)
  const table = quote(index.table)
  const rowid = index.rowid === undefined ? 'rowid' : quote(index.rowid)
  const columns = index.fields.map(quote)
  const list = columns.join(', ')
  const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ')
  const options = [
    ...columns,
    ...(index.external ? [`content=${quoteString(index.table)}`] : []),
    ...(index.rowid !== undefined ? [`content_rowid=${quoteString(index.rowid)}`] : []),
    `tokenize=${quoteString(TOKENIZERS[index.tokenize])}`,
    ...(index.prefix !== undefined ? [`prefix=${quoteString(index.prefix)}`] : []),
    ...(index.columnsize !== undefined ? [`columnsize=${index.columnsize}`] : []),
    ...(index.detail !== undefined ? [`detail=${index.detail}`] : [])
  ]
  const insert = `INSERT INTO ${fts} (rowid, ${list}) VALUES (new.${rowid}, ${values('new')})`
  // An external-content index cannot read the old text back from the table: the 'delete' command is given it.
  const remove = index.external
    ? `INSERT INTO ${fts} (${fts}, rowid, ${list}) VALUES ('delete', old.${rowid}, ${values('old')})`
    : `DELETE FROM ${fts} WHERE rowid = old.${rowid}`
  const updateOf = index.rowid === undefined ? list : [...columns, quote(index.rowid)].join(', ')
  return [
    `CREATE VIRTUAL TABLE ${fts} USING fts5(${options.join(', ')})`,
    `INSERT INTO ${fts} (rowid, ${list}) SELECT ${rowid}, ${list} FROM ${table}`,
    `CREATE TRIGGER ${quote(`${name}_ai`)} AFTER INSERT ON ${table} BEGIN\n  ${insert};\nEND`,
    `CREATE TRIGGER ${quote(`${name}_ad`)} AFTER DELETE ON ${table} BEGIN\n  ${remove};\nEND`,
    `CREATE TRIGGER ${quote(`${name}_au`)} AFTER UPDATE OF ${updateOf} ON ${table} BEGIN\n  ${remove};\n  ${insert};\nEND`
  ]
}

/** Removes the FTS5 table and its triggers. */
export function dropFtsStatements (table: string): string[] {
  const fts = ftsTableName(table)
  return [
    ...['ai', 'ad', 'au'].map((s) => `DROP TRIGGER IF EXISTS ${quote(`${fts}_${s}`)}`),
    `DROP TABLE IF EXISTS ${quote(fts)}`
  ]
}

/** FTS5 query text of the tree: each word quoted (so no word is an operator), every group in parentheses. */
export function fts5Query (query: SearchQuery): string {
  switch (query.type) {
    case 'phrase': return `"${query.words.join(' ')}"${query.prefix ? '*' : ''}`
    case 'or': return `(${query.any.map(fts5Query).join(' OR ')})`
    case 'and': {
      const include = query.include.map(fts5Query).join(' AND ')
      if (query.exclude.length === 0) return `(${include})`
      return `((${include}) NOT (${query.exclude.map(fts5Query).join(' OR ')}))`
    }
  }
}

/** The MATCH text: the query, limited to `fields` by a column filter when given (column names are validated identifiers). */
function matchText (query: SearchQuery, fields: string[] | undefined): string {
  const text = fts5Query(query)
  return fields === undefined ? text : `{${fields.join(' ')}} : (${text})`
}

/** The FTS5 table, and the rowid of the row `row` names. */
function names (index: SearchIndex, row: string) {
  return { fts: quote(ftsTableName(index.table)), rowid: rowKey(index, row) }
}

function rowKey (index: SearchIndex, row: string): string {
  return `${row}.${index.rowid === undefined ? 'rowid' : quote(index.rowid)}`
}

const MATCHED = '"fb_match"'

/**
 * The index's matching rows in rowid order, each joined to its table row: no set of every matching
 * rowid is built first (what `rowid IN (SELECT ...)` does), so a statement that stops after some rows
 * reads only those, and one that reads them all reads each once. The index is a subquery (SQLite
 * flattens it) so that its columns, named like the table's, are not in scope; CROSS JOIN keeps it the
 * outer loop. Only where the rowid is the table's own (or its alias) is each row one b-tree seek.
 */
function drive (index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery): Fragment | undefined {
  if (!index.rowidIsKey) return undefined
  const fts = quote(ftsTableName(index.table))
  return {
    sql: `(SELECT rowid AS ${MATCHED} FROM ${fts} WHERE ${fts} MATCH ?) AS ${MATCHED} CROSS JOIN ${table} ON ${rowKey(index, table)} = ${MATCHED}.${MATCHED}`,
    bindings: [matchText(query, fields)]
  }
}

/** The candidates' rowids: with `rest`, the first matches in rowid order (decision D77); else the first in `order`. */
function candidateRows (index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery, candidates: Candidates): Fragment {
  const driven = candidates.rest === undefined ? undefined : drive(index, table, fields, query)
  const where = driven === undefined ? candidates.where : candidates.rest ?? true
  const condition: Fragment = where === true ? { sql: '', bindings: [] } : { sql: ` WHERE ${where.sql}`, bindings: where.bindings }
  const [from, order] = driven === undefined ? [{ sql: table, bindings: [] }, candidates.order] : [driven, `${MATCHED}.${MATCHED}`]
  return {
    sql: `SELECT ${rowKey(index, table)} AS "fb_row" FROM ${from.sql}${condition.sql} ORDER BY ${order} LIMIT ${candidates.limit}`,
    bindings: [...from.bindings, ...condition.bindings]
  }
}

export const sqliteSearch = {
  match (index: SearchIndex, row: string, fields: string[] | undefined, query: SearchQuery): Fragment {
    const { fts, rowid } = names(index, row)
    return { sql: `(${rowid} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ?))`, bindings: [matchText(query, fields)] }
  },
  rowKey,
  drive,
  /**
   * Score: how many passages of the searched fields match (FTS5's highlight() marks each with one
   * character), which reads only the row's text; bm25 would weigh words by the whole index, rows
   * the caller may not see included. `+rowid` keeps SQLite from handing the candidates to FTS5 one
   * rowid lookup at a time (each would run the whole query again); the range of the candidates'
   * rowids lets FTS5 read only that part of each word's list (decision D71).
   */
  scores (index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery, candidates: Candidates): Fragment {
    const fts = quote(ftsTableName(index.table))
    const hits = (fields ?? index.fields).map((f) => `coalesce(length(highlight(${fts}, ${index.fields.indexOf(f)}, char(1), '')) - length(${fts}.${quote(f)}), 0)`)
    const rows = candidateRows(index, table, fields, query, candidates)
    return {
      sql: `WITH "fb_c" AS MATERIALIZED (${rows.sql}) ` +
        `SELECT ${fts}.rowid AS "fb_row", ${hits.join(' + ')} AS "fb_score" FROM ${fts} WHERE ${fts} MATCH ? ` +
        `AND ${fts}.rowid >= (SELECT min("fb_row") FROM "fb_c") AND ${fts}.rowid <= (SELECT max("fb_row") FROM "fb_c") AND +${fts}.rowid IN (SELECT "fb_row" FROM "fb_c")`,
      bindings: [...rows.bindings, matchText(query, fields)]
    }
  }
}
