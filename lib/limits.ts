// Every bound on what one request may ask of the server (decision D38), in one place: defaults,
// the config keys that change them (`limits: {...}` and the older top-level `maxLimit` /
// `maxUploadSize`), and the ceilings no config may pass, because past them the databases or the
// event loop fail in ways a caller must never be able to trigger.

export interface Limits {
  /** Rows of one read when `limit` is larger or missing (decision D7). */
  maxLimit: number
  /** Characters of one caller expression (where, set, select/returning list). */
  expressionLength: number
  /** Columns of one select or returning list. */
  columns: number
  /** Relation subqueries of one select or returning list: every level of every expansion counts one. */
  relations: number
  /**
   * Full-text searches (`@@`) in the caller text of one request, wherever they appear. A search that
   * does not drive its statement (decision D77) builds the set of every match in each statement; on
   * SQLite that set, not the words, is what a search costs (decision D85).
   */
  searches: number
  /** Terms of one order or group list. */
  orderTerms: number
  /** Rows x columns of one answer. */
  cells: number
  /** Rows of one insert. */
  writeRows: number
  /** Bytes of a JSON or urlencoded body. */
  bodySize: number
  /** Bytes of one uploaded file. */
  uploadSize: number
  /** File parts of one multipart body. */
  files: number
  /** Non-file parts of one multipart body. */
  fields: number
  /** Milliseconds one statement run for a caller may take on PostgreSQL before it is cancelled. */
  statementTimeout: number
  /**
   * Milliseconds a connection stays open, reading and discarding, after an answer sent before its
   * request's body had arrived (decision D91); `lingerBytes` bounds what it reads meanwhile.
   */
  lingerTime: number
  /** Thumbnails one instance makes at once (decision D123): each holds one of libuv's 4 threads while it runs. */
  thumbnails: number
  /** Thumbnails waiting for a turn; one more is `503`. */
  thumbnailQueue: number
  /** Pixels (as the image's header says) of an image a thumbnail is made of; more is refused before decoding. */
  thumbnailPixels: number
  /** Milliseconds making one thumbnail may take (rounded up to whole seconds: libvips counts seconds). */
  thumbnailTimeout: number
}

export const DEFAULT_LIMITS: Readonly<Limits> = {
  maxLimit: 1000,
  expressionLength: 1000,
  columns: 100,
  // The most expensive request this allows (a full page of three-level chains) stays near 100 ms on
  // 10,000 rows on both dialects (bench/expand.mjs measures it).
  relations: 6,
  // The most expensive request one search allows stays near 100 ms on 100,000 rows (bench/search.mjs).
  searches: 1,
  orderTerms: 16,
  cells: 100_000,
  writeRows: 20_000,
  bodySize: 1024 * 1024,
  uploadSize: 10 * 1024 * 1024,
  files: 10,
  fields: 200,
  statementTimeout: 5000,
  // nginx's lingering_time: long enough for a client that reads only once it has sent everything
  // (browsers) to finish a body of `lingerBytes` over a slow uplink, and no longer than Fastify keeps
  // an idle connection open anyway (72 s).
  lingerTime: 30_000,
  // Two of libuv's four threads: file reads and writes keep the other two.
  thumbnails: 2,
  thumbnailQueue: 64,
  // A 24-megapixel camera photo fits; decoded it holds about 100 MB.
  thumbnailPixels: 25_000_000,
  thumbnailTimeout: 10_000
}

/**
 * Highest value a config may set. SQLite refuses more than 2000 result columns and PostgreSQL 1664;
 * expression texts stay small enough that their bound values fit either database's parameter limit.
 */
export const LIMIT_CEILINGS: Readonly<Partial<Limits>> = {
  expressionLength: 10_000,
  columns: 1000,
  orderTerms: 100,
  relations: 100,
  searches: 16,
  // PostgreSQL's statement_timeout is an int of milliseconds.
  statementTimeout: 2_147_483_647,
  // setTimeout's largest delay.
  lingerTime: 2_147_483_647,
  thumbnailTimeout: 2_147_483_647,
  // libuv's pool has 4 threads by default: past that, file reads wait behind thumbnails.
  thumbnails: 16,
  // 100 megapixels decode to about 400 MB.
  thumbnailPixels: 100_000_000
}

/** Expression nesting the parser accepts (brackets, operators, calls): keeps recursion and SQL depth bounded. */
export const MAX_EXPRESSION_DEPTH = 200
/** Levels of relation expansion in one select or returning list (`users(name, orgs(name))` is two). */
export const MAX_EXPAND_DEPTH = 3
/**
 * Relation hops (`post_id.owner_id.role` is two) in one path, in one expression (with the rules a
 * caller's path brings in), and in all the expressions one operation compiles: each hop is one
 * indexed lookup per row it is read on (decision D95).
 */
export const MAX_PATH_HOPS = 4
export const MAX_EXPRESSION_HOPS = 8
export const MAX_REQUEST_HOPS = 24
/** Items of one `in (...)` list. */
export const MAX_IN_ITEMS = 1000
/** Dot-separated levels of a multipart field name (`values.meta.a`). */
export const MAX_FIELD_NAME_DEPTH = 4

export interface LimitSettings {
  maxLimit?: number
  maxUploadSize?: number
  limits?: Partial<Limits>
}

export function resolveLimits (settings: LimitSettings): Limits {
  return {
    ...DEFAULT_LIMITS,
    ...(settings.maxLimit === undefined ? {} : { maxLimit: settings.maxLimit }),
    ...(settings.maxUploadSize === undefined ? {} : { uploadSize: settings.maxUploadSize }),
    ...settings.limits
  }
}

/**
 * Bytes the server reads and discards after an early answer before it closes the connection
 * (decision D91): as much as the largest body fastbase accepts can carry (its files at `uploadSize`,
 * its fields at `bodySize`), and `bodySize` again for part headers and boundaries. A client sending
 * no more than that receives the answer even if it reads only once it has sent everything.
 */
export function lingerBytes (limits: Limits): number {
  return limits.files * limits.uploadSize + 2 * limits.bodySize
}

/** The most rows an answer with `columns` columns may carry. */
export function rowsFor (limits: Limits, columns: number): number {
  return Math.max(1, Math.floor(limits.cells / Math.max(1, columns)))
}
