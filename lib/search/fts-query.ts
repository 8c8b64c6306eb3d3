// The search grammar of `@@` (docs/expressions.md, Search): what teenybase projects send to FTS5, read by
// fastbase itself so that both databases get the same query and no caller text reaches either
// database's query parser. One linear pass makes tokens, a recursive descent bounded by
// MAX_SEARCH_DEPTH makes the tree; each dialect writes the tree in its own syntax
// (lib/dialects/sqlite-fts.ts, postgres-fts.ts).
//
//   query   := or
//   or      := and ('OR' and)*
//   and     := unary (['AND'] unary)*          (at least one unary not negated)
//   unary   := ('NOT' | '-') primary | primary
//   primary := word ['*'] | '"' words '"' ['*'] | '(' or ')'

/** A word (one entry of `words`) or a phrase (words next to each other, in order); `prefix`: the last word is a prefix. */
export interface SearchPhrase { type: 'phrase', words: string[], prefix: boolean }
/** Every `include` and none of `exclude` (FTS5 cannot run a query made only of negations). */
export interface SearchAnd { type: 'and', include: SearchQuery[], exclude: SearchQuery[] }
export interface SearchOr { type: 'or', any: SearchQuery[] }
export type SearchQuery = SearchPhrase | SearchAnd | SearchOr

/** Characters of one search text. */
export const MAX_SEARCH_LENGTH = 1000
/**
 * Words of one search (phrase words included): each is a term of the index lookup, and an OR of
 * frequent words merges one long list per word (decisions D73, D78).
 */
export const MAX_SEARCH_TERMS = 10
/** Parentheses nested in one search. */
export const MAX_SEARCH_DEPTH = 8
/** Letters a prefix (`word*`) needs at least: a one-letter prefix stands for a large part of the vocabulary. */
export const MIN_PREFIX_LENGTH = 2

/**
 * Characters each word or phrase of a substring (`trigram`) search takes at least: the trigram index
 * finds no shorter text, and a silent empty answer would read as "no such rows" (decision D103).
 */
export const MIN_TRIGRAM_LENGTH = 3

/** The text a word or phrase of a substring search matches: its words, one space between (decision D103). */
export const substringOf = (phrase: SearchPhrase): string => phrase.words.join(' ')

/** A malformed search text; `position` is 0-based in the search text. */
export class SearchSyntaxError extends Error {
  constructor (readonly reason: string, readonly position: number) {
    super(`${reason} (character ${position + 1} of the search text)`)
    this.name = 'SearchSyntaxError'
  }
}

type Token =
  | { kind: 'term', words: string[], prefix: boolean, pos: number }
  | { kind: 'open', pos: number }
  | { kind: 'or' | 'and' | 'not' | 'close', pos: number }

// Letters and digits make words, as SQLite's unicode61 and PostgreSQL's parser (once the index has
// turned ASCII punctuation into spaces) read them. A fixed pattern applied to one character.
const WORD_CHAR = /^[\p{L}\p{N}]$/u
const OPERATORS: Record<string, 'or' | 'and' | 'not'> = { OR: 'or', AND: 'and', NOT: 'not' }

/** The tokens of `text`, one pass over its characters. */
function tokenize (text: string): Token[] {
  const chars = Array.from(text)
  const tokens: Token[] = []
  let terms = 0
  const word = (start: number): [string, number] => {
    let end = start
    while (end < chars.length && WORD_CHAR.test(chars[end])) end++
    if (++terms > MAX_SEARCH_TERMS) throw new SearchSyntaxError(`A search takes at most ${MAX_SEARCH_TERMS} words`, start)
    return [chars.slice(start, end).join(''), end]
  }
  const star = (i: number): boolean => chars[i] === '*'
  let i = 0
  while (i < chars.length) {
    const c = chars[i]
    if (WORD_CHAR.test(c)) {
      const [w, end] = word(i)
      if (Object.hasOwn(OPERATORS, w)) {
        terms--
        tokens.push({ kind: OPERATORS[w], pos: i })
      } else if (w === 'NEAR' && chars[end] === '(') {
        throw new SearchSyntaxError('NEAR is not supported (use a "phrase")', i)
      } else {
        tokens.push({ kind: 'term', words: [w], prefix: star(end), pos: i })
      }
      i = star(end) ? end + 1 : end
    } else if (c === '"') {
      const close = chars.indexOf('"', i + 1)
      if (close === -1) throw new SearchSyntaxError('Unclosed quote', i)
      const words: string[] = []
      for (let j = i + 1; j < close;) {
        if (WORD_CHAR.test(chars[j])) {
          const [w, end] = word(j)
          words.push(w)
          j = end
        } else j++
      }
      if (words.length === 0) throw new SearchSyntaxError('A phrase needs a word', i)
      tokens.push({ kind: 'term', words, prefix: star(close + 1), pos: i })
      i = star(close + 1) ? close + 2 : close + 1
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'open' : 'close', pos: i })
      i++
    } else if (c === '-' && (i === 0 || /^[\s(]$/u.test(chars[i - 1])) && i + 1 < chars.length && (chars[i + 1] === '"' || chars[i + 1] === '(' || WORD_CHAR.test(chars[i + 1]))) {
      // `-word` at the start of a term negates; inside a word (`well-known`) it only separates.
      tokens.push({ kind: 'not', pos: i })
      i++
    } else {
      // Any other character, a stray `*` included, separates words as the tokenizers do.
      i++
    }
  }
  return tokens
}

/**
 * Parses a search text. Throws SearchSyntaxError (with the position) when it is malformed, or holds no
 * word; `minLength`: characters each word or phrase takes at least (MIN_TRIGRAM_LENGTH for a substring search).
 */
export function parseSearch (text: string, minLength = 1): SearchQuery {
  if (text.length > MAX_SEARCH_LENGTH) throw new SearchSyntaxError(`A search text takes at most ${MAX_SEARCH_LENGTH} characters`, MAX_SEARCH_LENGTH)
  const tokens = tokenize(text)
  if (tokens.length === 0) throw new SearchSyntaxError('The search text has no words', 0)
  let next = 0
  const peek = (): Token | undefined => tokens[next]
  const end = text.length

  const or = (depth: number): SearchQuery => {
    const any = [and(depth)]
    while (peek()?.kind === 'or') {
      next++
      any.push(and(depth))
    }
    return any.length === 1 ? any[0] : { type: 'or', any }
  }

  const and = (depth: number): SearchQuery => {
    const include: SearchQuery[] = []
    const exclude: SearchQuery[] = []
    const start = peek()?.pos ?? end
    for (let token = peek(); token !== undefined && token.kind !== 'or' && token.kind !== 'close'; token = peek()) {
      if (token.kind === 'and') {
        if (include.length + exclude.length === 0) throw new SearchSyntaxError('AND needs a word before it', token.pos)
        next++
        token = peek()
        if (token === undefined || token.kind === 'or' || token.kind === 'close' || token.kind === 'and') throw new SearchSyntaxError('AND needs a word after it', token?.pos ?? end)
      }
      if (token.kind === 'not') {
        next++
        exclude.push(primary(depth, token.pos, 'NOT'))
      } else include.push(primary(depth, token.pos))
    }
    if (include.length + exclude.length === 0) {
      const at = peek()
      const reason = at?.kind !== 'close' ? 'OR needs a word on both sides' : depth === 0 ? 'Unmatched closing parenthesis' : 'Empty parentheses'
      throw new SearchSyntaxError(reason, at?.pos ?? end)
    }
    if (include.length === 0) throw new SearchSyntaxError('A search cannot be only NOT terms: add a word to find', start)
    return include.length === 1 && exclude.length === 0 ? include[0] : { type: 'and', include, exclude }
  }

  const primary = (depth: number, pos: number, after?: string): SearchQuery => {
    const token = peek()
    if (token === undefined || (token.kind !== 'term' && token.kind !== 'open')) {
      throw new SearchSyntaxError(`${after ?? 'This'} needs a word, a "phrase" or (a group) after it`, token?.pos ?? (after === undefined ? pos : end))
    }
    next++
    if (token.kind === 'open') {
      if (depth === MAX_SEARCH_DEPTH) throw new SearchSyntaxError(`A search nests at most ${MAX_SEARCH_DEPTH} parentheses`, token.pos)
      const inner = or(depth + 1)
      if (peek()?.kind !== 'close') throw new SearchSyntaxError('Unclosed parenthesis', token.pos)
      next++
      return inner
    }
    const last = token.words[token.words.length - 1]
    if (token.prefix && Array.from(last).length < MIN_PREFIX_LENGTH) throw new SearchSyntaxError(`A prefix takes at least ${MIN_PREFIX_LENGTH} letters`, token.pos)
    const phrase: SearchPhrase = { type: 'phrase', words: token.words, prefix: token.prefix }
    if (Array.from(substringOf(phrase)).length < minLength) throw new SearchSyntaxError(`A word or "phrase" of a substring search takes at least ${minLength} characters`, token.pos)
    return phrase
  }

  const query = or(0)
  const rest = peek()
  if (rest !== undefined) throw new SearchSyntaxError(rest.kind === 'close' ? 'Unmatched closing parenthesis' : 'Unexpected operator', rest.pos)
  return query
}

/** The query without its negations: every row the query matches, matches it too (PostgreSQL narrows an index lookup with it). */
export function positivePart (query: SearchQuery): SearchQuery {
  if (query.type === 'phrase') return query
  if (query.type === 'or') return { type: 'or', any: query.any.map(positivePart) }
  const include = query.include.map(positivePart)
  return include.length === 1 ? include[0] : { type: 'and', include, exclude: [] }
}

/** Does the query hold a phrase of several words (FTS5 needs positions, `detail=full`, for it)? */
export function hasPhrase (query: SearchQuery): boolean {
  if (query.type === 'phrase') return query.words.length > 1
  if (query.type === 'or') return query.any.some(hasPhrase)
  return [...query.include, ...query.exclude].some(hasPhrase)
}
