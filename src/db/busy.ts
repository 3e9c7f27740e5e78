import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'

/** Another connection holds the file's write lock (SQLITE_BUSY and its kin). */
export const isBusy = (error: unknown): boolean =>
  error instanceof Database.SqliteError && error.code.startsWith('SQLITE_BUSY')

/**
 * Runs `write` once the file's lock is free, retrying with short waits (1, 2, 4 … 25 ms) up to `timeoutMs`.
 * For connections whose busy timeout is 0 on an event loop: SQLite's own busy handler would sleep with the
 * loop stopped.
 */
export async function whenFree<T>(write: () => T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, 25)) {
    await sleep(waitMs)
    try {
      return write()
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error
    }
  }
}

/** `write` now, or once the lock is free when it is held. */
export async function writeWhenFree<T>(write: () => T, timeoutMs = 5000): Promise<T> {
  try {
    return write()
  } catch (error) {
    if (!isBusy(error)) throw error
    return whenFree(write, timeoutMs)
  }
}
