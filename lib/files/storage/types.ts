// The one interface both storage drivers (local directory, S3-compatible bucket) implement, so the
// file routes never know where bytes live.

export interface StoredObject { key: string, size: number, contentType: string, etag: string, lastModified: Date }

export interface Storage {
  readonly kind: 'local' | 's3'
  /** Streams `body` to `key` (never buffering the whole object). Rejects (and leaves nothing behind) if the stream errors. */
  put (key: string, body: NodeJS.ReadableStream, meta: { contentType: string }): Promise<StoredObject>
  /** undefined when missing. */
  stat (key: string): Promise<StoredObject | undefined>
  /**
   * A stream of the object, or of bytes start..end inclusive. The caller clamps the range to the
   * size from `stat`. A missing key rejects with code `FB_ERR_NOT_FOUND`.
   */
  read (key: string, range?: { start: number, end: number }): Promise<NodeJS.ReadableStream>
  /**
   * Every object whose key starts with `prefix` (a folder, ending in `/`), in no particular order.
   * Callers keep what they store under one prefix few enough to list at once (backups: a handful).
   */
  list (prefix: string): Promise<StoredObject[]>
  /** Deletes; missing keys are not an error. */
  delete (keys: string[]): Promise<void>
  close (): Promise<void>
}
