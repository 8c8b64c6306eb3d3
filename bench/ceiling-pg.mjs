// The PostgreSQL side of the hand-written ceilings (bench/ceiling.mjs, bench/items-ceiling.mjs): a
// pg pool like fastbase's (same size, the URL's `?schema=` as the search path, bigint as numbers)
// and named (server-side prepared) statements written with `?` as for SQLite.
import pg from 'pg'

/** `{ named, close }`: `named(text)` answers a function that runs `text` with its values and resolves to the rows. */
export function ceilingPool (url, prefix) {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema')
  parsed.searchParams.delete('schema')
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: Number(process.env.FASTBASE_PG_POOL_MAX || 10),
    options: schema === null ? undefined : `-c search_path=${schema}`,
    types: { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) }
  })
  let next = 0
  const named = (text) => {
    const name = `${prefix}_${next++}`
    let i = 0
    const numbered = text.replace(/\?/g, () => `$${++i}`)
    return async (...values) => (await pool.query({ name, text: numbered, values })).rows
  }
  return { named, close: () => pool.end() }
}
