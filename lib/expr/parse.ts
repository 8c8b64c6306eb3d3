// Parser of the fastbase expression language (where filters, rules, `set`, select lists, guards).
// Hand-written Pratt parser rather than jsep: the language is small, and owning the grammar lets
// every error name the offending token and its position, reject raw SQL keywords with a hint,
// and accept `in (a, b)` / `in [a, b]` and `count(*)` without plugin gymnastics.
import { ExpressionError } from './errors.js'
import { LIMIT_CEILINGS, MAX_EXPRESSION_DEPTH, MAX_IN_ITEMS } from '../limits.js'

export type Expr =
  | { type: 'literal', value: string | number | boolean | null, pos: number }
  /** `param` marks a bound parameter `{:name}`, read as `params.name` (path ['params', name]) that must be given. */
  | { type: 'ident', path: string[], pos: number, param?: true }
  | { type: 'unary', op: '!' | '-' | '+', arg: Expr, pos: number }
  | { type: 'binary', op: BinaryOp, left: Expr, right: Expr, pos: number }
  | { type: 'call', name: string, args: Expr[], star: boolean, pos: number }
  | { type: 'list', items: Expr[], pos: number }

export type BinaryOp = '|' | '&' | '==' | '!=' | '=' | '~' | '!~' | '@@' | '<' | '<=' | '>' | '>=' |
  '+' | '-' | '*' | '/' | 'in' | '->' | '->>' | '||'

/** One item of a select or returning list: an expression and its optional alias. */
export interface ListItem { expr: Expr | '*', alias?: string, source: string }

type Token =
  | { kind: 'num', value: number, pos: number, text: string }
  | { kind: 'str', value: string, pos: number, text: string }
  | { kind: 'ident', value: string, pos: number, text: string }
  | { kind: 'op', value: string, pos: number, text: string }
  | { kind: 'param', value: string, pos: number, text: string }
  | { kind: 'end', pos: number, text: string }

// Longest first, so `->>` wins over `->` and `!~` over `!`.
const OPERATORS = ['->>', '->', '||', '==', '!=', '!~', '@@', '<=', '>=', '=>', '=', '~', '<', '>', '&', '|', '!',
  '+', '-', '*', '/', '(', ')', '[', ']', ',', '.']

const BINARY_PRECEDENCE: Record<string, number> = {
  '|': 1, '&': 2,
  '==': 6, '!=': 6, '=': 6, '~': 6, '!~': 6, '@@': 6,
  '<': 7, '<=': 7, '>': 7, '>=': 7, in: 7,
  '+': 9, '-': 9,
  '*': 10, '/': 10,
  '->': 11, '->>': 11,
  '||': 12
}

// Words people type when they think this is SQL; each gets a hint instead of a bare syntax error.
export const SQL_HINTS: Record<string, string> = {
  and: 'use & instead of AND', or: 'use | instead of OR', not: 'use ! instead of NOT',
  like: 'use ~ instead of LIKE', is: 'use == or != instead of IS', between: 'use >= and <= instead of BETWEEN',
  select: 'subqueries are not supported', union: 'subqueries are not supported', from: 'subqueries are not supported',
  case: 'CASE is not supported', when: 'CASE is not supported', limit: 'LIMIT is a separate parameter',
  order: 'ORDER BY is a separate parameter', drop: 'SQL statements are not supported', delete: 'SQL statements are not supported',
  insert: 'SQL statements are not supported', update: 'SQL statements are not supported', asc: 'use the order parameter', desc: 'use the order parameter',
  rowid: 'rowid names the primary key of tables whose key is an integer; this table\'s key is another field'
}

/**
 * The parser's own ceiling, for every text it reads (developer rules included). Callers' texts meet
 * the configured, smaller `limits.expressionLength` before they get here (lib/crud/context.ts).
 */
export const MAX_EXPRESSION_LENGTH = LIMIT_CEILINGS.expressionLength!

// Sticky patterns read at the cursor: no slicing, so tokenizing stays linear in the text's length.
const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y
const WORD = /[A-Za-z_$][A-Za-z0-9_$]*/y
// A bound parameter, spelled as SQL-mode actions spell theirs (decision D88).
const PARAM = /\{:([A-Za-z_][A-Za-z0-9_]*)\}/y

function readAt (re: RegExp, src: string, at: number): string {
  re.lastIndex = at
  return re.exec(src)![0]
}

function tokenize (src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]
    if (/\s/.test(c)) { i++; continue }
    const start = i
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const text = readAt(NUMBER, src, i)
      i += text.length
      if (/[A-Za-z_$]/.test(src[i] ?? '')) throw new ExpressionError(`Invalid number "${src.slice(start, i + 1)}"`, start)
      tokens.push({ kind: 'num', value: Number(text), pos: start, text })
      continue
    }
    if (c === '\'' || c === '"') {
      const parts: string[] = []
      i++
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\' && i + 1 < src.length) {
          const next = src[i + 1]
          parts.push(next === 'n' ? '\n' : next === 't' ? '\t' : next)
          i += 2
        } else {
          parts.push(src[i++])
        }
      }
      const value = parts.join('')
      if (i >= src.length) throw new ExpressionError('Unterminated string', start)
      i++
      tokens.push({ kind: 'str', value, pos: start, text: src.slice(start, i) })
      continue
    }
    if (/[A-Za-z_$]/.test(c)) {
      const word = readAt(WORD, src, i)
      i += word.length
      tokens.push({ kind: 'ident', value: word, pos: start, text: word })
      continue
    }
    if (c === '{') {
      PARAM.lastIndex = i
      const param = PARAM.exec(src)
      if (param === null) throw new ExpressionError('Expected a parameter such as {:name}', start)
      i += param[0].length
      tokens.push({ kind: 'param', value: param[1], pos: start, text: param[0] })
      continue
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i))
    if (op === undefined) throw new ExpressionError(`Unexpected character "${c}"`, start)
    i += op.length
    tokens.push({ kind: 'op', value: op, pos: start, text: op })
  }
  tokens.push({ kind: 'end', pos: src.length, text: 'end of expression' })
  return tokens
}

class Parser {
  private index = 0
  /** Nesting of the node being built: recursion plus left-leaning operator chains. */
  private depth = 0
  constructor (private readonly tokens: Token[], private readonly src: string) {}

  get peek (): Token { return this.tokens[this.index] }
  next (): Token { return this.tokens[this.index++] }

  isOp (value: string): boolean {
    const t = this.peek
    return t.kind === 'op' && t.value === value
  }

  expectOp (value: string): Token {
    if (!this.isOp(value)) this.unexpected(`expected "${value}"`)
    return this.next()
  }

  unexpected (expected?: string): never {
    const t = this.peek
    if (t.kind === 'end') throw new ExpressionError(`Unexpected end of expression${expected ? `, ${expected}` : ''}`, t.pos)
    const hint = t.kind === 'ident' ? SQL_HINTS[t.value.toLowerCase()] : undefined
    const what = t.kind === 'ident' ? `identifier "${t.text}"` : `token "${t.text}"`
    throw new ExpressionError(`Unexpected ${what}${hint ? ` (${hint})` : expected ? `, ${expected}` : ''}`, t.pos)
  }

  /** The binary operator at the cursor, if any; `in` is the only word operator. */
  binaryOp (): string | undefined {
    const t = this.peek
    if (t.kind === 'op' && BINARY_PRECEDENCE[t.value] !== undefined) return t.value
    if (t.kind === 'ident' && t.value.toLowerCase() === 'in') return 'in'
    return undefined
  }

  /** Enters one level of nesting; every recursive rule and every chained operator counts. */
  enter (pos: number): void {
    if (++this.depth > MAX_EXPRESSION_DEPTH) throw new ExpressionError(`Expression is nested deeper than ${MAX_EXPRESSION_DEPTH} levels`, pos)
  }

  expression (minPrecedence = 0): Expr {
    const outer = this.depth
    this.enter(this.peek.pos)
    let left = this.unary()
    for (;;) {
      const op = this.binaryOp()
      if (op === undefined) break
      const precedence = BINARY_PRECEDENCE[op]
      if (precedence <= minPrecedence) break
      const opToken = this.next()
      this.enter(opToken.pos)
      const right = op === 'in' ? this.inList() : this.expression(precedence)
      left = { type: 'binary', op: op as BinaryOp, left, right, pos: opToken.pos }
    }
    this.depth = outer
    return left
  }

  inList (): Expr {
    const open = this.peek
    const close = this.isOp('(') ? ')' : this.isOp('[') ? ']' : undefined
    if (close === undefined) this.unexpected('"in" needs a list such as (1, 2) or [1, 2]')
    this.next()
    const items: Expr[] = []
    if (!this.isOp(close)) {
      do {
        if (items.length === MAX_IN_ITEMS) throw new ExpressionError(`"in" takes at most ${MAX_IN_ITEMS} values`, this.peek.pos)
        items.push(this.expression())
      } while (this.isOp(',') && this.next())
    }
    this.expectOp(close)
    if (items.length === 0) throw new ExpressionError('"in" needs at least one value', open.pos)
    return { type: 'list', items, pos: open.pos }
  }

  unary (): Expr {
    const t = this.peek
    if (t.kind === 'op' && (t.value === '!' || t.value === '-' || t.value === '+')) {
      this.next()
      const outer = this.depth
      this.enter(t.pos)
      const arg = this.unary()
      this.depth = outer
      return { type: 'unary', op: t.value, arg, pos: t.pos }
    }
    return this.primary()
  }

  primary (): Expr {
    const t = this.next()
    switch (t.kind) {
      case 'num': return { type: 'literal', value: t.value, pos: t.pos }
      case 'str': return { type: 'literal', value: t.value, pos: t.pos }
      case 'ident': return this.identifierOrCall(t)
      case 'param': return { type: 'ident', path: ['params', t.value], pos: t.pos, param: true }
      case 'op':
        if (t.value === '(') {
          const inner = this.expression()
          this.expectOp(')')
          return inner
        }
    }
    this.index--
    return this.unexpected()
  }

  identifierOrCall (t: Token & { kind: 'ident' }): Expr {
    const lower = t.value.toLowerCase()
    if (lower === 'true' || lower === 'false') return { type: 'literal', value: lower === 'true', pos: t.pos }
    if (lower === 'null') return { type: 'literal', value: null, pos: t.pos }
    if (this.isOp('(')) return this.call(t)
    const path = [t.value]
    while (this.isOp('.')) {
      this.next()
      const part = this.next()
      if (part.kind !== 'ident') { this.index--; this.unexpected('expected a name after "."') }
      path.push(part.value)
    }
    return { type: 'ident', path, pos: t.pos }
  }

  call (t: Token & { kind: 'ident' }): Expr {
    this.next()
    const args: Expr[] = []
    let star = false
    if (this.isOp('*')) {
      this.next()
      star = true
    } else if (!this.isOp(')')) {
      do { args.push(this.expression()) } while (this.isOp(',') && this.next())
    }
    this.expectOp(')')
    return { type: 'call', name: t.value.toLowerCase(), args, star, pos: t.pos }
  }

  end (): void {
    if (this.peek.kind !== 'end') this.unexpected()
  }

  /** `expr [as name | => name]`, or `*`. */
  listItem (): ListItem {
    const startPos = this.peek.pos
    if (this.isOp('*')) {
      this.next()
      return { expr: '*', source: '*' }
    }
    const expr = this.expression()
    const endPos = this.peek.pos
    let alias: string | undefined
    const t = this.peek
    if ((t.kind === 'ident' && t.value.toLowerCase() === 'as') || (t.kind === 'op' && t.value === '=>')) {
      this.next()
      const name = this.next()
      if (name.kind !== 'ident') { this.index--; this.unexpected('expected an alias name') }
      alias = name.value
    }
    return { expr, alias, source: this.src.slice(startPos, endPos).trim() }
  }
}

/** Every identifier an expression names, as its dotted path (`new.role` -> ['new', 'role']). */
export function identifierPaths (expr: Expr): string[][] {
  const paths: string[][] = []
  const pending: Expr[] = [expr]
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    switch (node.type) {
      case 'ident': paths.push(node.path); break
      case 'unary': pending.push(node.arg); break
      case 'binary': pending.push(node.left, node.right); break
      case 'call': pending.push(...node.args); break
      case 'list': pending.push(...node.items); break
    }
  }
  return paths
}

function checkLength (src: string): void {
  if (src.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError(`Expression is longer than ${MAX_EXPRESSION_LENGTH} characters`, MAX_EXPRESSION_LENGTH)
}

/** A value as expression text the tokenizer reads back as that value (a hook's `where` names rows with it). */
export function literalText (value: string | number | boolean | null): string {
  if (typeof value === 'string') return `"${value.replace(/[\\"]/g, '\\$&')}"`
  return String(value)
}

/** Parses one expression. Throws ExpressionError naming the token and its position. */
export function parseExpression (src: string): Expr {
  checkLength(src)
  const parser = new Parser(tokenize(src), src)
  if (parser.peek.kind === 'end') throw new ExpressionError('Empty expression', 0)
  const expr = parser.expression()
  parser.end()
  return expr
}

/** Parses a comma-separated select/returning list (`title, lower(name) as n, *`). */
export function parseList (src: string): ListItem[] {
  checkLength(src)
  const parser = new Parser(tokenize(src), src)
  const items: ListItem[] = []
  if (parser.peek.kind === 'end') return items
  do { items.push(parser.listItem()) } while (parser.isOp(',') && parser.next())
  parser.end()
  return items
}
