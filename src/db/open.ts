import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { migrate } from './migrate.js'

export type Db = Database.Database

export interface OpenOptions {
  /** Open without writing anything, migrations included (for `svc top` and read-only tools). */
  readonly?: boolean
  /** How long a statement waits for another process's write lock before failing. */
  busyTimeoutMs?: number
}

/** Opens the store in WAL mode and brings its schema up to date. Safe for several processes at once. */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (!options.readonly && path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, {
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
  })
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
  if (!options.readonly) {
    db.pragma('journal_mode = WAL')
    // In WAL mode NORMAL survives a process crash; only an OS crash can lose the last commits.
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    migrate(db)
  }
  return db
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CORRUPT|NOTADB|CANTOPEN|FULL|PROTOCOL|READONLY)/

/** True when an error means the store cannot be read or written right now, as opposed to a bug. */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) {
    return error instanceof TypeError && /database connection is not open/.test(error.message)
  }
  return UNAVAILABLE_CODES.test(error.code)
}

const statements = new WeakMap<Db, Map<string, Database.Statement>>()

/** A statement prepared once per connection: preparing costs more than running a simple query. */
export function cachedStatement(db: Db, sql: string): Database.Statement {
  let cache = statements.get(db)
  if (!cache) {
    cache = new Map()
    statements.set(db, cache)
  }
  let statement = cache.get(sql)
  if (!statement) {
    statement = db.prepare(sql)
    cache.set(sql, statement)
  }
  return statement
}
