// The search grammar (lib/search/fts-query.ts) and what each dialect makes of it: FTS5 query text and
// PostgreSQL tsquery text with the same meaning. The HTTP tests of the same queries are in test/lib/search/fts.test.ts.
import t from 'tap'
import { parseSearch, SearchSyntaxError, MAX_SEARCH_LENGTH } from '../../../lib/search/fts-query.js'
import { fts5Query } from '../../../lib/dialects/sqlite-fts.js'
import { tsQueryText } from '../../../lib/dialects/postgres-fts.js'

const both = (text: string) => { const q = parseSearch(text); return [fts5Query(q), tsQueryText(q)] }

t.test('parse', async (t) => {
  t.same(parseSearch('Hello wor*'), { type: 'and', include: [{ type: 'phrase', words: ['Hello'], prefix: false }, { type: 'phrase', words: ['wor'], prefix: true }], exclude: [] })
  t.same(parseSearch('"ab, cd"*'), { type: 'phrase', words: ['ab', 'cd'], prefix: true }, 'a phrase: its words, punctuation only separates')
  t.same(parseSearch('a -b'), { type: 'and', include: [{ type: 'phrase', words: ['a'], prefix: false }], exclude: [{ type: 'phrase', words: ['b'], prefix: false }] })
  t.same(parseSearch('well-known'), parseSearch('well known'), 'a dash inside a word separates')
  t.same(parseSearch('((a))'), parseSearch('a'), 'groups of one are the item')
  t.same(parseSearch('a AND b'), parseSearch('a b'), 'AND is implicit')
  t.same(parseSearch('x or and not'), { type: 'and', include: ['x', 'or', 'and', 'not'].map((w) => ({ type: 'phrase', words: [w], prefix: false })), exclude: [] }, 'operators are upper case; lower case are words')
})

t.test('both compilers', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['fox', '"fox"', '\'fox\''],
    ['"word1"* OR "word2"*', '("word1"* OR "word2"*)', '(\'word1\':* | \'word2\':*)'],
    ['quick brown', '("quick" AND "brown")', '(\'quick\' & \'brown\')'],
    ['"quick brown fox"', '"quick brown fox"', '(\'quick\' <-> \'brown\' <-> \'fox\')'],
    ['"quick bro"*', '"quick bro"*', '(\'quick\' <-> \'bro\':*)'],
    ['a b -c -"d e" (f OR gh*)', '(("a" AND "b" AND ("f" OR "gh"*)) NOT ("c" OR "d e"))', '(\'a\' & \'b\' & (\'f\' | \'gh\':*) & !\'c\' & !(\'d\' <-> \'e\'))'],
    ['a NOT (b OR c) OR d', '((("a") NOT (("b" OR "c"))) OR "d")', '((\'a\' & !(\'b\' | \'c\')) | \'d\')'],
    ['café AND 3.14', '("café" AND "3" AND "14")', '(\'café\' & \'3\' & \'14\')'],
    ['x -(y -z)', '(("x") NOT ((("y") NOT ("z"))))', '(\'x\' & !(\'y\' & !\'z\'))'],
    ['x\'; DROP TABLE t; --', '("x" AND "DROP" AND "TABLE" AND "t")', '(\'x\' & \'DROP\' & \'TABLE\' & \'t\')']
  ]
  for (const [text, fts5, ts] of cases) t.same(both(text), [fts5, ts], text)
})

t.test('malformed: a SearchSyntaxError naming the position', async (t) => {
  const cases: Array<[string, RegExp, number]> = [
    ['', /no words/, 0],
    ['"abc', /Unclosed quote/, 0],
    ['ab (cd', /Unclosed parenthesis/, 3],
    ['ab cd)', /Unmatched closing parenthesis/, 5],
    ['OR ab', /OR needs a word on both sides/, 0],
    ['ab OR', /OR needs a word on both sides/, 5],
    ['ab OR OR cd', /OR needs a word on both sides/, 6],
    ['AND ab', /AND needs a word before it/, 0],
    ['ab AND OR cd', /AND needs a word after it/, 7],
    ['ab NOT', /NOT needs a word/, 6],
    ['NOT NOT ab', /NOT needs a word/, 4],
    ['-ab', /only NOT terms/, 0],
    ['ab (-cd)', /only NOT terms/, 4],
    ['()', /Empty parentheses/, 1],
    ['\'); DROP TABLE t; --', /Unmatched closing parenthesis/, 1],
    ['"!?"', /A phrase needs a word/, 0],
    ['a*', /at least 2 letters/, 0],
    ['"ab c"*', /at least 2 letters/, 0],
    ['NEAR(a b)', /NEAR is not supported/, 0],
    [`${'('.repeat(9)}a${')'.repeat(9)}`, /at most 8 parentheses/, 8],
    ['w '.repeat(11), /at most 10 words/, 20],
    ['"a b c d e f g h i j k"', /at most 10 words/, 21],
    ['a'.repeat(MAX_SEARCH_LENGTH + 1), /at most 1000 characters/, MAX_SEARCH_LENGTH]
  ]
  for (const [text, reason, position] of cases) {
    t.throws(() => parseSearch(text), { name: 'SearchSyntaxError', reason, position }, JSON.stringify(text))
  }
  t.doesNotThrow(() => parseSearch('w '.repeat(10)), 'ten words: the most one search holds')
  t.ok(new SearchSyntaxError('x', 4).message.endsWith('(character 5 of the search text)'))
})

t.test('linear on long input', async (t) => {
  // Every shape of long text the bounds admit parses in one pass: no backtracking to exploit.
  for (const text of ['-'.repeat(1000), '"'.repeat(999), '*'.repeat(1000), '('.repeat(8) + ' '.repeat(980) + 'a' + ')'.repeat(8), 'a-'.repeat(16) + '.'.repeat(960)]) {
    try { parseSearch(text) } catch (error) { t.type(error, SearchSyntaxError, text.slice(0, 10)) }
  }
})
