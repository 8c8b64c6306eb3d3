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
import type { SearchIndex, SearchTerm, Tokenizer } from '../fts.js'

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

/** tsquery text: each word quoted (words hold only letters and digits), all required, `:*` for a prefix. */
function tsQuery (index: SearchIndex, terms: SearchTerm[]): Fragment {
  return { sql: `to_tsquery('${CONFIGS[index.tokenize]}', CAST(? AS text))`, bindings: [terms.map((t) => `'${t.word}'${t.prefix ? ':*' : ''}`).join(' & ')] }
}

const LOOKUP = '"fb_search"'

export const postgresSearch = {
  match (index: SearchIndex, row: string, fields: string[] | undefined, terms: SearchTerm[]): Fragment {
    const query = tsQuery(index, terms)
    // The vector of every field is the indexed one; the vector of `fields` then narrows what the index found.
    const conditions = [`${vector(index, index.fields, `${LOOKUP}.`)} @@ ${query.sql}`]
    if (fields !== undefined) conditions.push(`${vector(index, fields, `${LOOKUP}.`)} @@ ${query.sql}`)
    return {
      sql: `(${row}.ctid IN (SELECT ${LOOKUP}.ctid FROM ${quote(index.table)} AS ${LOOKUP} WHERE ${conditions.join(' AND ')}))`,
      bindings: conditions.map(() => query.bindings[0])
    }
  },
  // ts_rank: higher is better; a row that does not match ranks 0, last.
  rank (index: SearchIndex, row: string, fields: string[] | undefined, terms: SearchTerm[]): Fragment {
    const query = tsQuery(index, terms)
    return { sql: `ts_rank(${vector(index, fields ?? index.fields, `${row}.`)}, ${query.sql}) DESC`, bindings: query.bindings }
  }
}
