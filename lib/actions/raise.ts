// `RAISE(ABORT|FAIL|ROLLBACK, 'message')` in a SQL-mode action: SQLite allows RAISE only inside a
// trigger and PostgreSQL has no such expression, yet the config author plainly means "refuse with
// this message" (typically `CASE WHEN <broken invariant> THEN RAISE(ABORT, '...') END`). The call
// becomes `fastbase_raise('message')`, which both dialects provide and which fails the statement as
// a trigger does: the action answers 400 with the author's message. The whole action rolls back
// whichever of the three is used (its statements share one transaction).
import { RAISE_FUNCTION } from '../dialects/common.js'

// String literals and quoted identifiers are matched first so that a RAISE inside one stays text.
// Each alternative starts with a distinct character and has no nested quantifier: linear time.
const TOKENS = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\bRAISE\s*\(\s*(?:ABORT|FAIL|ROLLBACK)\s*,\s*('(?:[^']|'')*')\s*\)/gi

/** `sql` with its RAISE calls turned into `fastbase_raise(...)` calls. */
export function rewriteRaise (sql: string): string {
  return sql.replace(TOKENS, (match: string, message: string | undefined) => (message === undefined ? match : `${RAISE_FUNCTION}(${message})`))
}
