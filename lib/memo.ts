/**
 * `build` memoised by string key, keeping at most `size` entries (the oldest goes first). Used for
 * values that repeat across requests: parsed expressions, prepared statements.
 */
export function memoize<T> (size: number, build: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>()
  return (key) => {
    let value = cache.get(key)
    if (value === undefined) {
      value = build(key)
      if (cache.size >= size) cache.delete(cache.keys().next().value as string)
      cache.set(key, value)
    }
    return value
  }
}
