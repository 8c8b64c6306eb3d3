// PostgreSQL substring search (`tokenize: 'trigram'`, decision D103): the searched fields' text, a
// line apart, kept in the stored generated column SEARCH_COLUMN with a pg_trgm GIN index on it; each
// word or phrase of the search is an `ILIKE '%text%'` the index answers. A word or phrase holds only
// letters, digits and single spaces (lib/search/fts-query.ts), so it is no LIKE pattern and never
// spans two fields (FTS5 matches within one column). COLLATE "default": ILIKE refuses nondeterministic
// collations (NOCASE columns), and "C" would fold only ASCII letters.
import type { Fragment } from './types.js'
import { quote } from './common.js'
import { quoteString } from './ddl.js'
import type { SearchIndex } from '../search/fts.js'
import { positivePart, substringOf, type SearchQuery } from '../search/fts-query.js'

/** What a role that may not create pg_trgm is told: the one statement to run as a superuser. */
export const PG_TRGM_MISSING = 'fullTextSearch tokenize "trigram" needs the pg_trgm extension, which this database role may not create: run CREATE EXTENSION pg_trgm; as a superuser in this database, then start again'

/** pg_trgm, created once per database (it is trusted: a role that may create in the database may create it). */
const CREATE_PG_TRGM = `DO $fastbase$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE EXTENSION pg_trgm;
  END IF;
EXCEPTION
  WHEN insufficient_privilege THEN RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = ${quoteString(PG_TRGM_MISSING)};
  WHEN unique_violation OR duplicate_object THEN NULL; -- another schema's migration made it meanwhile
END $fastbase$`

/** The searched text of `fields`; `qualifier` is `"t".` in queries, empty in the column's definition. */
export function trigramText (fields: string[], qualifier: string): string {
  return fields.map((f) => `coalesce(${qualifier}${quote(f)}, '') COLLATE "default"`).join(` || E'\\n' || `)
}

/** The stored text, its trigram index (with the operator class of wherever pg_trgm lives), and statistics. */
export function trigramStatements (index: SearchIndex, column: string, indexName: string): string[] {
  const table = quote(index.table)
  const create = `DO $fastbase$ BEGIN
  EXECUTE format('CREATE INDEX %I ON %I USING gin (%I %I.gin_trgm_ops)', ${[indexName, index.table, column].map(quoteString).join(', ')},
    (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
END $fastbase$`
  return [
    CREATE_PG_TRGM,
    `ALTER TABLE ${table} ADD COLUMN ${quote(column)} text GENERATED ALWAYS AS (${trigramText(index.fields, '')}) STORED`,
    create,
    `ANALYZE ${table}`
  ]
}

/** The query as ILIKEs of `text`: every word or phrase a substring; AND, OR and NOT as written. */
function substrings (text: string, query: SearchQuery): Fragment {
  const parts = (queries: SearchQuery[]): Fragment[] => queries.map((q) => substrings(text, q))
  const join = (fragments: Fragment[], op: string): Fragment => ({ sql: `(${fragments.map((f) => f.sql).join(op)})`, bindings: fragments.flatMap((f) => f.bindings) })
  switch (query.type) {
    case 'phrase': return { sql: `${text} ILIKE ?`, bindings: [`%${substringOf(query)}%`] }
    case 'or': return join(parts(query.any), ' OR ')
    case 'and': return join([...parts(query.include), ...parts(query.exclude).map((f) => ({ sql: `NOT ${f.sql}`, bindings: f.bindings }))], ' AND ')
  }
}

/** A match: the stored text of every field (indexed), then, when some fields are searched, theirs decides. */
export function trigramMatch (row: string, column: string, fields: string[] | undefined, query: SearchQuery): Fragment {
  const stored = `${row}.${quote(column)}`
  if (fields === undefined) return substrings(stored, query)
  // A row may match in `fields` and hold a negated word elsewhere: the index is asked without the negations.
  const all = substrings(stored, positivePart(query))
  const some = substrings(`(${trigramText(fields, `${row}.`)})`, query)
  return { sql: `(${all.sql} AND ${some.sql})`, bindings: [...all.bindings, ...some.bindings] }
}
