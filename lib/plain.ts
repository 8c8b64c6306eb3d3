// Plain data helpers (config validation, its checks, secrets): what counts as a plain
// object, and a deep copy of plain data that never touches the caller's object.

export function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Copies arrays and plain objects; anything else (functions, class instances) is kept as is for the schema to reject. */
export function clonePlain (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clonePlain)
  if (!isPlainObject(value)) return value
  const copy: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) copy[key] = clonePlain(member)
  }
  return copy
}

/** Freezes arrays and plain objects all the way down (anything else is left as is); answers `value`. */
export function freezePlain<T> (value: T): T {
  if (Array.isArray(value) || isPlainObject(value)) {
    for (const member of Object.values(value)) freezePlain(member)
    Object.freeze(value)
  }
  return value
}
