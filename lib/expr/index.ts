// Entry point of the expression language: parse with a small cache (callers repeat the same filters).
import { parseExpression, parseList, type Expr, type ListItem } from './parse.js'
export { identifierPaths, literalText } from './parse.js'
import { memoize } from '../memo.js'

export { compile, compileCondition, toFragment, toCondition, isFunction, rowidField, readField, fieldRuled, AGGREGATES, type Compiled, type Condition, type Scope, type ColumnResolver } from './compile.js'
export { ExpressionError } from './errors.js'
export type { Expr, ListItem } from './parse.js'

const CACHE_SIZE = 500

export const parse: (src: string) => Expr = memoize(CACHE_SIZE, parseExpression)
export const parseColumns: (src: string) => ListItem[] = memoize(CACHE_SIZE, parseList)
