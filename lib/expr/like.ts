// `a ~ b` between two constants, decided without a regular expression: the pattern is caller text,
// and a backtracking regex built from it (`%a%a%a%a%b`) can run for minutes. This is the
// two-pointer wildcard match, O(text x pattern) in the worst case and linear in the usual one.
// Semantics follow the databases' LIKE as fastbase writes it: `%` any run, `_` one character,
// `\` escapes the next character, ASCII letters compare without case (SQLite's LIKE, and
// PostgreSQL's ILIKE under the "C" collation), a lone trailing `\` matches nothing.

type Item = { kind: 'any' } | { kind: 'one' } | { kind: 'char', char: string }

function items (pattern: string): Item[] | undefined {
  const chars = Array.from(pattern)
  const out: Item[] = []
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]
    if (c === '\\') {
      if (i + 1 >= chars.length) return undefined
      out.push({ kind: 'char', char: foldAscii(chars[++i]) })
    } else if (c === '%') {
      // Runs of % mean the same as one.
      if (out.at(-1)?.kind !== 'any') out.push({ kind: 'any' })
    } else if (c === '_') {
      out.push({ kind: 'one' })
    } else {
      out.push({ kind: 'char', char: foldAscii(c) })
    }
  }
  return out
}

function foldAscii (c: string): string {
  return c.length === 1 && c >= 'A' && c <= 'Z' ? c.toLowerCase() : c
}

export function likeMatch (text: string, pattern: string): boolean {
  const p = items(pattern)
  if (p === undefined) return false
  const t = Array.from(text, foldAscii)
  let pi = 0
  let ti = 0
  // The last `%` seen and the text position it currently swallows up to: the only backtrack point.
  let star = -1
  let starText = 0
  while (ti < t.length) {
    const item = p[pi]
    if (item !== undefined && (item.kind === 'one' || (item.kind === 'char' && item.char === t[ti]))) {
      pi++
      ti++
    } else if (item?.kind === 'any') {
      star = pi++
      starText = ti
    } else if (star >= 0) {
      pi = star + 1
      ti = ++starText
    } else {
      return false
    }
  }
  while (p[pi]?.kind === 'any') pi++
  return pi === p.length
}
