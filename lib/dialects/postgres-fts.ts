// PostgreSQL full-text search: the tsvector of the searched fields kept in a stored generated column
// (SEARCH_COLUMN, never selected: answers name their columns), with a GIN index on it. PostgreSQL
// keeps it in step with every write by itself. Stored rather than an expression index (decision D71):
// parsing a row's text into a vector costs tens of microseconds, and a search that matches most rows,
// a phrase (which rechecks every candidate) or a rank would parse every row again.
//
// Same rows as SQLite's FTS5 for the same words: ASCII punctuation becomes spaces before the
// parser sees the text (PostgreSQL would otherwise keep `john@example.com` or `file.txt` as one
// token where unicode61 finds two words), the 'simple' configuration folds case and keeps accents,
// as the unicode61 index is told to; `porter` uses an English snowball stemmer with no stop words
// (the built-in `english` configuration drops `the`, `a` ..., which SQLite's porter indexes).
//
// A match tests the row's stored vector: it cannot fail and costs the same on every row, so it may be
// evaluated before the rule (lib/crud/context.ts#ruleFirst).
import type { Fragment } from './types.js'
import { quote } from './common.js'
import type { SearchIndex, Tokenizer } from '../search/fts.js'
import { positivePart, type SearchQuery } from '../search/fts-query.js'
import { trigramMatch, trigramStatements } from './postgres-trigram.js'

const PORTER = 'fastbase_porter'
// trigram is no text search configuration: lib/dialects/postgres-trigram.ts.
const CONFIGS: Record<Exclude<Tokenizer, 'trigram'>, string> = { unicode61: 'simple', ascii: 'simple', porter: PORTER }

/** The text search configuration of a word index (a substring index has none, and is never ranked: decision D103). */
function configOf (index: SearchIndex): string {
  if (index.tokenize === 'trigram') throw new Error(`table "${index.table}": a substring (trigram) search has no text search configuration`)
  return CONFIGS[index.tokenize]
}

// Every ASCII character that is not a letter or a digit (NUL cannot occur in PostgreSQL text).
const ASCII_SEPARATORS = '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]+'

/** The stemming configuration, created once per schema (under the schema lock). */
const CREATE_PORTER = `DO $fastbase$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '${PORTER}' AND cfgnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())) THEN
    CREATE TEXT SEARCH DICTIONARY ${PORTER}_stem (TEMPLATE = snowball, LANGUAGE = english);
    CREATE TEXT SEARCH CONFIGURATION ${PORTER} (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION ${PORTER} ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH ${PORTER}_stem;
  END IF;
END $fastbase$`

/** The tsvector of `fields`; `qualifier` is `"t".` in queries, empty in the index definition. */
function vector (index: SearchIndex, fields: string[], qualifier: string): string {
  // COLLATE "C": regexp_replace refuses nondeterministic collations (NOCASE columns), and it settles mixed ones.
  const text = fields.map((f) => `coalesce(${qualifier}${quote(f)}, '') COLLATE "C"`).join(' || \' \' || ')
  return `to_tsvector('${configOf(index)}', regexp_replace(${text}, '${ASCII_SEPARATORS}', ' ', 'g'))`
}

/** The stored vector's column: a name no field may take (decision D71). */
export const SEARCH_COLUMN = '_fastbase_search'

/** Layout of the search index this code makes (decision D71): 1 was the expression index; 2 the stored column. */
export const POSTGRES_SEARCH_FORMAT = 2

/** Name of the GIN index (`fts_` cannot meet the `idx_` names of configured indexes). */
export function searchIndexName (table: string): string {
  return `fts_${table}_idx`.slice(0, 63)
}

/** The stored vector and its GIN index (and the stemming configuration they may need). */
export function searchStatements (index: SearchIndex): string[] {
  if (index.tokenize === 'trigram') return trigramStatements(index, SEARCH_COLUMN, searchIndexName(index.table))
  const table = quote(index.table)
  const column = `ALTER TABLE ${table} ADD COLUMN ${quote(SEARCH_COLUMN)} tsvector GENERATED ALWAYS AS (${vector(index, index.fields, '')}) STORED`
  const create = `CREATE INDEX ${quote(searchIndexName(index.table))} ON ${table} USING gin (${quote(SEARCH_COLUMN)})`
  // Statistics of the new column at once: without them the planner guesses that a few rows match
  // every search, and sorts every match where it should read the first ones in key order.
  const analyze = `ANALYZE ${table}`
  return index.tokenize === 'porter' ? [CREATE_PORTER, column, create, analyze] : [column, create, analyze]
}

/** Removes the search index of either layout (the expression index of format 1 has no column). */
export function dropSearchStatements (table: string): string[] {
  return [`DROP INDEX IF EXISTS ${quote(searchIndexName(table))}`, `ALTER TABLE ${quote(table)} DROP COLUMN IF EXISTS ${quote(SEARCH_COLUMN)}`]
}

/** tsquery text of the tree: each word quoted (words hold only letters and digits), `<->` between the words of a phrase, `:*` for a prefix. */
export function tsQueryText (query: SearchQuery): string {
  switch (query.type) {
    case 'phrase': {
      const words = query.words.map((w, i) => `'${w}'${query.prefix && i === query.words.length - 1 ? ':*' : ''}`)
      return words.length === 1 ? words[0] : `(${words.join(' <-> ')})`
    }
    case 'or': return `(${query.any.map(tsQueryText).join(' | ')})`
    case 'and': return `(${[...query.include.map(tsQueryText), ...query.exclude.map((q) => `!${tsQueryText(q)}`)].join(' & ')})`
  }
}

function tsQuery (index: SearchIndex, query: SearchQuery): Fragment {
  return { sql: `to_tsquery('${configOf(index)}', CAST(? AS text))`, bindings: [tsQueryText(query)] }
}

const rowKey = (_index: SearchIndex, row: string): string => `${row}.ctid`

export const postgresSearch = {
  match (index: SearchIndex, row: string, fields: string[] | undefined, query: SearchQuery): Fragment {
    if (index.tokenize === 'trigram') return trigramMatch(row, SEARCH_COLUMN, fields, query)
    const stored = `${row}.${quote(SEARCH_COLUMN)}`
    if (fields === undefined) {
      const q = tsQuery(index, query)
      return { sql: `(${stored} @@ ${q.sql})`, bindings: q.bindings }
    }
    // The stored vector (of every field, indexed) narrows the rows; the vector of `fields` then decides.
    // A row may match in `fields` and hold a negated word elsewhere: the index is asked without the negations.
    const all = tsQuery(index, positivePart(query))
    const some = tsQuery(index, query)
    return {
      sql: `(${stored} @@ ${all.sql} AND ${vector(index, fields, `${row}.`)} @@ ${some.sql})`,
      bindings: [...all.bindings, ...some.bindings]
    }
  },
  rowKey,
  // ts_rank with no normalization reads only the row's vector and the query: the stored one, unless
  // some fields are searched. It is computed for the candidates once chosen (PostgreSQL would compute a
  // select list for every row it sorts).
  scores (index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery, candidates: { where: Fragment | true, order: string, limit: number }): Fragment {
    const tsquery = tsQuery(index, query)
    const where = candidates.where === true ? { sql: '', bindings: [] } : { sql: ` WHERE ${candidates.where.sql}`, bindings: candidates.where.bindings }
    const read = (fields ?? [SEARCH_COLUMN]).map((f) => `${table}.${quote(f)}`)
    const scored = fields === undefined ? `"fb_c".${quote(SEARCH_COLUMN)}` : vector(index, fields, '"fb_c".')
    return {
      sql: `SELECT "fb_c"."fb_row", ts_rank(${scored}, ${tsquery.sql}) AS "fb_score" FROM ` +
        `(SELECT ${rowKey(index, table)} AS "fb_row", ${read.join(', ')} FROM ${table}${where.sql} ORDER BY ${candidates.order} LIMIT ${candidates.limit}) AS "fb_c"`,
      bindings: [...tsquery.bindings, ...where.bindings]
    }
  }
}
