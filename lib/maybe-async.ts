// Values that are ready now or later. SQLite answers synchronously and PostgreSQL asynchronously:
// passing a ready value through without a promise lets a SQLite read reach its answer with no
// promise, no await and no microtask per layer (decision D109).

export type MaybePromise<T> = T | Promise<T>

/** `f(value)`, now when the value is ready, else once it is (native promises only: the drivers' and async functions'). */
export function andThen<T, U> (value: MaybePromise<T>, f: (ready: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value)
}
