// PostgreSQL full-text search: a GIN index on the tsvector of the searched fields (an expression
// index: no column is added, and PostgreSQL keeps it in step with every write by itself).
//
// Same rows as SQLite's FTS5 for the same words: ASCII punctuation becomes spaces before the
// parser sees the text (PostgreSQL would otherwise keep `john@example.com` or `file.txt` as one
// token where unicode61 finds two words), the 'simple' configuration folds case and keeps accents,
// as the unicode61 index is told to; `porter` uses an English snowball stemmer with no stop words
// (the built-in `english` configuration drops `the`, `a` ..., which SQLite's porter indexes).
//
// A match is `ctid IN (SELECT ctid ... @@ ...)`: the index lookup does not depend on the row being
// tested, so it may be evaluated before the rule (lib/crud/context.ts#ruleFirst).
import type { Fragment } from './types.js'
import { quote } from './common.js'
import type { SearchIndex, Tokenizer } from '../fts.js'
import { positivePart, type SearchQuery } from '../fts-query.js'

const PORTER = 'fastbase_porter'
const CONFIGS: Record<Tokenizer, string> = { unicode61: 'simple', ascii: 'simple', porter: PORTER }

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
  return `to_tsvector('${CONFIGS[index.tokenize]}', regexp_replace(${text}, '${ASCII_SEPARATORS}', ' ', 'g'))`
}

/** Name of the GIN index (`fts_` cannot meet the `idx_` names of configured indexes). */
export function searchIndexName (table: string): string {
  return `fts_${table}_idx`.slice(0, 63)
}

/** The GIN index (and the stemming configuration it may need). */
export function searchStatements (index: SearchIndex): string[] {
  const create = `CREATE INDEX ${quote(searchIndexName(index.table))} ON ${quote(index.table)} USING gin (${vector(index, index.fields, '')})`
  return index.tokenize === 'porter' ? [CREATE_PORTER, create] : [create]
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
  return { sql: `to_tsquery('${CONFIGS[index.tokenize]}', CAST(? AS text))`, bindings: [tsQueryText(query)] }
}

const LOOKUP = '"fb_search"'

const rowKey = (_index: SearchIndex, row: string): string => `${row}.ctid`

export const postgresSearch = {
  match (index: SearchIndex, row: string, fields: string[] | undefined, query: SearchQuery): Fragment {
    // The vector of every field is the indexed one; the vector of `fields` then narrows what the index
    // found. A row may match in `fields` and hold a negated word elsewhere: the index is asked without the negations.
    const conditions = fields === undefined
      ? [{ fields: index.fields, query }]
      : [{ fields: index.fields, query: positivePart(query) }, { fields, query }]
    const parts = conditions.map((c) => ({ vector: vector(index, c.fields, `${LOOKUP}.`), query: tsQuery(index, c.query) }))
    return {
      sql: `(${row}.ctid IN (SELECT ${LOOKUP}.ctid FROM ${quote(index.table)} AS ${LOOKUP} WHERE ${parts.map((p) => `${p.vector} @@ ${p.query.sql}`).join(' AND ')}))`,
      bindings: parts.flatMap((p) => p.query.bindings)
    }
  },
  rowKey,
  // ts_rank with no normalization reads only the row's vector and the query.
  scores (index: SearchIndex, table: string, fields: string[] | undefined, query: SearchQuery, candidates: { where: Fragment | true, order: string, limit: number }): Fragment {
    const tsquery = tsQuery(index, query)
    const where = candidates.where === true ? { sql: '', bindings: [] } : { sql: ` WHERE ${candidates.where.sql}`, bindings: candidates.where.bindings }
    return {
      sql: `SELECT ${rowKey(index, table)} AS "fb_row", ts_rank(${vector(index, fields ?? index.fields, `${table}.`)}, ${tsquery.sql}) AS "fb_score" FROM ${table}${where.sql} ORDER BY ${candidates.order} LIMIT ${candidates.limit}`,
      bindings: [...tsquery.bindings, ...where.bindings]
    }
  }
}
