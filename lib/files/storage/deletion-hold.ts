// Deletions held while a backup copies the files: a row in the database snapshot may name a file a
// request deletes (its row updated or deleted after the snapshot) before the copy reaches it. While a
// hold is on, deletions are queued and run when the last hold is released, so every file the snapshot
// references is still there to be archived.
import type { Storage } from './types.js'

export interface HoldableStorage extends Storage {
  /** Queues deletions until the returned function is called (holds nest). */
  holdDeletions: () => () => Promise<void>
}

export function withDeletionHold (storage: Storage): HoldableStorage {
  let holds = 0
  const queued = new Set<string>()
  return {
    ...storage,
    kind: storage.kind,
    async delete (keys) {
      if (holds === 0) return await storage.delete(keys)
      for (const key of keys) queued.add(key)
    },
    holdDeletions () {
      holds++
      let released = false
      return async () => {
        if (released) return
        released = true
        if (--holds > 0 || queued.size === 0) return
        const keys = [...queued]
        queued.clear()
        await storage.delete(keys)
      }
    }
  }
}
