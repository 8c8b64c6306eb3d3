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
      // Maps keep insertion order: the first key is the oldest.
      const oldest = cache.size >= size ? cache.keys().next() : undefined
      if (oldest !== undefined && oldest.done !== true) cache.delete(oldest.value)
      cache.set(key, value)
    }
    return value
  }
}
