// Rows of the statements fastbase runs itself (the direct runner), as objects made by one object
// literal per statement. better-sqlite3 makes a row object by setting its columns one at a time
// from C++: each set walks V8's map transitions and interns the column's name again, and in a
// process as large as a server's (many object shapes, many strings) that cost a 20-row page
// 40 µs where the same rows read as arrays and made by a literal cost 16 (decision D140). The
// object is the same: the same keys in the same order, the same values, a plain prototype.
import type { Database as SqliteDatabase, Statement as SqliteStatement } from 'better-sqlite3'
import { memoize } from '../memo.js'
import type { Row } from './connection.js'

/** A statement that reads rows (a read, or a write with RETURNING), answering them as objects. */
export interface RowStatement {
  all: (bindings: readonly unknown[]) => Row[]
  get: (bindings: readonly unknown[]) => Row | undefined
}

type MakeRow = (values: unknown[]) => Row

/**
 * Row statements kept per SQL text (at most `size` texts), prepared by the connection's own
 * `prepare`: never one another caller holds, since raw mode changes the statement it is set on.
 * undefined for a statement that answers no rows, or whose rows the driver must make (rowMaker);
 * that answer is kept too (as null: the cache takes undefined for a text it has not seen), so such
 * a text is prepared and inspected once, not on every run.
 */
export function rowStatements (prepare: SqliteDatabase['prepare'], size: number): (sql: string) => RowStatement | undefined {
  const kept = memoize(size, (sql) => rowStatement(sql, prepare<unknown[], unknown[]>(sql)))
  return (sql) => kept(sql) ?? undefined
}

function rowStatement (sql: string, statement: SqliteStatement<unknown[], unknown[]>): RowStatement | null {
  if (!statement.reader) return null
  const names = statement.columns().map((c) => c.name)
  if (!namedByText(sql, names)) return null
  const make = rowMaker(names)
  if (make === undefined) return null
  statement.raw(true)
  return {
    all: (bindings) => statement.all(...bindings).map(make),
    get (bindings) {
      const values = statement.get(...bindings)
      return values === undefined ? undefined : make(values)
    }
  }
}

/**
 * Whether `sql` itself fixes its rows' column names: the maker is built once, but SQLite prepares a
 * statement again after any schema change, and a `*` then stands for other columns (a migration
 * adds one) and an unaliased column takes its table's spelling of the name. Every result column
 * named by a quoted alias (fastbase's select lists and RETURNING lists all are) and no `*` anywhere
 * (a `count(*)` included: such a statement simply goes to the driver) leaves nothing to the schema.
 */
export function namedByText (sql: string, names: readonly string[]): boolean {
  if (sql.includes('*')) return false
  return names.every((name) => {
    const quoted = `"${name.replaceAll('"', '""')}"`
    return sql.includes(` AS ${quoted}`) || sql.includes(` as ${quoted}`)
  })
}

/**
 * `(values) => ({ "name0": values[0], … })` for these column names. Each name is written as a JSON
 * string, which is a JavaScript string literal of the same text, so no name is ever read as code.
 * `__proto__` is the one key a literal sets differently (it would be the prototype), so a
 * statement naming it is left to the driver. Repeated names keep the first one's place and the
 * last one's value, as the driver's own objects do.
 */
export function rowMaker (names: readonly string[]): MakeRow | undefined {
  if (names.includes('__proto__')) return undefined
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`)
  return new Function('values', `return { ${fields.join(', ')} }`) as MakeRow
}
