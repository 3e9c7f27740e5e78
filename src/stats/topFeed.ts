import { existsSync } from 'node:fs'
import { liveDatabasePath } from '../db/live.js'
import { type Db, isStoreUnavailable } from '../db/open.js'
import { openSqliteFile } from '../db/sqlite.js'
import { emptySnapshot, TopReader, type TopSnapshot, type TopSources } from './topSnapshot.js'

/**
 * Opens the store read-only for `svc top`: it never creates, migrates or writes the file, so watching
 * cannot slow or change the server. Undefined while the file does not exist yet.
 */
export function openTopSources(dbPath: string): (TopSources & { close(): void }) | undefined {
  if (!existsSync(dbPath)) return undefined
  let main: Db
  try {
    main = openSqliteFile(dbPath, { readonly: true })
  } catch (error) {
    if (isStoreUnavailable(error)) return undefined
    throw error
  }
  // Requests and usage counters are in the live file next to the main one (src/db/live.ts). A store made
  // before the live file existed, and not opened by a server since, still has them in the main file.
  if (!existsSync(liveDatabasePath(dbPath))) return { main, live: main, close: () => main.close() }
  let live: Db
  try {
    live = openSqliteFile(liveDatabasePath(dbPath), { readonly: true })
  } catch (error) {
    main.close()
    if (isStoreUnavailable(error)) return undefined
    throw error
  }
  return {
    main,
    live,
    close: () => {
      live.close()
      main.close()
    },
  }
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
    if (!this.#sources) {
      this.#sources = openTopSources(this.dbPath)
      this.#reader = this.#sources && new TopReader(this.#sources)
    }
    if (!this.#reader) return this.#last ?? emptySnapshot(now, 'waiting', filter)
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
