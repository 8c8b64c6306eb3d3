/** A caller's expression is malformed or names something it may not use. Becomes a 400. */
export class ExpressionError extends Error {
  constructor (readonly reason: string, readonly position: number) {
    super(`${reason} at position ${position}`)
    this.name = 'ExpressionError'
  }
}
