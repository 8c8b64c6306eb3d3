// What a statement fastbase wrote reads, from its text: the tables it names after FROM or JOIN (how
// many times), and the columns of each that it names as `"qualifier"."column"`. For the kept totals
// (decision D132): an insert into a table a count does not read, or an update of columns it does not
// read, changes nothing it counts. Only fastbase's own SQL is read here: caller values are bound,
// never in the text. Knex quotes SQLite names with backticks, the expression compiler with double
// quotes; both are read.

export interface Reads {
  /** Each table named after FROM or JOIN, and how many times. */
  tables: Map<string, number>
  /**
   * The columns read of each table; undefined when the text names an identifier this cannot place
   * (one neither a table, nor an alias, nor a qualified column): then any column may be read.
   */
  columns?: Map<string, Set<string>>
}

interface Token { name: string, start: number, end: number }

const QUOTED = /([`"])([^`"]*)\1/g

export function statementReads (sql: string): Reads {
  const tokens: Token[] = [...sql.matchAll(QUOTED)].map((m) => ({ name: m[2], start: m.index, end: m.index + m[0].length }))
  const tables = new Map<string, number>()
  /** Each alias (a table's own name included) and the tables it stands for. */
  const aliases = new Map<string, Set<string>>()
  const alias = (name: string, table: string): void => { aliases.set(name, (aliases.get(name) ?? new Set()).add(table)) }
  const placed = new Set<number>()
  tokens.forEach((token, i) => {
    if (!/\b(?:from|join)\s+$/i.test(sql.slice(Math.max(0, token.start - 6), token.start))) return
    tables.set(token.name, (tables.get(token.name) ?? 0) + 1)
    alias(token.name, token.name)
    placed.add(i)
    const next = tokens[i + 1]
    if (next !== undefined && /^\s+as\s+$/i.test(sql.slice(token.end, next.start))) {
      alias(next.name, token.name)
      placed.add(i + 1)
    }
  })
  let columns: Map<string, Set<string>> | undefined = new Map([...tables.keys()].map((t) => [t, new Set<string>()]))
  for (let i = 0; i < tokens.length && columns !== undefined; i++) {
    if (placed.has(i)) continue
    const token = tokens[i]
    const next = tokens[i + 1]
    if (next !== undefined && next.start === token.end + 1 && sql[token.end] === '.') {
      const named = aliases.get(token.name)
      if (named === undefined) columns = undefined
      else for (const table of named) columns.get(table)?.add(next.name)
      i++
    } else if (!/\bas\s+$/i.test(sql.slice(Math.max(0, token.start - 4), token.start))) {
      // Not an output column's alias (`count(*) AS "total"`): a name this cannot place.
      columns = undefined
    }
  }
  return { tables, columns }
}
