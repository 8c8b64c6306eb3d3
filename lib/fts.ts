// Full-text search (DECISIONS 37): what both dialects share. A table's `fullTextSearch` config
// becomes a SearchIndex; a caller's search text becomes words. Each dialect turns these into its
// own index (lib/dialects/sqlite-fts.ts, postgres-fts.ts) and its own match and rank SQL.
//
// The search text is read as words, never as FTS5 or tsquery syntax: every word must occur, a
// trailing `*` makes a word a prefix, and everything else (quotes, AND, NEAR, parentheses) is a
// separator. So no caller text can be a syntax error, and both databases see the same query.
import type { TableData } from '../schemas/config.js'

export type Tokenizer = 'unicode61' | 'ascii' | 'porter'

export interface SearchIndex {
  /** The table's name (unquoted). */
  table: string
  fields: string[]
  tokenize: Tokenizer
  /** SQLite: the integer column FTS5 uses as rowid (`content_rowid`); absent = the table's rowid. */
  rowid?: string
  /** SQLite: the index reads the text from the table (teenybase's `contentless`, default true) rather than keeping a copy. */
  external: boolean
  /** SQLite FTS5 tuning, passed through: prefix lengths, columnsize, detail. */
  prefix?: string
  columnsize?: 0 | 1
  detail?: 'full' | 'column' | 'none'
}

/** One word of a search text; `prefix` when it ended with `*`. */
export interface SearchTerm { word: string, prefix: boolean }

/** The table's search index, or undefined when it has none (no `fullTextSearch`, or `enabled: false`). */
export function searchIndexOf (table: TableData): SearchIndex | undefined {
  const fts = table.fullTextSearch
  if (fts === undefined || fts.enabled === false) return undefined
  return {
    table: table.name,
    fields: fts.fields,
    // trigram matches substrings, which PostgreSQL's text search cannot do the same way: words, with a warning.
    tokenize: fts.tokenize === undefined || fts.tokenize === 'trigram' ? 'unicode61' : fts.tokenize,
    rowid: fts.contentless === false ? undefined : fts.content_rowid,
    external: fts.contentless !== false,
    prefix: fts.prefix === undefined ? undefined : String(fts.prefix).trim().split(/\s*[ ,]\s*/).join(' '),
    columnsize: fts.columnsize,
    detail: fts.detail
  }
}

/** Start-up warnings about a table's search config (values fastbase reads differently from teenybase). */
export function searchWarnings (table: TableData): string[] {
  return table.fullTextSearch?.tokenize === 'trigram'
    ? [`table "${table.name}": fullTextSearch tokenize "trigram" is not supported; words are matched as with "unicode61"`]
    : []
}

// Letters and digits make words, as SQLite's unicode61 and PostgreSQL's parser (once the index has
// turned ASCII punctuation into spaces) read them. Linear: one pass, nothing to backtrack into.
const WORD = /([\p{L}\p{N}]+)(\*?)/gu

/** Most words one search may hold: each is a term of the index lookup. */
export const MAX_SEARCH_TERMS = 32

/** The words of a search text (each database folds their case); empty when it holds none. Throws RangeError past MAX_SEARCH_TERMS. */
export function searchTerms (text: string): SearchTerm[] {
  const terms: SearchTerm[] = []
  for (const m of text.matchAll(WORD)) {
    if (terms.length === MAX_SEARCH_TERMS) throw new RangeError(`a search takes at most ${MAX_SEARCH_TERMS} words`)
    terms.push({ word: m[1], prefix: m[2] === '*' })
  }
  return terms
}

/** SQLite's FTS5 table of `table` (teenybase's name, so a teenybase database keeps its index). */
export function ftsTableName (table: string): string {
  return `fts5_${table}_idx`
}
