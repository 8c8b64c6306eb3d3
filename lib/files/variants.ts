// Where a file's thumbnails live, beside it in the same storage: `<key>.thumbs/<size>`. A stored
// name is one key segment, so no download (one segment after the table's folder) can name a
// variant, and no variant folder can be another file's. Deleting a file deletes its variants:
// every deletion goes through `withVariantCleanup`, so rows replaced, cleared or deleted, failed
// writes and held deletions (backups) all take their thumbnails with them.
import type { Storage } from './storage/types.js'

const VARIANTS_SUFFIX = '.thumbs'

/** The folder of `key`'s variants (a prefix for `storage.list`). */
export function variantPrefix (key: string): string {
  return `${key}${VARIANTS_SUFFIX}/`
}

/** The key of `key`'s variant of one listed size (`100x100`). */
export function variantKey (key: string, size: string): string {
  return variantPrefix(key) + size
}

/** `storage` whose `delete` also removes the variants of each key (listed, so sizes dropped from the config go too). */
export function withVariantCleanup<S extends Storage> (storage: S): S {
  return {
    ...storage,
    kind: storage.kind,
    async delete (keys) {
      // Variants first: a file that is gone never leaves variants behind, even if this fails half way.
      const variants = await Promise.all(keys.map(async (key) => (await storage.list(variantPrefix(key))).map((o) => o.key)))
      const all = variants.flat()
      if (all.length > 0) await storage.delete(all)
      await storage.delete(keys)
    }
  }
}
