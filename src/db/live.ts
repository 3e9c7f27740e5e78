import { extname } from 'node:path'
import { migrate, type Step } from './migrate.js'
import { closingOnError, type Db, type OpenOptions, openSqliteFile } from './sqlite.js'

/**
 * The live database holds what every request writes: usage counters, the request log and keys' last use.
 * It is a file of its own next to the main one, so that an import holding the main file's write lock for
 * minutes never makes a request wait. It records its own schema steps.
 *
 * Its path follows the main one: `data/svc.db` → `data/svc.live.db` (`store` → `store.live`).
 */
export function liveDatabasePath(mainPath: string): string {
  const extension = extname(mainPath)
  return `${mainPath.slice(0, mainPath.length - extension.length)}.live${extension}`
}

/**
 * Opens the live database of the store whose main file is `config.db`, bringing its schema up to date
 * (`steps`) unless read-only. `svc top` opens it read-only to read `request_log` and `usage_counters`.
 */
export function openLiveFile(config: { db: string }, steps: readonly Step[], options: OpenOptions = {}): Db {
  const db = openSqliteFile(liveDatabasePath(config.db), options)
  if (!options.readonly) closingOnError(db, () => migrate(db, steps))
  return db
}
