import { existsSync } from 'node:fs'
import { liveDatabasePath } from '../db/live.js'
import { describeStoreError, isStoreUnavailable } from '../db/open.js'
import { closingOnError, openSqliteFile } from '../db/sqlite.js'
import { emptySnapshot, TopReader, type TopSnapshot, type TopSources } from './topSnapshot.js'

/**
 * Opens the store read-only for `svc top`: it never creates, migrates or writes the file, so watching
 * cannot slow or change the server. Undefined while the file does not exist yet; throws what SQLite says
 * when it is there but cannot be read.
 */
export function openTopSources(dbPath: string): (TopSources & { close(): void }) | undefined {
  if (!existsSync(dbPath)) return undefined
  const main = openSqliteFile(dbPath, { readonly: true })
  return closingOnError(main, () => {
    // Opening reads nothing: the first read says whether the file is a database at all.
    main.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').get()
    // Requests and usage counters are in the live file next to the main one (src/db/live.ts). A store made
    // before the live file existed, and not opened by a server since, still has them in the main file.
    if (!existsSync(liveDatabasePath(dbPath))) return { main, live: main, close: () => main.close() }
    const live = openSqliteFile(liveDatabasePath(dbPath), { readonly: true })
    return {
      main,
      live,
      close: () => {
        live.close()
        main.close()
      },
    }
  })
}

/**
 * Snapshots of one store, second after second: waits for the file when it does not exist yet, and reopens
 * it when it stops being readable (replaced, deleted), showing the last snapshot meanwhile.
 */
export class TopFeed {
  #sources: ReturnType<typeof openTopSources>
  #reader: TopReader | undefined
  #last: TopSnapshot | undefined

  constructor(private readonly dbPath: string) {}

  read(now: number, filter: string | null = null): TopSnapshot {
    let problem: string | undefined
    if (!this.#sources) {
      try {
        this.#sources = openTopSources(this.dbPath)
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error
        problem = describeStoreError(error)
      }
      this.#reader = this.#sources && new TopReader(this.#sources)
    }
    if (!this.#reader) return this.#last ?? { ...emptySnapshot(now, 'waiting', filter), problem }
    try {
      this.#last = this.#reader.read(now, filter)
      return this.#last
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error
      this.close()
      return this.#last ?? emptySnapshot(now, 'waiting', filter)
    }
  }

  close(): void {
    this.#sources?.close()
    this.#sources = undefined
    this.#reader = undefined
  }
}
