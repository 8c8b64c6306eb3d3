// What one request's caller text may ask of the database, counted wherever an expression appears
// (decision D85): where, select and returning lists (aggregates included), `set`, `expr`, view and
// realtime filters. One object per request (lib/crud/context.ts#crudContext); every compilation of
// the request's text draws from it, so splitting a costly request over several places buys nothing.
// The same object records whether anything compiled for the request, the developer's rules included,
// searches or expands a relation: that alone makes its statements costly (reader threads and the
// statement timeout on SQLite, the long-read gate on PostgreSQL).
import { ExpressionError } from './errors.js'
import type { Limits } from '../limits.js'
import { requestHops, type HopBudget } from './relations.js'

export class ExpressionBudget {
  /** A search or a relation was compiled (caller text or not): the request's statements may take long. */
  costly = false
  private searches = 0
  /** Relation hops every expression of the request may still take, rules included (decision D95). */
  readonly hops: HopBudget = requestHops()

  constructor (private readonly limits: Pick<Limits, 'searches'>) {}

  /**
   * One `@@`. `trusted`: developer text (a rule), which only marks the request costly; caller text is
   * counted, and refused past the request's searches (each one's words are bounded by its grammar).
   */
  search (pos: number, trusted = false): void {
    this.costly = true
    if (trusted) return
    const most = this.limits.searches
    if (++this.searches > most) throw new ExpressionError(`more than ${most} @@ search${most === 1 ? '' : 'es'} in one request (limits.searches: its where, select list and every other expression together)`, pos)
  }
}
