import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

export type Db = Database.Database

export interface OpenOptions {
  /** Open without writing anything, migrations included (for `svc top` and read-only tools). */
  readonly?: boolean
  /** How long a statement waits for another process's write lock before failing. */
  busyTimeoutMs?: number
}

/** Opens one SQLite file with the pragmas every svc file uses (WAL when writable); its schema is left alone. */
export function openSqliteFile(path: string, options: OpenOptions = {}, pageSize?: number): Db {
  const readonly = options.readonly ?? false
  if (!readonly) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { readonly, fileMustExist: readonly })
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
  if (!readonly) {
    // Only a new file takes it: an existing one keeps the page size it was made with.
    if (pageSize !== undefined) db.pragma(`page_size = ${pageSize}`)
    db.pragma('journal_mode = WAL')
    // In WAL mode NORMAL survives a process crash; only an OS crash can lose the last commits.
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
  }
  return db
}
