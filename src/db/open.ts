import Database from 'better-sqlite3'
import { liveDatabasePath, openLiveFile } from './live.js'
import { migrate, type Step } from './migrate.js'
import { closingOnError, type Db, type OpenOptions, openSqliteFile } from './sqlite.js'

export { Db, type OpenOptions } from './sqlite.js'

/**
 * Page size of a new main file. Directory resources are 1.5-3 KB of JSON each, which 4 KiB pages hold one
 * or two at a time, a fifth of each page left empty; 16 KiB pages waste less, and a bulk import writes and
 * checkpoints a quarter as many pages. The live file keeps SQLite's 4 KiB: its writes are small rows.
 */
const MAIN_PAGE_SIZE = 16_384

/** The schema steps of both files of a store, as the composition root gathers them from every domain. */
export interface StoreSchema {
  main: readonly Step[]
  live: readonly Step[]
}

/**
 * Opens the main database in WAL mode and brings its schema up to date. Safe for several processes at once.
 * Steps that move tables into the live database (src/db/live.ts) create and migrate that file first.
 */
export function openMainFile(path: string, schema: StoreSchema, options: OpenOptions = {}): Db {
  const db = openSqliteFile(path, options, MAIN_PAGE_SIZE)
  if (!options.readonly) {
    let livePath: string | undefined
    closingOnError(db, () =>
      migrate(db, schema.main, {
        livePath: () => {
          if (livePath === undefined) {
            openLiveFile({ db: path }, schema.live, options).close()
            livePath = liveDatabasePath(path)
          }
          return livePath
        },
      }),
    )
  }
  return db
}

/** The two files of one store: `db` (main: accounts, domain data) and `live` (what each request writes). */
export interface Store {
  db: Db
  live: Db
  close(): void
}

export function openStoreFiles(
  config: { db: string },
  schema: StoreSchema,
  options: OpenOptions = {},
): Store {
  const db = openMainFile(config.db, schema, options)
  const live = closingOnError(db, () => openLiveFile(config, schema.live, options))
  return {
    db,
    live,
    close() {
      live.close()
      db.close()
    },
  }
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CORRUPT|NOTADB|CANTOPEN|FULL|PROTOCOL|READONLY)/

/** SQLite's words for a store error with its code: `database or disk is full (SQLITE_FULL)`. */
export function describeStoreError(error: unknown): string {
  const { message, code } = error as { message?: string; code?: string }
  return `${message}${code ? ` (${code})` : ''}`
}

/** True when an error means the store cannot be read or written right now, as opposed to a bug. */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) {
    return error instanceof TypeError && /database connection is not open/.test(error.message)
  }
  return UNAVAILABLE_CODES.test(error.code)
}
