// The per-table check `fastbase copy` makes before it says done (decision D101): the row count and a
// digest of the rows as the API would answer them (each dialect's decode), computed the same way on
// both databases. Rows are combined without regard to order: the two databases may sort text keys
// differently (SQLite by bytes, PostgreSQL by collation), and each row is one key's, so none repeats.
import { createHash } from 'node:crypto'
import { isObject } from '../plain.js'

/** JSON text of a decoded value with object keys sorted (PostgreSQL's jsonb reorders them). */
export function canonicalJson (value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v)
}

/** Row count and an order-free digest of decoded rows (fields in the config's order). */
export class TableDigest {
  rows = 0
  private readonly sum = Buffer.alloc(32)

  add (values: unknown[]): void {
    const hash = createHash('sha256').update(canonicalJson(values)).digest()
    for (let i = 0; i < 32; i++) this.sum[i] ^= hash[i]
    this.rows++
  }

  get hex (): string {
    return this.sum.toString('hex')
  }
}
