// Entry point of the expression language: parse with a small cache (callers repeat the same filters).
import { parseExpression, parseList, type Expr, type ListItem } from './parse.js'

export { compile, toFragment, toCondition, type Compiled, type Scope } from './compile.js'
export { ExpressionError } from './errors.js'
export type { Expr, ListItem } from './parse.js'

const CACHE_SIZE = 500
const expressions = new Map<string, Expr>()
const lists = new Map<string, ListItem[]>()

function cached<T> (cache: Map<string, T>, src: string, parse: (s: string) => T): T {
  let value = cache.get(src)
  if (value === undefined) {
    value = parse(src)
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string)
    cache.set(src, value)
  }
  return value
}

export const parse = (src: string): Expr => cached(expressions, src, parseExpression)
export const parseColumns = (src: string): ListItem[] => cached(lists, src, parseList)
