import type { Db } from './open.js'

/**
 * Tells whether the main database may have changed since the last call, so that what a process keeps in
 * memory can be dropped at once: `data_version` moves on a commit by any other connection or process,
 * `total_changes()` on one by this connection. A few µs (a read of the file's header under its lock).
 */
export function watchChanges(db: Db): () => boolean {
  const version = db.prepare('SELECT data_version, total_changes() FROM pragma_data_version').raw()
  let seenVersion = -1
  let seenChanges = -1
  return () => {
    const [dataVersion, changes] = version.get() as [number, number]
    if (dataVersion === seenVersion && changes === seenChanges) return false
    seenVersion = dataVersion
    seenChanges = changes
    return true
  }
}
