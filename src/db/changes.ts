import type { Db } from './sqlite.js'

interface Watch {
  read: () => [dataVersion: number, changes: number]
  changes: () => number
  dataVersion: number
  totalChanges: number
  generation: number
  checkedThisTurn: boolean
}

const watches = new WeakMap<Db, Watch>()

function watchOf(db: Db): Watch {
  let watch = watches.get(db)
  if (!watch) {
    // The PRAGMA statement, not the pragma_data_version table joined with total_changes() in one SELECT:
    // that costs about 4.4 µs a read against 2.3 µs for the two statements apart (total_changes() 0.05 µs).
    const version = db.prepare('PRAGMA data_version').pluck()
    const own = db.prepare('SELECT total_changes()').pluck()
    const read = (): [number, number] => [version.get() as number, own.get() as number]
    const [dataVersion, totalChanges] = read()
    watch = {
      read,
      changes: () => own.get() as number,
      dataVersion,
      totalChanges,
      generation: 0,
      checkedThisTurn: false,
    }
    watches.set(db, watch)
  }
  return watch
}

/**
 * A number that moves whenever the database may have changed since it was last read, for in-memory caches
 * of what it holds to know when to forget. `total_changes()` (a commit on this connection) is checked on
 * every call: it costs no file access. `data_version` (a commit by any other connection or process: an
 * import, `svc keys revoke`) opens a read transaction on the file, a few µs of locking, so it is read once
 * per event-loop turn: whatever is handled in a later turn than another process's commit sees it; work
 * already under way in that turn (requests on the wire, a batch's entries) answers as it would have just before.
 */
export function changeGeneration(db: Db): number {
  const watch = watchOf(db)
  let dataVersion = watch.dataVersion
  let totalChanges: number
  if (watch.checkedThisTurn) {
    totalChanges = watch.changes()
  } else {
    watch.checkedThisTurn = true
    setImmediate(() => {
      watch.checkedThisTurn = false
    })
    ;[dataVersion, totalChanges] = watch.read()
  }
  if (dataVersion !== watch.dataVersion || totalChanges !== watch.totalChanges) {
    watch.dataVersion = dataVersion
    watch.totalChanges = totalChanges
    watch.generation++
  }
  return watch.generation
}
