import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

export interface OpenOptions {
  /** Open without writing anything, migrations included (for `svc top` and read-only tools). */
  readonly?: boolean
  /** How long a statement waits for another process's write lock before failing. */
  busyTimeoutMs?: number
}

/** What a connection knows of the file's changes: see `changeGeneration`. */
interface ChangeWatch {
  read: () => [dataVersion: number, changes: number]
  changes: () => number
  dataVersion: number
  totalChanges: number
  generation: number
  checkedThisTurn: boolean
}

/**
 * A connection to one svc SQLite file, with what belongs to the connection kept on it rather than in
 * module-level maps: its prepared statements and what it knows of the file's changes.
 */
export class Db extends Database {
  readonly #statements = new Map<string, Database.Statement>()
  #watch: ChangeWatch | undefined
  readonly #onClose: (() => void)[] = []

  /** Runs `release` when the connection closes: what is held for it (a descriptor, say) goes with it. */
  onClose(release: () => void): void {
    this.#onClose.push(release)
  }

  override close(): this {
    for (const release of this.#onClose.splice(0)) release()
    return super.close()
  }

  /** A statement prepared once per connection: preparing costs more than running a simple query. */
  statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  /**
   * A number that moves whenever the database may have changed since it was last read, for in-memory caches
   * of what it holds to know when to forget. `total_changes()` (a commit on this connection) is checked on
   * every call: it costs no file access. `data_version` (a commit by any other connection or process: an
   * import, `svc keys revoke`) opens a read transaction on the file, a few µs of locking, so it is read once
   * per event-loop turn: whatever is handled in a later turn than another process's commit sees it; work
   * already under way in that turn (requests on the wire, a batch's entries) answers as it would have just
   * before.
   */
  changeGeneration(): number {
    const watch = (this.#watch ??= this.#startWatch())
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

  #startWatch(): ChangeWatch {
    // The PRAGMA statement, not the pragma_data_version table joined with total_changes() in one SELECT:
    // that costs about twice as much as the two statements apart.
    const version = this.prepare('PRAGMA data_version').pluck()
    const own = this.prepare('SELECT total_changes()').pluck()
    const read = (): [number, number] => [version.get() as number, own.get() as number]
    const [dataVersion, totalChanges] = read()
    return {
      read,
      changes: () => own.get() as number,
      dataVersion,
      totalChanges,
      generation: 0,
      checkedThisTurn: false,
    }
  }
}

/** Opens one SQLite file with the pragmas every svc file uses (WAL when writable); its schema is left alone. */
export function openSqliteFile(path: string, options: OpenOptions = {}, pageSize?: number): Db {
  const readonly = options.readonly ?? false
  if (!readonly) mkdirSync(dirname(path), { recursive: true })
  const db = new Db(path, { readonly, fileMustExist: readonly })
  // The first statement reads the file's header: a file that is not a database fails here, not above.
  closingOnError(db, () => {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
    if (!readonly) {
      // Only a new file takes it: an existing one keeps the page size it was made with.
      if (pageSize !== undefined) db.pragma(`page_size = ${pageSize}`)
      db.pragma('journal_mode = WAL')
      // In WAL mode NORMAL survives a process crash; only an OS crash can lose the last commits.
      db.pragma('synchronous = NORMAL')
      db.pragma('foreign_keys = ON')
    }
  })
  return db
}

/** `work`'s result; `db` is closed when it throws, so that a file that cannot be set up is not left open. */
export function closingOnError<T>(db: Database.Database, work: () => T): T {
  try {
    return work()
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * Runs `work`, which may await (a download streaming into it), in one IMMEDIATE transaction: committed when it
 * ends, rolled back when it throws. SQLite has rolled back already after some errors (a full disk, an I/O
 * error); rolling back again would fail and hide the error that matters.
 */
export async function inTransaction<T>(db: Database.Database, work: () => Promise<T>): Promise<T> {
  db.exec('BEGIN IMMEDIATE')
  try {
    const result = await work()
    db.exec('COMMIT')
    return result
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    throw error
  }
}
