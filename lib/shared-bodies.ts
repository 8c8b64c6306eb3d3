// One Buffer per file content, shared by every answer that sends it (plugins/lazy-routes.ts, decision
// D136). Those answers are held whole while they are sent, so a slow reader would otherwise keep a copy
// of its own for as long as it reads; sharing bounds what they hold together by the files there are.
// Keyed by the ETag and compared byte for byte: npm packs every file with one mtime, so two files of
// one size carry the same @fastify/static ETag.

export class SharedBodies {
  readonly #byTag = new Map<string, Buffer[]>()

  /** The Buffer already held with `body`'s bytes under `tag`, or `body`, now held; `body` itself without a tag. */
  of (tag: unknown, body: Buffer): Buffer {
    if (typeof tag !== 'string') return body
    const held = this.#byTag.get(tag)
    if (held === undefined) {
      this.#byTag.set(tag, [body])
      return body
    }
    const same = held.find((known) => known.equals(body))
    if (same !== undefined) return same
    held.push(body)
    return body
  }
}
